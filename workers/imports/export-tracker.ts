/**
 * `npx toolsmith export RUN --to trackio|mlflow`: the run (native or imported) written into a tracker by the
 * tracker's own client (trackio_writer.py or mlflow_writer.py under the trainer's interpreter, which set-up gives the
 * pinned `trackio` and `mlflow`). The records (contracts/tracker-export.ts) are streamed a line each, trajectories
 * read a page at a time, so a run of any size exports in bounded memory.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { once } from 'node:events';
import { UserError } from '../../contracts/errors.ts';
import {
  metricsByStep,
  runRecord,
  type TrackerRecord,
  type TrackerTarget,
  type TrackerTrajectoryRow,
  trajectoryTrace,
} from '../../contracts/tracker-export.ts';
import type { Database } from '../../server/db/client.ts';
import { listMetricKeys, readSeriesOfKeys } from '../../server/store/metrics.ts';
import { getRunOrThrow } from '../../server/store/runs.ts';
import { listRunTrajectoryContents } from '../../server/store/trajectories.ts';
import { trainerPython } from '../trainer/python.ts';

/** Each tracker's writer and what it is told through its environment. */
const WRITERS: Record<TrackerTarget, { script: string; env: (o: TrackerOptions) => Record<string, string> }> = {
  trackio: {
    script: path.join(import.meta.dirname, 'trackio_writer.py'),
    env: (o): Record<string, string> => (o.dir ? { TRACKIO_DIR: path.resolve(o.dir) } : {}),
  },
  mlflow: {
    script: path.join(import.meta.dirname, 'mlflow_writer.py'),
    env: (o) => ({ MLFLOW_TRACKING_URI: o.trackingUri ?? '' }),
  },
};
const PAGE = 200;

export interface TrackerOptions {
  project: string;
  /** Trackio: its store's folder (its own default when absent). */
  dir?: string;
  /** MLflow: the tracking server's URI. */
  trackingUri?: string;
}

/** What the writer reports: where the run went (`where`: Trackio's folder, MLflow's run URL) and what it wrote. */
export interface TrackerExport {
  project: string;
  run: string;
  where: string;
  metrics: number;
  traces: number;
}

/** Every record of the run, in the order the writer takes them: the header, metrics by step, then the traces. */
async function* runRecords(db: Database, runId: string, project: string): AsyncGenerator<TrackerRecord> {
  const run = await getRunOrThrow(db, runId);
  yield runRecord({ ...run, recipeSpec: JSON.parse(run.recipeSpec || '{}') }, project);
  yield* metricsByStep(await readSeriesOfKeys(db, runId, await listMetricKeys(db, runId)));
  for (let after: string | null = null; ; ) {
    const page = await listRunTrajectoryContents(db, runId, after, PAGE);
    if (page.length === 0) return;
    for (const r of page) yield trajectoryTrace({ ...r, content: JSON.parse(r.content) } as TrackerTrajectoryRow);
    after = page.at(-1)!.id;
  }
}

export async function exportRunToTracker(
  db: Database,
  runId: string,
  target: TrackerTarget,
  opts: TrackerOptions,
): Promise<TrackerExport> {
  const py = trainerPython();
  const writer = WRITERS[target];
  const child = spawn(py, [writer.script], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...writer.env(opts) },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-20_000)));
  const closed = new Promise<{ code: number | null; error?: Error }>((resolve) => {
    child.on('error', (error) => resolve({ code: null, error }));
    child.on('close', (code) => resolve({ code }));
  });
  // The writer may stop reading early (a refusal): EPIPE is that, and its answer says why.
  child.stdin.on('error', () => {});
  try {
    for await (const record of runRecords(db, runId, opts.project)) {
      if (child.stdin.destroyed) break;
      if (!child.stdin.write(`${JSON.stringify(record)}\n`)) await Promise.race([once(child.stdin, 'drain'), closed]);
    }
  } finally {
    child.stdin.end();
  }
  const { code, error } = await closed;
  if (error)
    throw (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? new UserError(`the trainer's Python (${py}) is missing`, {
          fix: 'run `node scripts/setup.mjs` (it builds .venv, with trackio and mlflow) or set TOOLSMITH_TRAINER_PYTHON',
        })
      : error;
  return parseAnswer(path.basename(writer.script), stdout, code, stderr);
}

function parseAnswer(script: string, stdout: string, code: number | null, stderr: string): TrackerExport {
  let answer: { error?: { field: string; message: string } } & Partial<TrackerExport>;
  try {
    answer = JSON.parse(stdout.trim().split('\n').pop() ?? '');
  } catch {
    const why = stderr.trim().split('\n').filter(Boolean).pop() ?? '';
    throw new Error(`${script} failed (exit ${code})${why ? `: ${why}` : ''}`);
  }
  if (answer.error) throw new UserError(answer.error.message, { field: answer.error.field });
  return answer as TrackerExport;
}
