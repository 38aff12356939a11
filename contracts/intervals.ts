/**
 * 95% intervals for evaluation figures, by the percentile bootstrap over problems (pure; shared by the workers'
 * summaries, the server's comparisons and the CLI). Problems are the unit that is resampled: the k samples of a
 * problem are not independent draws of the benchmark, so resampling samples would understate the uncertainty.
 * Seeded, so that the same scores always give the same interval.
 */

import { mulberry32 } from './random.ts';

export interface Interval {
  lo: number;
  hi: number;
}

/** One problem's score in an evaluation: `correct` of `samples` (pass@1 = correct / samples). */
export interface ProblemScore {
  id: string;
  correct: number;
  samples: number;
}

export const BOOTSTRAP_RESAMPLES = 2000;

function quantile(sorted: number[], q: number): number {
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i),
    hi = Math.ceil(i);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (i - lo);
}

/** The mean of `values` (one per problem) and its percentile-bootstrap interval at `level` (default 95%). */
export function bootstrapMean(
  values: number[],
  opts: { resamples?: number; level?: number; seed?: number } = {},
): { mean: number } & Interval {
  const n = values.length;
  if (n === 0) return { mean: NaN, lo: NaN, hi: NaN };
  const mean = values.reduce((s, x) => s + x, 0) / n;
  const B = opts.resamples ?? BOOTSTRAP_RESAMPLES,
    level = opts.level ?? 0.95;
  const next = mulberry32(opts.seed ?? 0x5eed);
  const means = new Array<number>(B);
  for (let b = 0; b < B; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += values[Math.floor(next() * n)]!;
    means[b] = s / n;
  }
  means.sort((x, y) => x - y);
  return { mean, lo: quantile(means, (1 - level) / 2), hi: quantile(means, 1 - (1 - level) / 2) };
}

/** Two evaluations on the same problems: the paired difference b − a of pass@1 and its interval (over the problems
 *  both scored), and whether the interval excludes zero. */
export interface PairedComparison {
  problems: number;
  a: number;
  b: number;
  diff: number;
  ci: Interval;
  excludesZero: boolean;
}

export function pairedComparison(
  a: ProblemScore[],
  b: ProblemScore[],
  opts: { resamples?: number; level?: number; seed?: number } = {},
): PairedComparison | null {
  const byId = new Map(a.map((p) => [p.id, p]));
  const pairs = b
    .filter((p) => byId.has(p.id) && p.samples > 0 && byId.get(p.id)!.samples > 0)
    .map((p) => [byId.get(p.id)!, p] as const);
  if (pairs.length === 0) return null;
  const rate = (p: ProblemScore) => p.correct / p.samples;
  const d = bootstrapMean(
    pairs.map(([x, y]) => rate(y) - rate(x)),
    opts,
  );
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return {
    problems: pairs.length,
    a: mean(pairs.map(([x]) => rate(x))),
    b: mean(pairs.map(([, y]) => rate(y))),
    diff: d.mean,
    ci: { lo: d.lo, hi: d.hi },
    excludesZero: d.lo > 0 || d.hi < 0,
  };
}

/** "72.5%" from a fraction; "–" for a figure a result does not have (stored before it was computed). */
export function formatPercent(x: number | null | undefined, digits = 1): string {
  return x == null ? '–' : `${(100 * x).toFixed(digits)}%`;
}

/** "72.5% [68.1–76.9]" from fractions. */
export function formatWithInterval(x: number, ci: Interval | null | undefined, digits = 1): string {
  const p = (v: number) => (100 * v).toFixed(digits);
  return ci && Number.isFinite(ci.lo) ? `${p(x)}% [${p(ci.lo)}–${p(ci.hi)}]` : formatPercent(x, digits);
}

/** "+4.2 pts [1.0, 7.5]" for a paired difference (fractions). */
export function formatDifference(c: PairedComparison, digits = 1): string {
  const p = (v: number) => `${v >= 0 ? '+' : '−'}${Math.abs(100 * v).toFixed(digits)}`;
  return `${p(c.diff)} pts [${p(c.ci.lo)}, ${p(c.ci.hi)}]`;
}
