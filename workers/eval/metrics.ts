/**
 * Evaluation metrics (docs/method.md §8). Pure.
 * pass@1 is averaged over the k samples of each problem, then over problems. pass@k uses the unbiased estimator of
 * Chen et al. (2021), 1 − C(n−c, k) / C(n, k), with n samples of which c are correct; with n = k it is "any correct".
 */
export interface SampleOutcome {
  correct: boolean;
  responseTokens: number;
  toolCalls: number;
  toolErrors: number;
  finishReason: string;
}

export function passAtK(n: number, c: number, k: number): number {
  if (k > n) throw new Error(`pass@${k} needs at least ${k} samples, got ${n}`);
  if (n - c < k) return 1;
  // Product form avoids huge binomials: C(n−c, k)/C(n, k) = Π_{i=n−c+1..n} (1 − k/i).
  let p = 1;
  for (let i = n - c + 1; i <= n; i++) p *= 1 - k / i;
  return 1 - p;
}

import type { BenchmarkSummary } from '../../contracts/eval.ts';
import { bootstrapMean } from '../../contracts/intervals.ts';

/** `groups`: one array of sample outcomes per problem (all of the same size k); `ids`: the problems' ids, in the
 *  same order (then the summary keeps each problem's score, for paired comparisons). Intervals: bootstrap over
 *  problems. */
export function summarize(groups: SampleOutcome[][], k: number, ids?: string[]): BenchmarkSummary {
  const all = groups.flat();
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const errorRate = (xs: SampleOutcome[]) => {
    const calls = xs.reduce((s, x) => s + x.toolCalls, 0);
    return calls ? xs.reduce((s, x) => s + x.toolErrors, 0) / calls : 0;
  };
  const finishReasons: Record<string, number> = {};
  for (const x of all) finishReasons[x.finishReason] = (finishReasons[x.finishReason] ?? 0) + 1;
  const p1 = groups.length
    ? bootstrapMean(groups.map((g) => mean(g.map((x) => (x.correct ? 1 : 0)))))
    : { mean: 0, lo: 0, hi: 0 };
  const pk = groups.length
    ? bootstrapMean(groups.map((g) => passAtK(g.length, g.filter((x) => x.correct).length, Math.min(k, g.length))))
    : { mean: 0, lo: 0, hi: 0 };
  return {
    problems: groups.length,
    samples: all.length,
    k,
    pass1: p1.mean,
    passK: pk.mean,
    pass1Ci: { lo: p1.lo, hi: p1.hi },
    passKCi: { lo: pk.lo, hi: pk.hi },
    ...(ids
      ? {
          perProblem: groups.map((g, i) => ({
            id: ids[i]!,
            correct: g.filter((x) => x.correct).length,
            samples: g.length,
          })),
        }
      : {}),
    meanLength: mean(all.map((x) => x.responseTokens)),
    toolCallsPerTrajectory: mean(all.map((x) => x.toolCalls)),
    toolErrorRate: errorRate(all),
    toolErrorRateCorrect: errorRate(all.filter((x) => x.correct)),
    noToolCallRate: mean(all.map((x) => (x.toolCalls === 0 ? 1 : 0))),
    finishReasons,
  };
}
