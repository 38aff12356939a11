import type { Database } from '../server/db/client.ts';
import { appendEvent } from '../server/store/events.ts';
import type { Job } from '../server/store/jobs.ts';
import { logMetrics } from '../server/store/metrics.ts';
import { setRunProgress } from '../server/store/runs.ts';
import type { JobContext } from './types.ts';

/**
 * What a handler gets for a job: its events, metrics and progress go to the job's run. The worker builds one per
 * leased job; a run's orchestrator inside a Ray job (cli/ray-entry.ts) builds one for the job its worker follows.
 */
export function jobContext<P = unknown>(
  db: Database,
  job: Job,
  payload: P,
  signal: AbortSignal,
  workerId: string,
): JobContext<P> {
  return {
    job,
    payload,
    db,
    signal,
    workerId,
    log: async (message, opts = {}) => {
      if (job.runId) await appendEvent(db, job.runId, { ...opts, message });
    },
    metrics: async (step, values) => {
      if (job.runId) await logMetrics(db, job.runId, step, values);
    },
    progress: async (p) => {
      if (job.runId) await setRunProgress(db, job.runId, p);
    },
  };
}
