// Resuming loads only a run's own checkpoints: the path a Checkpoint row names (from the database) is
// resolved after symlinks and must lie, with everything in it, inside <run dir>/checkpoints; a row pointing at another
// run's checkpoint, at any other folder, a link planted in the run's folder that leads out, or a link inside a
// checkpoint are refused with an error naming the checkpoint and the run's folder, and the job fails for good
// (PermanentJobError) before the trainer is asked to load anything.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshDatabase } from '../helpers/db.ts';
import type { Database } from '../../server/db/client.ts';
import { recordCheckpoint } from '../../server/store/checkpoints.ts';
import { Checkpoints } from '../../workers/train/checkpoints.ts';
import type { TrainerClient } from '../../workers/trainer/client.ts';
import { PermanentJobError } from '../../workers/types.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let tmp = '';
before(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ckpt-confine-'));
});
after(async () => {
  await fresh?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A checkpoint directory as the trainer leaves one (the files' contents do not matter here: nothing is loaded). */
function checkpointDir(dir: string) {
  fs.mkdirSync(path.join(dir, 'optimizer'), { recursive: true });
  for (const f of [
    'config.json',
    'model.safetensors',
    'trainer_state.json',
    'optimizer/metadata.json',
    'optimizer/__0_0.distcp',
  ])
    fs.writeFileSync(path.join(dir, f), '{}');
  return dir;
}

// Positions are read through Checkpoints, as the orchestrator does on resume; the trainer is not used by position().
const noTrainer = {} as TrainerClient;
let n = 0;
async function positionOf(recorded: string, runId = `run_c${++n}`) {
  const runDir = path.join(tmp, 'runs', runId);
  const ck = new Checkpoints(db, runId, noTrainer, runDir);
  await recordCheckpoint(db, {
    runId,
    stage: 0,
    step: 7,
    path: recorded.replace('<own>', path.join(runDir, 'checkpoints')),
    sizeBytes: 1,
    metadata: { stage: 0, stageStep: 7, stageDone: false },
  });
  return { runDir, position: () => ck.position() };
}

const refused = (why: RegExp) => (e: unknown) =>
  e instanceof PermanentJobError &&
  /^checkpoint: the checkpoint of step 7 is recorded at /.test(e.message) &&
  why.test(e.message) &&
  /refused \(a run resumes only from its own checkpoint folder, .*checkpoints\)/.test(e.message);

test("the run's own checkpoint resolves (after symlinks) and is what the trainer is given", async () => {
  const { runDir, position } = await positionOf('<own>/step-0000007');
  checkpointDir(path.join(runDir, 'checkpoints', 'step-0000007'));
  const p = await position();
  assert.equal(p.step, 7);
  assert.equal(p.path, fs.realpathSync(path.join(runDir, 'checkpoints', 'step-0000007')));
});

test("a row naming another run's checkpoint, or a folder elsewhere on the host, is refused", async () => {
  const other = await positionOf('<own>/step-0000007', 'run_other');
  const theirs = checkpointDir(path.join(other.runDir, 'checkpoints', 'step-0000007'));
  const { position } = await positionOf(theirs);
  await assert.rejects(position(), refused(/which resolves outside it/));
  const elsewhere = checkpointDir(path.join(tmp, 'elsewhere'));
  await assert.rejects((await positionOf(elsewhere)).position(), refused(/which resolves outside it/));
  // `..` in the recorded path is resolved first.
  const { runDir, position: dotdot } = await positionOf('<own>/../../run_other/checkpoints/step-0000007');
  fs.mkdirSync(path.join(runDir, 'checkpoints'), { recursive: true });
  await assert.rejects(dotdot(), refused(/which resolves outside it/));
  await assert.rejects((await positionOf('<own>/step-0000009')).position(), refused(/which does not exist/));
  await assert.rejects(
    (await positionOf('<own>')).position(),
    refused(/which resolves outside it/),
    'the folder itself is not a checkpoint',
  );
});

test("a link in the run's folder leading out, or a link inside a checkpoint, is refused", async () => {
  const outside = checkpointDir(path.join(tmp, 'planted'));
  const a = await positionOf('<own>/step-0000007');
  fs.mkdirSync(path.join(a.runDir, 'checkpoints'), { recursive: true });
  fs.symlinkSync(outside, path.join(a.runDir, 'checkpoints', 'step-0000007'));
  await assert.rejects(a.position(), refused(/which resolves outside it/));

  const b = await positionOf('<own>/step-0000007');
  const own = checkpointDir(path.join(b.runDir, 'checkpoints', 'step-0000007'));
  fs.rmSync(path.join(own, 'optimizer', 'metadata.json'));
  fs.symlinkSync(path.join(outside, 'optimizer', 'metadata.json'), path.join(own, 'optimizer', 'metadata.json'));
  await assert.rejects(b.position(), refused(/holds optimizer\/metadata\.json, a link that leads outside it/));
  // The same link pointing inside the checkpoint is fine.
  fs.rmSync(path.join(own, 'optimizer', 'metadata.json'));
  fs.symlinkSync(path.join(own, 'config.json'), path.join(own, 'optimizer', 'metadata.json'));
  assert.equal((await b.position()).path, fs.realpathSync(own));
});
