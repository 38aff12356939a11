import type { Database } from '../server/db/client.ts';
import type { Job } from '../server/jobs/queue.ts';
import type { EventInput } from '../server/store/events.ts';

/** What a job handler gets. Handlers stop promptly when `signal` aborts (shutdown, cancel, lost lease). */
export interface JobContext {
  job: Job;
  db: Database;
  signal: AbortSignal;
  workerId: string;
  /** Append to the run's event stream (no-op for jobs without a run). */
  log(message: string, opts?: Omit<EventInput, 'message'>): Promise<void>;
  /** Store one step's scalars and announce them live. */
  metrics(step: number, values: Record<string, number>): Promise<void>;
  progress(p: { stage?: number; stageName?: string; step?: number; totalSteps?: number }): Promise<void>;
}

export type JobHandler = (ctx: JobContext) => Promise<unknown>;

/** Thrown by a handler for an error that another attempt cannot fix (bad input): the job fails at once. */
export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobError';
  }
}
