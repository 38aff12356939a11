import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  alignBy,
  axisOrigin,
  axisX,
  defaultCompareKeys,
  defaultKeys,
  sharedKeys,
  unionKeys,
} from '../../components/compare/align.ts';
import { comparePaths, recipeDiffRows, valueAt } from '../../components/compare/recipe-diff.ts';
import { compareHref, parseRunIds, toggleRun } from '../../components/compare/selection.ts';
import { diffSpecs } from '../../contracts/recipe-diff.ts';

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
  assert.deepEqual(defaultKeys(['z', 'loss', 'train/reward_mean', 'eval/aime/pass1', 'len']), [
    'train/reward_mean',
    'eval/aime/pass1',
    'loss',
  ]);
  assert.deepEqual(defaultKeys(['b', 'a'], 5), ['a', 'b']);
});

test('alignBy (the step by default): union of x, nulls where a run has no point, last duplicate wins, sorted', () => {
  const series = {
    a: {
      r: [
        { step: 1, value: 0.1 },
        { step: 3, value: 0.3 },
        { step: 3, value: 0.35 },
      ],
    },
    b: {
      r: [
        { step: 2, value: 0.2 },
        { step: 3, value: 0.4 },
      ],
    },
    c: {},
  };
  assert.deepEqual(alignBy(series, ['a', 'b', 'c'], 'r'), [
    { x: 1, a: 0.1, b: null, c: null },
    { x: 2, a: null, b: 0.2, c: null },
    { x: 3, a: 0.35, b: 0.4, c: null },
  ]);
  assert.deepEqual(alignBy(series, ['a', 'b'], 'missing'), []);
  // Non-finite values are skipped rather than charted.
  assert.deepEqual(alignBy({ a: { r: [{ step: 1, value: NaN }] } }, ['a'], 'r'), []);
});

test('x axes: step, steps since the first, RL step after an SFT stage, wall minutes; points with no x are left out', () => {
  // Run a: 2 SFT steps then RL from step 3, logged from t=0; run b: RL only, resumed at step 10, logged from t=1 h.
  const series = {
    a: {
      reward: [
        { step: 3, value: 0.1, time: 180_000 },
        { step: 4, value: 0.2, time: 240_000 },
      ],
      loss: [{ step: 1, value: 2, time: 0 }],
    },
    b: {
      reward: [
        { step: 10, value: 0.3, time: 3_600_000 },
        { step: 11, value: 0.4, time: 3_660_000 },
      ],
    },
  };
  const origins = {
    a: axisOrigin(series.a, [
      { type: 'sft', startStep: 1 },
      { type: 'rl', startStep: 3 },
    ]),
    b: axisOrigin(series.b, [{ type: 'rl', startStep: 1 }]),
  };
  assert.deepEqual(origins.a, { firstStep: 1, firstTime: 0, rlStart: 3 });
  const rows = (axis: Parameters<typeof axisX>[0]) =>
    alignBy(series, ['a', 'b'], 'reward', (id, p) => axisX(axis, p, origins[id as 'a' | 'b']));
  assert.deepEqual(
    rows('step').map((r) => r.x),
    [3, 4, 10, 11],
  );
  assert.deepEqual(rows('relative'), [
    { x: 0, a: null, b: 0.3 },
    { x: 1, a: null, b: 0.4 },
    { x: 2, a: 0.1, b: null },
    { x: 3, a: 0.2, b: null },
  ]);
  assert.deepEqual(rows('rl'), [
    { x: 1, a: 0.1, b: null },
    { x: 2, a: 0.2, b: null },
    { x: 10, a: null, b: 0.3 },
    { x: 11, a: null, b: 0.4 },
  ]);
  assert.deepEqual(
    rows('wall').map((r) => r.x),
    [0, 1, 3, 4],
  );
  // Before the RL stage and without a time there is no x.
  assert.equal(axisX('rl', { step: 1, value: 2 }, origins.a), null);
  assert.equal(axisX('wall', { step: 1, value: 2 }, origins.a), null);
  assert.equal(axisOrigin({}, []).rlStart, null);
});

