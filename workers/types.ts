import type { Database } from '../server/db/client.ts';
import type { Job } from '../server/store/jobs.ts';
import type { EventOptions } from '../contracts/events.ts';
import type { JobKind, JobPayload } from '../contracts/jobs.ts';

/** What a job handler gets. Handlers stop promptly when `signal` aborts (shutdown, cancel, lost lease). */
export interface JobContext<P = unknown> {
  job: Job;
  /** The job's payload, parsed by its kind's schema (contracts/jobs.ts); the raw payload for other kinds. */
  payload: P;
  db: Database;
  signal: AbortSignal;
  workerId: string;
  /** Append to the run's event stream (no-op for jobs without a run). */
  log(message: string, opts?: EventOptions): Promise<void>;
  /** Store one step's scalars and announce them live. */
  metrics(step: number, values: Record<string, number>): Promise<void>;
  progress(p: { stage?: number; stageName?: string; step?: number; totalSteps?: number }): Promise<void>;
}

export type JobHandler<P = unknown> = (ctx: JobContext<P>) => Promise<unknown>;
/** The handler registry: one handler per job kind, each receiving its kind's parsed payload. */
export type JobHandlers = { [K in JobKind]?: JobHandler<JobPayload<K>> };

/** Thrown by a handler for an error that another attempt cannot fix (bad input): the job fails at once. */
export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobError';
  }
}
