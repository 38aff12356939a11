import { internalResult, type RunOptions, type SandboxCall, type SandboxResult, type SandboxSession } from './types.ts';
import { replyToResult, type ZygoteProcess, type ZygoteReply } from './zygote-process.ts';
import { SerialTurns } from './serial-turns.ts';
import { withTimeout } from './with-timeout.ts';

/** Sessions a pool opens at once per core by default (PoolOptions.maxSessions), each on a zygote of its own. */
export const SESSIONS_PER_CORE = 4;
/** Defaults of a session's limits (SessionOptions): its calls' time added up, and how long it may sit idle. */
export const SESSION_TIME_S = 60;
export const SESSION_IDLE_S = 300;

/** A zygote lent to one session until it ends (SandboxPool.lease). */
export interface Lease {
  /** The zygote now, once it is up (a dead one is being replaced): null past `deadline`. */
  zygote(deadline: number): Promise<ZygoteProcess | null>;
  /** Replace a zygote that stopped answering. */
  replace(z: ZygoteProcess): void;
}

/** What a session needs of its pool. */
export interface SessionHost {
  lease(deadline: number, signal?: AbortSignal): Promise<Lease | null>;
  release(lease: Lease): void;
  request(
    c: SandboxCall & { deadlineMs: number },
    z: ZygoteProcess,
    extra: Record<string, unknown>,
  ): Promise<ZygoteReply | null>;
  count(r: SandboxResult): void;
  readonly defaults: { timeoutS: number; queueTimeoutMs: number };
  /** How long a zygote may take to answer beyond the call's own time (its memory settling), ms. */
  readonly graceMs: number;
}

/**
 * One session on a zygote of its own (workers/sandbox/zygote_session.py does the work): the first call leases a
 * zygote and opens the session there, later calls continue it, and a call that ends it (a limit) makes the next one
 * open a new one on the same zygote. The lease is given back when the session is closed or sits idle for `idleS`.
 */
export class PoolSession implements SandboxSession {
  private lease: Lease | null = null;
  private open = false;
  private closed = false;
  private idle?: NodeJS.Timeout;
  private readonly turns = new SerialTurns();

  constructor(
    private host: SessionHost,
    private opts: { timeS: number; idleS: number },
  ) {}

  run(call: SandboxCall, o: RunOptions = {}): Promise<SandboxResult> {
    return this.turns.run(() => this.runNow(call, o));
  }

  private async runNow(call: SandboxCall, o: RunOptions): Promise<SandboxResult> {
    if (this.closed) return internalResult('the sandbox session is closed');
    clearTimeout(this.idle);
    const enqueuedAt = Date.now();
    const timeoutS = call.timeoutS ?? this.host.defaults.timeoutS;
    const deadline = o.deadline ?? enqueuedAt + this.host.defaults.queueTimeoutMs + timeoutS * 1000;
    this.lease ??= await this.host.lease(deadline, o.signal);
    const z = await this.lease?.zygote(deadline);
    if (!this.lease || !z) {
      const r = {
        ...internalResult(
          'no sandbox interpreter was free for the session before its deadline',
          Date.now() - enqueuedAt,
        ),
        status: 'timeout' as const,
        errorType: 'QueueTimeout',
      };
      this.host.count(r);
      return r;
    }
    const startedAt = Date.now();
    const reply = await withTimeout(
      this.host.request({ ...call, timeoutS, deadlineMs: deadline }, z, {
        session: this.open ? 'continue' : 'open',
        session_time_s: this.opts.timeS,
      }),
      timeoutS * 1000 + this.host.graceMs,
      'session call',
    ).catch(() => null);
    let r: SandboxResult;
    if (reply === null) {
      this.lease.replace(z);
      r = {
        ...internalResult('the sandbox interpreter died during the session call', startedAt - enqueuedAt),
        sessionEnded: true,
      };
      this.open = false;
    } else {
      r = replyToResult(reply, startedAt - enqueuedAt);
      if (reply.session_ended === undefined) r = { ...r, sessionEnded: true }; // no session: an internal error
      this.open = !r.sessionEnded;
    }
    this.host.count(r);
    this.idle = setTimeout(() => void this.end(), this.opts.idleS * 1000);
    this.idle.unref();
    return r;
  }

  /** End the session's interpreter and give its zygote back (a later call leases one again). */
  private async end() {
    clearTimeout(this.idle);
    const lease = this.lease;
    this.lease = null;
    this.open = false;
    if (!lease) return;
    const z = await lease.zygote(Date.now());
    if (z) {
      const ended = await withTimeout(
        z.request({ end_session: true }),
        10_000 + this.host.graceMs,
        'end session',
      ).catch(() => null);
      if (!ended) lease.replace(z);
    }
    this.host.release(lease);
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return this.turns.run(() => this.end());
  }
}
