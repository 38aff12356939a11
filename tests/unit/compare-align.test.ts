import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  alignByStep, compareHref, comparePaths, defaultKeys, describeTarget, evalSteps, expirySeconds, finishReasonsText, formatNumber,
  formatValue, listRunId, parseRunIds, pass1OverSteps, pct, recipeDiffRows, referenceScore, runColor, sameTarget, shareUrl, toggleRun,
  unionKeys, valueAt,
} from '../../components/compare/align.ts';
import { diffSpecs } from '../../server/recipes/diff.ts';
import { REPORT_REFERENCE } from '../../server/trpc/routers/evals.ts';

test('parseRunIds: splits, trims, drops empties and repeats, caps at 8', () => {
  assert.deepEqual(parseRunIds(' a, b,,a ,c '), ['a', 'b', 'c']);
  assert.deepEqual(parseRunIds(null), []);
  assert.deepEqual(parseRunIds(undefined), []);
  assert.deepEqual(parseRunIds(['a,b', 'c']), ['a', 'b', 'c']);
  assert.deepEqual(parseRunIds('1,2,3,4,5,6,7,8,9,10'), ['1', '2', '3', '4', '5', '6', '7', '8']);
  assert.equal(compareHref(['a', 'b']), '/compare?runs=a,b');
  assert.equal(compareHref([]), '/compare');
});

test('toggleRun: adds at the end, removes, never beyond 8', () => {
  assert.deepEqual(toggleRun(['a'], 'b'), ['a', 'b']);
  assert.deepEqual(toggleRun(['a', 'b'], 'a'), ['b']);
  const eight = ['1', '2', '3', '4', '5', '6', '7', '8'];
  assert.deepEqual(toggleRun(eight, '9'), eight);
  assert.deepEqual(toggleRun(eight, '3'), ['1', '2', '4', '5', '6', '7', '8']);
});

test('unionKeys: keys with points in any run, sorted; empty series dropped', () => {
  const s = { a: { loss: [{ step: 1, value: 1 }], empty: [] }, b: { reward: [{ step: 2, value: 0.5 }], loss: [] } };
  assert.deepEqual(unionKeys(s), ['loss', 'reward']);
  assert.deepEqual(unionKeys({}), []);
});

test('defaultKeys: reward first, then accuracy-like, loss, the rest; capped', () => {
  assert.deepEqual(defaultKeys(['z', 'loss', 'train/reward_mean', 'eval/aime/pass1', 'len']), ['train/reward_mean', 'eval/aime/pass1', 'loss']);
  assert.deepEqual(defaultKeys(['b', 'a'], 5), ['a', 'b']);
});

test('alignByStep: union of steps, nulls where a run has no point, last duplicate wins, sorted', () => {
  const series = {
    a: { r: [{ step: 1, value: 0.1 }, { step: 3, value: 0.3 }, { step: 3, value: 0.35 }] },
    b: { r: [{ step: 2, value: 0.2 }, { step: 3, value: 0.4 }] },
    c: {},
  };
  assert.deepEqual(alignByStep(series, ['a', 'b', 'c'], 'r'), [
    { step: 1, a: 0.1, b: null, c: null },
    { step: 2, a: null, b: 0.2, c: null },
    { step: 3, a: 0.35, b: 0.4, c: null },
  ]);
  assert.deepEqual(alignByStep(series, ['a', 'b'], 'missing'), []);
  // Non-finite values are skipped rather than charted.
  assert.deepEqual(alignByStep({ a: { r: [{ step: 1, value: NaN }] } }, ['a'], 'r'), []);
});

test('valueAt and comparePaths', () => {
  const v = { stages: [{ lr: 1e-6 }, { lr: 2e-6, name: 'x' }] };
  assert.deepEqual(valueAt(v, 'stages.1.lr'), { found: true, value: 2e-6 });
  assert.deepEqual(valueAt(v, 'stages.2.lr'), { found: false });
  assert.deepEqual(valueAt(v, ''), { found: true, value: v });
  assert.deepEqual(['stages.10', 'stages.2', 'a', 'stages.2.lr'].sort(comparePaths), ['a', 'stages.2', 'stages.2.lr', 'stages.10']);
});

test('recipeDiffRows: one row per differing path, base value, own value or same', () => {
  const A = { seed: 1, stages: [{ lr: 1, steps: 10 }], name: 'a' };
  const B = { seed: 2, stages: [{ lr: 1, steps: 10 }], name: 'a' };
  const C = { seed: 1, stages: [{ lr: 3, steps: 10 }, { lr: 1, steps: 5 }], name: 'a', extra: true };
  const diff = [{ runId: 'b', diff: diffSpecs(A, B) }, { runId: 'c', diff: diffSpecs(A, C) }];
  const rows = recipeDiffRows(['a', 'b', 'c'], diff);
  assert.deepEqual(rows.map((r) => r.path), ['extra', 'seed', 'stages.0.lr', 'stages.1']);
  const byPath = Object.fromEntries(rows.map((r) => [r.path, r.cells]));
  assert.deepEqual(byPath.seed, [
    { present: true, value: 1, same: false }, { present: true, value: 2, same: false }, { present: true, value: 1, same: true },
  ]);
  assert.deepEqual(byPath.extra, [{ present: false, same: false }, { present: false, same: true }, { present: true, value: true, same: false }]);
  assert.deepEqual(byPath['stages.1']![2], { present: true, value: { lr: 1, steps: 5 }, same: false });
  // With the specs at hand the base value comes from the first spec.
  const withSpecs = recipeDiffRows(['a', 'b', 'c'], diff, { a: A, b: B, c: C });
  assert.deepEqual(withSpecs, rows);
  assert.deepEqual(recipeDiffRows(['a', 'b'], [{ runId: 'b', diff: [] }]), []);
});

