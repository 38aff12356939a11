/**
 * At most `limit` tasks at once, up to `queueLimit` more waiting in order, the rest refused at once. Password sign-ins
 * run behind one: each computes an scrypt hash (~32 MB, tens of ms on one of libuv's four threads), and a flood of
 * them would otherwise occupy every thread that other requests' file and crypto work also waits for.
 * tests/unit/sign-in-limits.test.ts.
 */
export type GateResult<T> = { ok: true; value: T } | { ok: false; reason: 'busy' | 'aborted' };

export class ConcurrencyGate {
  private running = 0;
  private most = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly limit: number,
    readonly queueLimit: number,
  ) {
    if (!(limit >= 1) || !(queueLimit >= 0))
      throw new Error(`ConcurrencyGate: limit must be ≥ 1 and queueLimit ≥ 0 (got ${limit}, ${queueLimit})`);
  }

  get active(): number {
    return this.running;
  }
  get queued(): number {
    return this.waiting.length;
  }
  /** The most tasks that ever ran at once: what shows, from outside, that the limit held. */
  get peak(): number {
    return this.most;
  }

  /** Run `task` when a slot is free; `busy` when the queue is full, `aborted` when the caller went away while queued. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<GateResult<T>> {
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.queueLimit) return { ok: false, reason: 'busy' };
      if (signal?.aborted) return { ok: false, reason: 'aborted' };
      // Admitted: the slot was handed over by release() (`running` already counts this task). A caller that goes
      // away while waiting leaves the queue at once, and no hash is computed for it.
      const admitted = await new Promise<boolean>((resolve) => {
        const onAbort = () => {
          const i = this.waiting.indexOf(admit);
          if (i >= 0) {
            this.waiting.splice(i, 1);
            resolve(false);
          }
        };
        const admit = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        };
        this.waiting.push(admit);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
      if (!admitted) return { ok: false, reason: 'aborted' };
    } else {
      this.running++;
      this.most = Math.max(this.most, this.running);
    }
    try {
      return { ok: true, value: await task() };
    } finally {
      this.release();
    }
  }

  private release() {
    const next = this.waiting.shift();
    if (next)
      next(); // hand the slot straight over, so no newcomer can jump the queue
    else this.running--;
  }
}
