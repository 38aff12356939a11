/**
 * `npx toolsmith export RUN --to trackio`: the run (native or imported) written into Trackio's local store by
 * Trackio's own client (trackio_writer.py under the trainer's interpreter, which set-up gives the pinned `trackio`).
 * The records (contracts/tracker-export.ts) are streamed a line each, trajectories read a page at a time, so a run of
 * any size exports in bounded memory.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { once } from 'node:events';
import { UserError } from '../../contracts/errors.ts';
import {
  metricsByStep,
  runRecord,
  type TrackerRecord,
  type TrackerTrajectoryRow,
  trajectoryTrace,
} from '../../contracts/tracker-export.ts';
import type { Database } from '../../server/db/client.ts';
import { listMetricKeys, readSeriesOfKeys } from '../../server/store/metrics.ts';
import { getRunOrThrow } from '../../server/store/runs.ts';
import { listRunTrajectoryContents } from '../../server/store/trajectories.ts';
import { trainerPython } from '../trainer/python.ts';

const WRITER = path.join(import.meta.dirname, 'trackio_writer.py');
const PAGE = 200;

export interface TrackioExport {
  project: string;
  run: string;
  dir: string;
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

export async function exportRunToTrackio(
  db: Database,
  runId: string,
  opts: { project: string; dir?: string },
): Promise<TrackioExport> {
  const py = trainerPython();
  const child = spawn(py, [WRITER], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...(opts.dir ? { TRACKIO_DIR: path.resolve(opts.dir) } : {}) },
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
          fix: 'run `node scripts/setup.mjs` (it builds .venv, with trackio) or set TOOLSMITH_TRAINER_PYTHON',
        })
      : error;
  return parseAnswer(stdout, code, stderr);
}

function parseAnswer(stdout: string, code: number | null, stderr: string): TrackioExport {
  let answer: { error?: { field: string; message: string } } & Partial<TrackioExport>;
  try {
    answer = JSON.parse(stdout.trim().split('\n').pop() ?? '');
  } catch {
    const why = stderr.trim().split('\n').filter(Boolean).pop() ?? '';
    throw new Error(`trackio_writer.py failed (exit ${code})${why ? `: ${why}` : ''}`);
  }
  if (answer.error) throw new UserError(answer.error.message, { field: answer.error.field });
  return answer as TrackioExport;
}
