/**
 * The ingest API's rate limit per API token, on the sign-in edge's sliding window
 * (server/http/window-limiter.ts) rather than a limiter of its own: at most BURST calls in any BURST / RATE seconds,
 * which averages RATE a second and lets a script send BURST back to back. In memory, one per web process: a restart
 * forgets it and N web servers allow N times the rate (it keeps one runaway script from flooding the database; it is
 * not a quota). tests/integration/ingest-rate.test.ts.
 */
import type { Principal } from '../../contracts/access.ts';
import type { IngestRateLimited } from '../../contracts/ingest.ts';
import type { Config } from '../config.ts';
import { WindowLimiter } from '../http/window-limiter.ts';

export interface IngestRate {
  perSecond: number;
  burst: number;
}

export interface IngestLimiter {
  rate: IngestRate;
  window: WindowLimiter;
}

export const ingestRateOf = (c: Pick<Config, 'ingestRatePerS' | 'ingestRateBurst'>): IngestRate => ({
  perSecond: c.ingestRatePerS,
  burst: c.ingestRateBurst,
});

export function createIngestLimiter(rate: IngestRate, now?: () => number): IngestLimiter {
  return {
    rate,
    window: new WindowLimiter({ max: rate.burst, windowMs: (rate.burst / rate.perSecond) * 1000 }, { now }),
  };
}

/** Whose budget a call spends: each API token its own; a browser session (never a bulk importer) its own too. */
export const ingestKey = (p: Principal): string =>
  p.tokenId ? `token:${p.tokenId}` : `session:${p.sessionId ?? p.userId}`;

/** Counts the call; null when it may go on, else the 429's body and its Retry-After (seconds). */
export function takeIngestCall(
  l: IngestLimiter,
  p: Principal,
): { retryAfterS: number; body: IngestRateLimited } | null {
  const hit = l.window.hit(ingestKey(p));
  if (hit.ok) return null;
  const { perSecond, burst } = l.rate;
  const what = p.tokenId ? 'this API token' : 'this session';
  return {
    retryAfterS: hit.retryAfterS,
    body: {
      error: {
        message: `over the ingest rate limit for ${what}: ${perSecond} calls a second, ${burst} at once (TOOLSMITH_INGEST_RATE_PER_S, TOOLSMITH_INGEST_RATE_BURST); send again after ${hit.retryAfterS} s (Retry-After)`,
        limit: { name: 'ingest-rate', perSecond, burst, retryAfterS: hit.retryAfterS },
      },
    },
  };
}

// One per web process, on globalThis: Next may evaluate a module once per route bundle.
const holder = globalThis as unknown as { __toolsmithIngestLimiter?: IngestLimiter };
export function processIngestLimiter(c: Pick<Config, 'ingestRatePerS' | 'ingestRateBurst'>): IngestLimiter {
  return (holder.__toolsmithIngestLimiter ??= createIngestLimiter(ingestRateOf(c)));
}
