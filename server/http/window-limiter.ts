/**
 * A sliding-window counter per key, in memory (one web process), with a bounded number of keys so that a flood of
 * distinct keys (made-up emails, addresses) cannot grow it without limit. Attempts can be reserved before the work
 * and settled after it, so parallel requests cannot all pass a check made before any of them has been counted.
 * Pure apart from the clock, which is injectable: tests/unit/sign-in-limits.test.ts.
 */
export interface WindowRule {
  max: number;
  windowMs: number;
}

export type Reservation = { ok: true; settle(counted: boolean): void } | { ok: false; retryAfterS: number };

interface Entry {
  times: number[];
  inFlight: number;
}

export class WindowLimiter {
  private readonly entries = new Map<string, Entry>();
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(
    readonly rule: WindowRule,
    opts: { maxKeys?: number; now?: () => number } = {},
  ) {
    this.maxKeys = opts.maxKeys ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Events counted for `key` in the current window. */
  count(key: string): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    this.prune(e, this.now());
    return e.times.length;
  }

  /**
   * Hold one attempt for `key`: refused while counted + in-flight attempts reach the rule's max. `settle(true)`
   * counts it (e.g. a wrong password), `settle(false)` gives it back (a success, or no attempt was made).
   */
  reserve(key: string): Reservation {
    const now = this.now();
    const e = this.touch(key, now);
    if (e.times.length + e.inFlight >= this.rule.max) {
      this.dropIfEmpty(key, e);
      return { ok: false, retryAfterS: this.retryAfter(e, now) };
    }
    e.inFlight++;
    let settled = false;
    return {
      ok: true,
      settle: (counted: boolean) => {
        if (settled) return;
        settled = true;
        e.inFlight--;
        if (counted) e.times.push(this.now());
        this.dropIfEmpty(key, e);
      },
    };
  }

  /** Forget what was counted for `key` (a success that ends the run of failures); attempts in flight still settle. */
  reset(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.times = [];
    this.dropIfEmpty(key, e);
  }

  /** Count one event now; false (not counted) when the window is already full. */
  hit(key: string): { ok: true } | { ok: false; retryAfterS: number } {
    const r = this.reserve(key);
    if (!r.ok) return r;
    r.settle(true);
    return { ok: true };
  }

  private retryAfter(e: Entry, now: number): number {
    const oldest = e.times[0];
    return oldest === undefined ? 1 : Math.max(1, Math.ceil((oldest + this.rule.windowMs - now) / 1000));
  }

  private prune(e: Entry, now: number) {
    const cutoff = now - this.rule.windowMs;
    let i = 0;
    while (i < e.times.length && e.times[i]! <= cutoff) i++;
    if (i > 0) e.times.splice(0, i);
  }

  private dropIfEmpty(key: string, e: Entry) {
    if (e.times.length === 0 && e.inFlight === 0 && this.entries.get(key) === e) this.entries.delete(key);
  }

  /** The key's entry, pruned and moved to the back (most recently used); makes room first when the map is full. */
  private touch(key: string, now: number): Entry {
    let e = this.entries.get(key);
    if (e) {
      this.prune(e, now);
      this.entries.delete(key);
    } else {
      e = { times: [], inFlight: 0 };
      if (this.entries.size >= this.maxKeys) this.makeRoom(now);
    }
    this.entries.set(key, e);
    return e;
  }

  /**
   * Expired keys go first; then the least recently used key that is below its limit and has nothing in flight, so
   * that filling the map with fresh keys does not free a key that is being held at its limit.
   */
  private makeRoom(now: number) {
    // Least recently used first, so expired entries collect at the front: drop them until a live one.
    for (const [k, e] of this.entries) {
      this.prune(e, now);
      if (e.times.length > 0 || e.inFlight > 0) break;
      this.entries.delete(k);
    }
    if (this.entries.size < this.maxKeys) return;
    let fallback: string | null = null;
    for (const [k, e] of this.entries) {
      if (e.inFlight === 0 && e.times.length < this.rule.max) {
        this.entries.delete(k);
        return;
      }
      fallback ??= e.inFlight === 0 ? k : null;
    }
    if (fallback !== null) this.entries.delete(fallback);
  }
}
