import { AsyncLocalStorage } from 'node:async_hooks';
import { setMaxListeners } from 'node:events';
import type { Database } from '../server/db/client.ts';
import * as queue from '../server/store/jobs.ts';
import { appendEvent } from '../server/store/events.ts';
import { getRunStatus, setRunStatus } from '../server/store/runs.ts';
import { jobContext } from './job-context.ts';
import type { RunStatus } from '../contracts/runs.ts';
import { errorMessage, zodIssuesText } from '../contracts/errors.ts';
import { PermanentJobError, type JobContext, type JobHandler, type JobHandlers } from './types.ts';
import { JOB_PAYLOADS, isJobKind } from '../contracts/jobs.ts';

export interface WorkerOptions {
  id: string;
  leaseMs: number;
  heartbeatMs: number;
  pollMs: number;
  shutdownGraceMs: number;
  kinds?: string[];
  /** Never lease these kinds (the main lane leaves its side lanes' kinds to them: workers/lanes.ts). */
  exceptKinds?: string[];
  /** Lease only these jobs (an in-process run of one job, e.g. `npx toolsmith train`). */
  jobIds?: string[];
  log?: (line: string) => void;
}

export type StopReason = 'shutdown' | 'cancelled' | 'lease-lost' | 'crashed';

/**
 * The id of the job whose handler is running, in that handler's async context. Several lanes run jobs in one process
 * (workers/lanes.ts); an exception escaping a handler (a timer, a stream) reaches the process-wide handlers, which
 * read this to fail the job it came from and no other (Node keeps the context for 'uncaughtException' and
 * 'unhandledRejection').
 */
export const runningJob = new AsyncLocalStorage<string>();

/**
 * Leases jobs one at a time and runs them through the handler for their kind. A handler's exception fails the
 * job (with retries); it never ends the worker. stop() finishes or releases the current job.
 */
export class Worker {
  private stopping = false;
  private wake?: () => void;
  private current?: { job: queue.Job; abort: AbortController; done: Promise<void> };
  private loopDone?: Promise<void>;
  readonly log: (line: string) => void;

  constructor(
    private db: Database,
    private handlers: JobHandlers | Record<string, JobHandler<never>>,
    private opts: WorkerOptions,
  ) {
    this.log = opts.log ?? ((line) => console.log(`[worker ${opts.id}] ${line}`));
  }

  start(): Promise<void> {
    this.loopDone = this.loop();
    return this.loopDone;
  }

  /** Stop leasing; give the running job `shutdownGraceMs` to finish after its signal aborts, else release it. */
  async stop(): Promise<void> {
    if (this.stopping) return this.loopDone;
    this.stopping = true;
    this.wake?.();
    const cur = this.current;
    if (cur) {
      cur.abort.abort('shutdown' satisfies StopReason);
      const timedOut = await Promise.race([
        cur.done.then(() => false),
        sleep(this.opts.shutdownGraceMs).then(() => true),
      ]);
      if (timedOut) {
        this.log(`job ${cur.job.id} did not stop within the grace period; releasing it`);
        await this.releaseForShutdown(cur.job);
        // Do not wait for a handler that ignores its signal: the grace period bounds the shutdown. The loop
        // leases nothing more (stopping is set), and the queue refuses the handler's late complete/fail.
        return;
      }
    }
    await this.loopDone;
  }

  /** The job kinds this worker runs (a job of a kind with no handler, leased by a lane with no kinds list, fails). */
  get kinds(): string[] {
    const except = this.opts.exceptKinds ?? [];
    return (this.opts.kinds ?? Object.keys(this.handlers)).filter((k) => !except.includes(k));
  }

  /** Whether this worker's current job is `jobId`. */
  isRunning(jobId: string): boolean {
    return this.current?.job.id === jobId;
  }

  /** Fail whatever is running with this error (used for uncaught exceptions escaping a handler). */
  crashCurrent(err: unknown) {
    const cur = this.current;
    if (!cur) return false;
    cur.abort.abort(Object.assign(new Error(errorMessage(err)), { stopReason: 'crashed' }));
    return true;
  }

  private async loop() {
    let backoff = this.opts.pollMs;
    while (!this.stopping) {
      try {
        for (const j of await queue.reapExhausted(this.db)) {
          if (j.runId)
            await this.safeRunStatus(
              j.runId,
              'failed',
              `worker lost: lease expired on attempt ${j.attempts} and no attempts are left`,
            );
        }
        const job = await queue.lease(
          this.db,
          this.opts.id,
          this.opts.leaseMs,
          this.opts.kinds,
          this.opts.jobIds,
          this.opts.exceptKinds,
        );
        backoff = this.opts.pollMs;
        if (!job) {
          await this.idle(this.opts.pollMs);
          continue;
        }
        if (this.stopping) {
          // stop() came while the lease was in flight: it saw no current job, so give this one straight back.
          await queue.release(this.db, job.id, this.opts.id);
          break;
        }
        await this.run(job);
      } catch (e) {
        // The database went away or similar: keep the worker alive and try again a bit later.
        this.log(`error in the job loop: ${errorMessage(e).split('\n')[0]}; retrying in ${backoff} ms`);
        await this.idle(backoff);
        backoff = Math.min(backoff * 2, 30000);
      }
    }
  }

