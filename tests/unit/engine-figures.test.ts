// A rollout phase's engine figures from its batch counters: mean decode batch and prefill share, each left out when
// nothing of its kind ran.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batchFigures } from '../../workers/train/engine-figures.ts';

const at = (decodeSteps: number, decodeRows: number, prefillMs: number) => ({ decodeSteps, decodeRows, prefillMs });

test('the phase is the difference of the counters: rows per decode step, prefill seconds over compute seconds', () => {
  assert.deepEqual(batchFigures(at(10, 200, 1000), at(110, 2200, 3000), 8), { meanBatch: 20, prefillFraction: 0.25 });
});

test('no decode step: no mean batch; no compute: no prefill share; the share never passes 1', () => {
  assert.deepEqual(batchFigures(at(5, 9, 0), at(5, 9, 400), 2), { prefillFraction: 0.2 });
  assert.deepEqual(batchFigures(at(0, 0, 0), at(4, 8, 0), 0), { meanBatch: 2 });
  assert.deepEqual(batchFigures(at(0, 0, 0), at(1, 1, 2500), 2), { meanBatch: 1, prefillFraction: 1 });
});
