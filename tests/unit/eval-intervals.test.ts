// Intervals on evaluation figures: the percentile bootstrap over problems, its coverage,
// and the paired difference of two evaluations on the same problems.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  bootstrapMean,
  formatDifference,
  formatWithInterval,
  pairedComparison,
  type ProblemScore,
} from '../../contracts/intervals.ts';
import { summarize, type SampleOutcome } from '../../workers/eval/metrics.ts';
import { mulberry32 } from '../../workers/engines/sampling.ts';

test('the bootstrap interval holds the mean, is reproducible, and narrows as 1/√n', () => {
  const rng = mulberry32(1);
  const draw = (n: number) => Array.from({ length: n }, () => (rng() < 0.6 ? 1 : 0));
  const small = draw(50),
    big = draw(800);
  const a = bootstrapMean(small),
    b = bootstrapMean(big);
  assert.ok(a.lo <= a.mean && a.mean <= a.hi);
  assert.deepEqual(bootstrapMean(small), a, 'the same scores give the same interval');
  const ratio = (a.hi - a.lo) / (b.hi - b.lo);
  assert.ok(ratio > 3 && ratio < 5.5, `widths ratio ${ratio} (√16 = 4)`);
  assert.deepEqual(bootstrapMean([]).mean, NaN);
  const constant = bootstrapMean([1, 1, 1, 1]);
  assert.deepEqual([constant.lo, constant.hi], [1, 1]);
});

test('about 95% of the intervals cover the true rate', () => {
  const rng = mulberry32(7);
  let covered = 0;
  const trials = 300;
  for (let t = 0; t < trials; t++) {
    const xs = Array.from({ length: 200 }, () => (rng() < 0.4 ? 1 : 0));
    const ci = bootstrapMean(xs, { resamples: 400, seed: t + 1 });
    if (ci.lo <= 0.4 && 0.4 <= ci.hi) covered++;
  }
  assert.ok(covered / trials > 0.9 && covered / trials < 0.99, `coverage ${covered / trials}`);
});

test('paired comparison: a consistent gain excludes zero, noise does not, and only shared problems count', () => {
  const rng = mulberry32(3);
  const a: ProblemScore[] = [],
    better: ProblemScore[] = [],
    same: ProblemScore[] = [];
  for (let i = 0; i < 240; i++) {
    const p = rng();
    const k = 4;
    const correct = (q: number) =>
      Array.from({ length: k }, () => (rng() < q ? 1 : 0)).reduce<number>((s, x) => s + x, 0);
    a.push({ id: `p${i}`, correct: correct(p * 0.6), samples: k });
    better.push({ id: `p${i}`, correct: correct(Math.min(1, p * 0.6 + 0.15)), samples: k });
    same.push({ id: `p${i}`, correct: correct(p * 0.6), samples: k });
  }
  const gain = pairedComparison(a, better)!;
  assert.equal(gain.problems, 240);
  assert.ok(gain.diff > 0.08 && gain.excludesZero && gain.ci.lo > 0, JSON.stringify(gain));
  assert.ok(Math.abs(gain.diff - (gain.b - gain.a)) < 1e-12);
  const noise = pairedComparison(a, same)!;
  assert.equal(noise.excludesZero, false, JSON.stringify(noise));
  const self = pairedComparison(a, a)!;
  assert.deepEqual([self.diff, self.ci.lo, self.ci.hi], [0, 0, 0]);
  const partial = pairedComparison(a.slice(0, 100), better.slice(50))!;
  assert.equal(partial.problems, 50);
  assert.equal(pairedComparison(a.slice(0, 10), better.slice(10)), null);
  assert.match(formatDifference(gain), /^\+\d+\.\d pts \[\+\d+\.\d, \+\d+\.\d\]$/);
  assert.equal(formatWithInterval(0.725, { lo: 0.681, hi: 0.769 }), '72.5% [68.1–76.9]');
  assert.equal(formatWithInterval(0.5, null), '50.0%');
});

test("an evaluation summary carries pass@1 and pass@k intervals and each problem's score", () => {
  const o = (correct: boolean): SampleOutcome => ({
    correct,
    responseTokens: 10,
    toolCalls: 1,
    toolErrors: 0,
    finishReason: 'stop',
  });
  const groups = [
    [o(true), o(false)],
    [o(false), o(false)],
    [o(true), o(true)],
    [o(false), o(true)],
  ];
  const s = summarize(groups, 2, ['a', 'b', 'c', 'd']);
  assert.equal(s.pass1, 0.5);
  assert.ok(s.pass1Ci!.lo < 0.5 && s.pass1Ci!.hi > 0.5);
  assert.equal(s.passK, 0.75);
  assert.ok(s.passKCi!.lo <= 0.75 && s.passKCi!.hi >= 0.75);
  assert.deepEqual(s.perProblem, [
    { id: 'a', correct: 1, samples: 2 },
    { id: 'b', correct: 0, samples: 2 },
    { id: 'c', correct: 2, samples: 2 },
    { id: 'd', correct: 1, samples: 2 },
  ]);
  assert.equal(summarize(groups, 2).perProblem, undefined);
});
