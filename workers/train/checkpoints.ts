/**
 * Durability of a training run: after each RL step (every SFT_CHECKPOINT_EVERY SFT steps, and at each stage's end)
 * the trainer writes a checkpoint directory (HF weights, optimiser through DCP, RNG, step: workers/trainer/checkpoint.py)
 * and a Checkpoint row records where the run was.
 * A resumed attempt starts from the newest one and first deletes what its predecessor stored after it; the path its
 * row names is loaded only if it resolves, after symlinks, inside this run's own checkpoint folder (confinedCheckpoint).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Database } from '../../server/db/client.ts';
import { isInside } from '../../server/models/under-root.ts';
import { deleteAfterStep, latestCheckpoint, recordCheckpoint } from '../../server/store/checkpoints.ts';
import type { Trainer } from '../trainer/types.ts';
import { PermanentJobError } from '../types.ts';
import { mkdirPrivate } from '../../server/db/private-files.ts';

export const SFT_CHECKPOINT_EVERY = 200;
/** Checkpoints kept on disk per run (the newest); rows for older ones stay, their files go. */
const KEEP_CHECKPOINT_FILES = 2;

/** Where in the recipe a checkpoint was taken. */
export interface CkptMeta {
  stage: number;
  stageStep: number;
  stageDone: boolean;
}
export interface Position extends CkptMeta {
  step: number;
  path: string | null;
}

/**
 * The checkpoint directory `recorded` (a row's path), resolved after symlinks; refused unless it and everything in it
 * lie inside `folder` (the run's checkpoints folder): a row pointing at another run's checkpoint or anywhere else
 * on the host, or a link planted to lead there, never reaches the trainer's loader.
 */
export function confinedCheckpoint(folder: string, recorded: string, step: number): string {
  const refuse = (why: string) =>
    new PermanentJobError(
      `checkpoint: the checkpoint of step ${step} is recorded at ${recorded}, which ${why}; refused (a run resumes only from its own checkpoint folder, ${folder})`,
    );
  let root: string;
  let dir: string;
  try {
    root = fs.realpathSync(folder);
    dir = fs.realpathSync(recorded);
  } catch {
    throw refuse('does not exist');
  }
  if (!path.isAbsolute(recorded) || !isInside(root, dir) || dir === root) throw refuse('resolves outside it');
  if (!fs.statSync(dir).isDirectory()) throw refuse('is not a directory');
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const real = fs.realpathSync(p);
      if (!isInside(dir, real)) throw refuse(`holds ${path.relative(dir, p)}, a link that leads outside it`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return dir;
}

export class Checkpoints {
  private readonly dir: string;

  constructor(
    private readonly db: Database,
    private readonly runId: string,
    private readonly trainer: Trainer,
    runDir: string,
  ) {
    this.dir = path.join(runDir, 'checkpoints');
    mkdirPrivate(this.dir);
  }

  /** The last checkpoint of the run, or the start. */
  async position(): Promise<Position> {
    const c = await latestCheckpoint(this.db, this.runId);
    if (!c) return { step: 0, stage: 0, stageStep: 0, stageDone: false, path: null };
    const m = JSON.parse(c.metadata ?? '{}') as CkptMeta;
    return {
      step: c.step,
      stage: m.stage,
      stageStep: m.stageStep,
      stageDone: m.stageDone,
      path: confinedCheckpoint(this.dir, c.path, c.step),
    };
  }

  /** Remove what a crashed attempt stored after the checkpoint it resumes from. */
  rollBack(step: number): Promise<void> {
    return deleteAfterStep(this.db, this.runId, step);
  }

  async save(step: number, meta: CkptMeta): Promise<void> {
    const dir = path.join(this.dir, `step-${String(step).padStart(7, '0')}`);
    const r = await this.trainer.save(dir);
    await recordCheckpoint(this.db, {
      runId: this.runId,
      stage: meta.stage,
      step,
      path: dir,
      sizeBytes: r.bytes,
      metadata: meta,
    });
    const dirs = fs
      .readdirSync(this.dir)
      .filter((f) => /^step-\d+$/.test(f))
      .sort();
    for (const f of dirs.slice(0, -KEEP_CHECKPOINT_FILES))
      fs.rmSync(path.join(this.dir, f), { recursive: true, force: true });
  }
}
