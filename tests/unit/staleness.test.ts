import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batchStaleness } from '../../workers/train/staleness.ts';

// Engine versions 3, 4, 5 served the weights of run steps 30, 31, 32.
const stepOf = (v: number) => ({ 3: 30, 4: 31, 5: 32 })[v];

test('a batch generated on the weights the trainer has is on-policy', () => {
  assert.deepEqual(batchStaleness([{ tokens: 10, weightVersion: 4 }], 31, stepOf, 31), {
    mean: 0,
    max: 0,
    offPolicyShare: 0,
  });
});

test('one update behind: every token off-policy, staleness 1', () => {
  const s = batchStaleness(
    [
      { tokens: 10, weightVersion: 3 },
      { tokens: 30, weightVersion: 3 },
    ],
    31,
    stepOf,
    30,
  );
  assert.deepEqual(s, { mean: 1, max: 1, offPolicyShare: 1 });
});

test('a trajectory across an update: its turns weigh by their tokens', () => {
  // 10 tokens two updates old, 30 on the trainer's weights.
  const s = batchStaleness(
    [
      { tokens: 10, weightVersion: 3 },
      { tokens: 30, weightVersion: 5 },
    ],
    32,
    stepOf,
    30,
  );
  assert.deepEqual(s, { mean: 0.5, max: 2, offPolicyShare: 0.25 });
});

test('an unknown version counts from where its generation started; no tokens at all still reports the lag', () => {
  assert.deepEqual(batchStaleness([{ tokens: 4, weightVersion: null }], 32, stepOf, 31), {
    mean: 1,
    max: 1,
    offPolicyShare: 1,
  });
  assert.deepEqual(batchStaleness([{ tokens: 4, weightVersion: 99 }], 32, stepOf, 32).max, 0);
  assert.deepEqual(batchStaleness([], 32, stepOf, 31), { mean: 1, max: 1, offPolicyShare: 0 });
});