  private idle(ms: number) {
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  private async run(job: queue.Job) {
    const abort = new AbortController();
    // A training step has hundreds of generations and tool calls in flight, each listening for this abort.
    setMaxListeners(0, abort.signal);
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    this.current = { job, abort, done };
    const heartbeat = setInterval(() => {
      queue.heartbeat(this.db, job.id, this.opts.id, this.opts.leaseMs).then(
        (hb) => {
          if (!hb.owned) abort.abort('lease-lost' satisfies StopReason);
          else if (hb.cancelRequested) abort.abort('cancelled' satisfies StopReason);
        },
        (e) => this.log(`heartbeat for ${job.id} failed: ${errorMessage(e)}`),
      );
    }, this.opts.heartbeatMs);
    try {
      this.log(`leased ${job.kind} job ${job.id} (attempt ${job.attempts}/${job.maxAttempts})`);
      if (job.cancelRequested) abort.abort('cancelled' satisfies StopReason);
      if (job.runId) {
        await setRunStatus(this.db, job.runId, 'running', {
          message: `worker ${this.opts.id} started ${job.kind} (attempt ${job.attempts}/${job.maxAttempts})`,
        });
      }
      const handler = (this.handlers as Record<string, JobHandler | undefined>)[job.kind];
      let result: unknown;
      let error: unknown;
      try {
        if (!handler)
          throw new PermanentJobError(
            `no handler for job kind "${job.kind}" (known: ${Object.keys(this.handlers).join(', ')})`,
          );
        const ctx = this.context(job, parsePayload(job), abort.signal);
        result = await raceAbort(
          runningJob.run(job.id, () => handler(ctx)),
          abort.signal,
        );
      } catch (e) {
        error = e;
      }
      await this.settle(job, abort.signal, result, error);
    } finally {
      clearInterval(heartbeat);
      this.current = undefined;
      resolveDone();
    }
  }

  private async settle(job: queue.Job, signal: AbortSignal, result: unknown, error: unknown) {
    const reason = signal.aborted ? stopReason(signal.reason) : undefined;
    if (error === undefined && reason !== 'lease-lost' && reason !== 'cancelled') {
      if (await queue.complete(this.db, job.id, this.opts.id, result)) {
        if (job.runId) await this.safeRunStatus(job.runId, 'succeeded');
        this.log(`job ${job.id} succeeded`);
      } else this.log(`job ${job.id} finished but its lease was taken over; result discarded`);
      return;
    }
    if (reason === 'lease-lost') {
      this.log(`job ${job.id}: lease lost to another worker; stopped without writing`);
      return;
    }
    if (reason === 'shutdown') {
      await this.releaseForShutdown(job);
      return;
    }
    if (reason === 'cancelled') {
      await queue.markCancelled(this.db, job.id, this.opts.id);
      if (job.runId) await this.safeRunStatus(job.runId, 'cancelled', undefined, 'run cancelled on request');
      this.log(`job ${job.id} cancelled`);
      return;
    }
    const message = errorMessage(reason === 'crashed' ? signal.reason : error);
    const outcome = await queue.fail(this.db, job.id, this.opts.id, message, {
      retryable: !(error instanceof PermanentJobError),
    });
    this.log(`job ${job.id} failed (${outcome ?? 'lease lost'}): ${message.split('\n')[0]}`);
    if (!job.runId || outcome === null) return;
    if (outcome === 'retry') {
      await appendEvent(this.db, job.runId, {
        type: 'log',
        level: 'warn',
        message: `attempt ${job.attempts}/${job.maxAttempts} failed: ${message}; will retry`,
      });
      await this.safeRunStatus(job.runId, 'queued', undefined, 'waiting to retry');
    } else {
      await this.safeRunStatus(job.runId, 'failed', message);
    }
  }

  private async releaseForShutdown(job: queue.Job) {
    if (await queue.release(this.db, job.id, this.opts.id)) {
      this.log(`job ${job.id} released for another worker (shutdown)`);
      if (job.runId)
        await this.safeRunStatus(
          job.runId,
          'queued',
          undefined,
          `worker ${this.opts.id} shut down; job released for another worker`,
        );
    }
  }

  private async safeRunStatus(runId: string, status: RunStatus, error?: string, message?: string) {
    try {
      const current = await getRunStatus(this.db, runId);
      if (current === null) return;
      // A cancelled run stays cancelled, whatever a late worker reports; a paused one stays paused when its job stops.
      if (current === 'cancelled') return;
      if (current === 'paused' && (status === 'cancelled' || status === 'queued')) return;
      await setRunStatus(this.db, runId, status, {
        error: error ?? (status === 'failed' ? 'failed' : undefined),
        message,
      });
    } catch (e) {
      this.log(`could not update run ${runId}: ${errorMessage(e)}`);
    }
  }

  private context(job: queue.Job, payload: unknown, signal: AbortSignal): JobContext {
    return jobContext(this.db, job, payload, signal, this.opts.id);
  }
}

/** The typed dispatch: a known kind's payload through its schema; a payload that fails it fails the job at once. */
function parsePayload(job: queue.Job): unknown {
  if (!isJobKind(job.kind)) return job.payload;
  const r = JOB_PAYLOADS[job.kind].safeParse(job.payload ?? {});
  if (!r.success) throw new PermanentJobError(`bad ${job.kind} job payload: ${zodIssuesText(r.error.issues)}`);
  return r.data;
}

function stopReason(reason: unknown): StopReason {
  if (typeof reason === 'string') return reason as StopReason;
  return (reason as { stopReason?: StopReason })?.stopReason ?? 'crashed';
}

/** Resolve with the handler, or reject as soon as the signal aborts for a crash (so a stuck handler cannot hang us). */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      if (stopReason(signal.reason) === 'crashed') reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}