test('recipeDiffRows: a leaf inside a subtree another run adds or removes', () => {
  const A = { stages: [{ lr: 1 }, { lr: 2 }] };
  const B = { stages: [{ lr: 1 }] }; // removes stages.1 whole
  const C = { stages: [{ lr: 1 }, { lr: 5 }] }; // changes stages.1.lr
  const rows = recipeDiffRows(['a', 'b', 'c'], [{ runId: 'b', diff: diffSpecs(A, B) }, { runId: 'c', diff: diffSpecs(A, C) }]);
  const leaf = rows.find((r) => r.path === 'stages.1.lr')!;
  assert.deepEqual(leaf.cells, [{ present: true, value: 2, same: false }, { present: false, same: false }, { present: true, value: 5, same: false }]);
  const whole = rows.find((r) => r.path === 'stages.1')!;
  assert.deepEqual(whole.cells, [{ present: true, value: { lr: 2 }, same: false }, { present: false, same: false }, { present: true, value: { lr: 5 }, same: false }]);
  // The same answer from the specs themselves.
  assert.deepEqual(recipeDiffRows(['a', 'b', 'c'], [{ runId: 'b', diff: diffSpecs(A, B) }, { runId: 'c', diff: diffSpecs(A, C) }], { a: A, b: B, c: C }), rows);
});

test('formatValue and formatNumber', () => {
  assert.equal(formatValue('x'), '"x"');
  assert.equal(formatValue({ a: 1 }), '{"a":1}');
  assert.equal(formatValue(undefined), '—');
  assert.equal(formatValue('a'.repeat(200), 10).length, 10);
  assert.equal(formatNumber(3), '3');
  assert.equal(formatNumber(0.123456), '0.1235');
  assert.equal(formatNumber(0.00001234), '1.234e-5');
  assert.equal(formatNumber(null), '—');
  assert.equal(formatNumber(NaN), '—');
  assert.equal(runColor(0), runColor(8));
});

test('evaluation helpers: steps, pass@1 over steps, finish reasons, percentages', () => {
  const rows = [
    { step: 10, benchmark: 'aime24', pass1: 0.5 },
    { step: 0, benchmark: 'aime24', pass1: 0.25 },
    { step: 10, benchmark: 'math500', pass1: 0.8 },
  ];
  assert.deepEqual(evalSteps(rows), [0, 10]);
  assert.deepEqual(pass1OverSteps(rows), {
    benchmarks: ['aime24', 'math500'],
    data: [{ step: 0, aime24: 25, math500: null }, { step: 10, aime24: 50, math500: 80 }],
  });
  assert.equal(finishReasonsText({ length: 1, stop: 3 }), 'stop 75% · length 25%');
  assert.equal(finishReasonsText({}), '—');
  assert.equal(finishReasonsText(null), '—');
  assert.equal(pct(0.5), '50.0%');
  assert.equal(pct(null), '—');
});

test('referenceScore: loose benchmark names against the report table', () => {
  assert.equal(referenceScore(REPORT_REFERENCE, 'rStar2-Agent-14B', 'aime24'), 80.6);
  assert.equal(referenceScore(REPORT_REFERENCE, 'rStar2-Agent-14B', 'MATH 500'), 97.8);
  assert.equal(referenceScore(REPORT_REFERENCE, 'rStar2-Agent-14B', 'gsm8k'), null);
  assert.equal(referenceScore(REPORT_REFERENCE, 'nobody', 'aime24'), null);
});

test('share helpers: expiry, URL, matching targets, list filter, description', () => {
  assert.equal(expirySeconds('none'), undefined);
  assert.equal(expirySeconds('1d'), 86400);
  assert.equal(expirySeconds('7d'), 7 * 86400);
  assert.equal(expirySeconds('30d'), 30 * 86400);
  assert.equal(shareUrl('http://localhost:3000/', '/s/abc'), 'http://localhost:3000/s/abc');
  assert.equal(shareUrl('https://x.y', 's/abc'), 'https://x.y/s/abc');

  assert.ok(sameTarget({ scope: 'run', target: { runId: 'r1' } }, { scope: 'run', target: { runId: 'r1' } }));
  assert.ok(!sameTarget({ scope: 'run', target: { runId: 'r1' } }, { scope: 'step', target: { runId: 'r1', step: 1 } }));
  assert.ok(sameTarget({ scope: 'step', target: { runId: 'r1', step: 2 } }, { scope: 'step', target: { runId: 'r1', step: 2 } }));
  assert.ok(!sameTarget({ scope: 'step', target: { runId: 'r1', step: 2 } }, { scope: 'step', target: { runId: 'r1', step: 3 } }));
  assert.ok(sameTarget({ scope: 'trajectory', target: { trajectoryId: 't' } }, { scope: 'trajectory', target: { trajectoryId: 't', runId: 'r' } }));
  assert.ok(sameTarget({ scope: 'compare', target: { runIds: ['a', 'b'] } }, { scope: 'compare', target: { runIds: ['b', 'a'] } }));
  assert.ok(!sameTarget({ scope: 'compare', target: { runIds: ['a', 'b'] } }, { scope: 'compare', target: { runIds: ['a', 'b', 'c'] } }));

  assert.equal(listRunId({ scope: 'compare', target: { runIds: ['a', 'b'] } }), 'a');
  assert.equal(listRunId({ scope: 'trajectory', target: { trajectoryId: 't' } }), undefined);
  assert.equal(listRunId({ scope: 'step', target: { runId: 'r', step: 0 } }), 'r');
  assert.equal(describeTarget('step', { runId: 'r', step: 4 }), 'run r, step 4');
  assert.equal(describeTarget('compare', { runIds: ['a', 'b'] }), '2 runs: a, b');
});
