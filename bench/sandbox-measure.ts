/** What bench:sandbox and its session measurement share: a snippet, a call's outcome, and a closed-loop cell. */
import { performance } from 'node:perf_hooks';

export interface Outcome {
  status: string;
  stdout: string;
  stderr: string;
  errorType?: string | null;
  exitCode: number | null;
}

export interface Snippet {
  key: string;
  name: string;
  code: string;
  /** Calls per cell, by concurrency (the same for pool and baseline). */
  calls: Record<number, number>;
  check: (o: Outcome, side: 'pool' | 'baseline' | 'peer') => string | null;
}

export const expectOk = (want: string) => (o: Outcome) =>
  o.status !== 'ok'
    ? `status ${o.status} (stderr: ${o.stderr.trim().split('\n').slice(-1)[0] ?? ''})`
    : o.stdout !== want
      ? `stdout ${JSON.stringify(o.stdout)} != ${JSON.stringify(want)}`
      : null;

export interface Cell {
  callsPerS: number;
  p50: number;
  p99: number;
  n: number;
  wallS: number;
  errors: string[];
  timeouts: number;
}

function quantile(sorted: number[], q: number) {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

export async function measure(
  n: number,
  concurrency: number,
  one: () => Promise<Outcome>,
  check: (o: Outcome) => string | null,
  timeoutsOk = false,
): Promise<Cell> {
  const lat: number[] = [];
  const errors: string[] = [];
  let timeouts = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) {
        next++;
        const s = performance.now();
        const o = await one();
        lat.push(performance.now() - s);
        if (timeoutsOk && o.status === 'timeout') {
          timeouts++;
          continue;
        }
        const bad = check(o);
        if (bad && errors.length < 3) errors.push(bad);
        else if (bad) errors.push('');
      }
    }),
  );
  const wallS = (performance.now() - t0) / 1000;
  lat.sort((x, y) => x - y);
  return {
    callsPerS: (n - timeouts - errors.length) / wallS,
    p50: quantile(lat, 0.5),
    p99: quantile(lat, 0.99),
    n,
    wallS,
    errors,
    timeouts,
  };
}

export const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '—');
export const pad = (s: string, w: number) => s.padStart(w);

export function settle() {
  return new Promise((r) => setTimeout(r, 1500));
}
