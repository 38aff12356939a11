import { commonPrefix, type Prefix } from './slot-cache.ts';

/** A prefix shorter than this is prefilled again rather than copied (the copy would cost about as much). */
export const MIN_REUSE = 8;

interface Parked extends Prefix {
  session?: string;
  /** A shared prompt's tokens but the last (GenerateRequest.sharedPrompt): kept for every request sending it. */
  shared?: boolean;
  usedAt: number;
}

/**
 * The embedded engine's finished caches kept for reuse (prefix reuse, docs/method.md §6), least recently used
 * evicted beyond `budget` tokens: a turn's cache under its session, and a shared prompt's cache under its tokens.
 * Bookkeeping only: the engine copies the key/value rows in and out (SlotCache.extract, load).
 */
export class ParkedCaches {
  private list: Parked[] = [];
  constructor(readonly budget: number) {}

  /** Tokens held now. */
  get tokens(): number[] {
    return this.list.map((p) => p.tokens.length);
  }

  clear(): void {
    this.list = [];
  }

  /** Keep a cache for reuse, evicting the least recently used beyond the budget. */
  keep(p: Prefix, o: { session?: string; shared?: boolean } = {}): void {
    this.list.push({ ...p, ...o, usedAt: performance.now() });
    let total = this.list.reduce((s, x) => s + x.tokens.length, 0);
    this.list.sort((a, b) => a.usedAt - b.usedAt);
    while (total > this.budget && this.list.length) total -= this.list.shift()!.tokens.length;
  }

  /**
   * The longest cached prefix of `prompt`, at most `limit` tokens and MIN_REUSE at least: the cache of `session` (a
   * request with a session reuses only its own earlier turns, so its path — and therefore its seeded output — does
   * not depend on what else ran), or for a request without one, any cache without a session (multi-turn chat
   * clients). A turn's cache serves its own next turn once (it is taken: that turn parks a longer one).
   */
  take(prompt: number[], session: string | undefined, limit: number): { from: Prefix; n: number } | null {
    let best = 0,
      from: Parked | null = null;
    for (const p of this.list) {
      if (p.shared || p.session !== session) continue;
      const n = Math.min(commonPrefix(p.tokens, prompt), limit);
      if (n > best) {
        best = n;
        from = p;
      }
    }
    if (!from || best < MIN_REUSE) return null;
    if (from.session !== undefined) this.list.splice(this.list.indexOf(from), 1);
    else from.usedAt = performance.now();
    return { from, n: best };
  }

  /** The shared cache of exactly `prompt`'s first `n` tokens, if one is kept. */
  shared(prompt: number[], n: number): Prefix | null {
    const s = this.list.find((x) => x.shared && x.tokens.length === n && commonPrefix(x.tokens, prompt) === n);
    if (s) s.usedAt = performance.now();
    return s ?? null;
  }
}