test('the charts a comparison opens with are among the keys every run shares', () => {
  const series = {
    a: { 'train/reward': [{ step: 1, value: 1 }], loss: [{ step: 1, value: 1 }], zz: [{ step: 1, value: 1 }] },
    b: { 'eval/pass1': [{ step: 1, value: 1 }], loss: [{ step: 1, value: 1 }], zz: [{ step: 1, value: 1 }] },
  };
  assert.deepEqual(sharedKeys(series, ['a', 'b']), ['loss', 'zz']);
  assert.deepEqual(defaultCompareKeys(series, ['a', 'b']), ['loss', 'zz']);
  // Nothing shared: the best of all of them, as before.
  assert.deepEqual(
    defaultCompareKeys({ a: { x: [{ step: 1, value: 1 }] }, b: { y: [{ step: 1, value: 1 }] } }, ['a', 'b']),
    ['x', 'y'],
  );
});

test('valueAt and comparePaths', () => {
  const v = { stages: [{ lr: 1e-6 }, { lr: 2e-6, name: 'x' }] };
  assert.deepEqual(valueAt(v, 'stages.1.lr'), { found: true, value: 2e-6 });
  assert.deepEqual(valueAt(v, 'stages.2.lr'), { found: false });
  assert.deepEqual(valueAt(v, ''), { found: true, value: v });
  assert.deepEqual(['stages.10', 'stages.2', 'a', 'stages.2.lr'].sort(comparePaths), [
    'a',
    'stages.2',
    'stages.2.lr',
    'stages.10',
  ]);
});

test('recipeDiffRows: one row per differing path, base value, own value or same', () => {
  const A = { seed: 1, stages: [{ lr: 1, steps: 10 }], name: 'a' };
  const B = { seed: 2, stages: [{ lr: 1, steps: 10 }], name: 'a' };
  const C = {
    seed: 1,
    stages: [
      { lr: 3, steps: 10 },
      { lr: 1, steps: 5 },
    ],
    name: 'a',
    extra: true,
  };
  const diff = [
    { runId: 'b', diff: diffSpecs(A, B) },
    { runId: 'c', diff: diffSpecs(A, C) },
  ];
  const rows = recipeDiffRows(['a', 'b', 'c'], diff);
  assert.deepEqual(
    rows.map((r) => r.path),
    ['extra', 'seed', 'stages.0.lr', 'stages.1'],
  );
  const byPath = Object.fromEntries(rows.map((r) => [r.path, r.cells]));
  assert.deepEqual(byPath.seed, [
    { present: true, value: 1, same: false },
    { present: true, value: 2, same: false },
    { present: true, value: 1, same: true },
  ]);
  assert.deepEqual(byPath.extra, [
    { present: false, same: false },
    { present: false, same: true },
    { present: true, value: true, same: false },
  ]);
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
  const rows = recipeDiffRows(
    ['a', 'b', 'c'],
    [
      { runId: 'b', diff: diffSpecs(A, B) },
      { runId: 'c', diff: diffSpecs(A, C) },
    ],
  );
  const leaf = rows.find((r) => r.path === 'stages.1.lr')!;
  assert.deepEqual(leaf.cells, [
    { present: true, value: 2, same: false },
    { present: false, same: false },
    { present: true, value: 5, same: false },
  ]);
  const whole = rows.find((r) => r.path === 'stages.1')!;
  assert.deepEqual(whole.cells, [
    { present: true, value: { lr: 2 }, same: false },
    { present: false, same: false },
    { present: true, value: { lr: 5 }, same: false },
  ]);
  // The same answer from the specs themselves.
  assert.deepEqual(
    recipeDiffRows(
      ['a', 'b', 'c'],
      [
        { runId: 'b', diff: diffSpecs(A, B) },
        { runId: 'c', diff: diffSpecs(A, C) },
      ],
      { a: A, b: B, c: C },
    ),
    rows,
  );
});
