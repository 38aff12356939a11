import fs from 'node:fs';
import type { Command } from './command.ts';
import { parseFlags } from './args.ts';
import { config } from '../server/config.ts';
import { openDatabase, type Database } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { UserError } from '../contracts/errors.ts';
import type { RunPlacement } from '../contracts/jobs.ts';
import { seedDefaultRecipes } from '../server/store/recipes.ts';
import { readEvents } from '../server/store/events.ts';
import { getRunOrThrow } from '../server/store/runs.ts';
import { runReport } from '../server/store/run-report.ts';
import { formatRunReport } from './run-report.ts';
import { isFinished } from '../contracts/runs.ts';
import type { RunEventType } from '../contracts/events.ts';
import { launchTraining, resumeTraining, type RecipeRef } from '../server/lifecycle.ts';

/** `npx toolsmith train`: run a recipe (in this process by default) with a progress bar. */
export const trainCommand: Command = {
  name: 'train',
  summary: 'train a recipe (SFT, then GRPO-RoC stages) with a progress bar; resumable after a crash or Ctrl-C',
  usage: `--recipe NAME[@VERSION] | --file recipe.json | --resume RUN_ID   [--seed S] [--name N] [--queue] [--cluster ray]
       --report RUN_ID

  --recipe   a stored recipe (npm start seeds "embedded-arith"); --file: a recipe JSON (stored as a new version)
  --resume   continue a run from its last checkpoint (after Ctrl-C, a crash, or a pause)
  --queue    leave the run to the workers (npm start runs one) and only show its progress
  --cluster  ray: run it on the Ray cluster of TOOLSMITH_RAY_ADDRESS (submitted as a Ray job, trainer ranks placed
             there; this process or a worker follows it); local (default): here
  --report   a run's stage table (printed at the end of every run too): each stage's steps and wall time, its
             evaluation with 95% intervals, the paired difference from the first evaluation to the last, the
             commit and seed that produced it
Ctrl-C stops at the current step; the run keeps its checkpoints and continues with --resume RUN_ID.`,
  async run(args) {
    const f = parseFlags(args, {
      recipe: 'string',
      file: 'string',
      resume: 'string',
      seed: 'number',
      name: 'string',
      queue: 'boolean',
      report: 'string',
      cluster: 'string',
    });
    if (f.cluster !== undefined && f.cluster !== 'local' && f.cluster !== 'ray')
      throw new UserError(`--cluster: expected "local" or "ray", not "${f.cluster}"`, { field: '--cluster' });
    if ([f.recipe, f.file, f.resume, f.report].filter(Boolean).length !== 1)
      throw new UserError(
        'train needs exactly one of --recipe NAME, --file recipe.json, --resume RUN_ID or --report RUN_ID',
      );
    const url = config().databaseUrl;
    await migrate(url);
    const db = await openDatabase(url);
    try {
      if (f.report) {
        console.log(formatRunReport(await runReport(db, f.report as string)));
        return 0;
      }
      await seedDefaultRecipes(db);
      let runId: string;
      let jobId: string;
      if (f.resume) {
        // The lifecycle's rules (as the Resume button); an unfinished job is attached to and run here.
        ({ jobId } = await resumeTraining(db, f.resume as string, { attach: true }));
        runId = f.resume as string;
      } else {
        let ref: RecipeRef;
        if (f.file) {
          if (!fs.existsSync(f.file as string)) throw new UserError(`--file: no such file ${f.file}`);
          let spec: unknown;
          try {
            spec = JSON.parse(fs.readFileSync(f.file as string, 'utf8'));
          } catch (e) {
            throw new UserError(`--file: ${f.file} is not JSON (${(e as Error).message})`);
          }
          ref = { spec };
        } else {
          const [name, v] = String(f.recipe).split('@');
          ref = { name: name!, version: v ? Number(v) : undefined };
        }
        ({ runId, jobId } = await launchTraining(db, ref, {
          name: f.name as string | undefined,
          seed: f.seed as number | undefined,
          cluster: f.cluster as RunPlacement | undefined,
        }));
      }
      console.log(`training run ${runId}${f.queue ? ' (queued for the workers)' : ''}`);
      if (f.queue) return await watch(db, runId);
      const { handlers } = await import('../workers/handlers/index.ts');
      const { Worker } = await import('../workers/worker.ts');
      const cfg = config();
      const worker = new Worker(db, handlers(), {
        id: `cli-${process.pid}`,
        leaseMs: cfg.leaseSeconds * 1000,
        heartbeatMs: cfg.heartbeatSeconds * 1000,
        pollMs: 200,
        shutdownGraceMs: cfg.shutdownGraceSeconds * 1000,
        jobIds: [jobId],
        log: () => {},
      });
      const done = worker.start();
      let interrupted = false;
      const onSig = () => {
        interrupted = true;
        console.log(`\nstopping; continue later with: npx toolsmith train --resume ${runId}`);
        void worker.stop();
      };
      process.once('SIGINT', onSig);
      try {
        const code = await watch(db, runId, () => interrupted);
        await worker.stop();
        await done;
        return code;
      } finally {
        process.off('SIGINT', onSig);
      }
    } finally {
      await db.close();
    }
  },
};

/** Event types the progress view prints as lines of their own. */
const SHOWN = ['stage', 'eval', 'filter', 'resume', 'trainer_error'] as const satisfies readonly RunEventType[];

/** Follow a run: a progress bar on a terminal (a line per 5% otherwise), warnings and stage changes, the final evals. */
async function watch(db: Database, runId: string, stopped: () => boolean = () => false): Promise<number> {
  const tty = process.stdout.isTTY;
  let cursor = 0;
  let lastPct = -1;
  let lastLine = '';
  const t0 = Date.now();
  for (;;) {
    const run = await getRunOrThrow(db, runId);
    for (const e of await readEvents(db, runId, cursor, 1000)) {
      cursor = e.seq;
      if ((SHOWN as readonly string[]).includes(e.type) || e.level === 'warn' || e.level === 'error') {
        if (tty && lastLine) process.stdout.write('\n');
        console.log(e.message);
        lastLine = '';
      } else if (e.type === 'step' || /^sft step/.test(e.message)) lastLine = e.message;
    }
    const total = run.totalSteps ?? 0;
    const pct = total ? Math.floor((100 * run.step) / total) : 0;
    const elapsed = (Date.now() - t0) / 1000;
    const bar = `[${'#'.repeat(Math.floor(pct / 4)).padEnd(25, '.')}] ${String(pct).padStart(3)}%  step ${run.step}/${total}  ${run.stageName ?? ''}  ${Math.round(elapsed)} s`;
    if (tty) process.stdout.write(`\r${bar}  ${lastLine.slice(0, 60)}`.padEnd(140));
    else if (pct >= lastPct + 5) {
      console.log(bar);
      lastPct = pct;
    }
    if (isFinished(run.status) || run.status === 'paused' || (stopped() && run.status === 'queued')) {
      if (tty) process.stdout.write('\n');
      console.log(`run ${run.status}${run.error ? `: ${run.error}` : ''}`);
      if (run.status === 'succeeded') console.log(`\n${formatRunReport(await runReport(db, runId))}`);
      return run.status === 'succeeded' ? 0 : 1;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
