import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergePoints } from '../../components/ui/merge-points.ts';

type P = { step: number; value: number };
const pts = (...steps: [number, number][]): P[] => steps.map(([step, value]) => ({ step, value }));

test('mergePoints: nothing new returns the series unchanged', () => {
  const s = pts([0, 1], [1, 2]);
  assert.deepEqual(mergePoints(s, []), s);
  assert.deepEqual(mergePoints([], []), []);
});

test('mergePoints: in-order points are appended', () => {
  assert.deepEqual(mergePoints(pts([0, 1], [1, 2]), pts([2, 3], [5, 4])), pts([0, 1], [1, 2], [2, 3], [5, 4]));
  assert.deepEqual(mergePoints([], pts([3, 1], [4, 2])), pts([3, 1], [4, 2]));
});

test('mergePoints: a repeated step replaces the old point (snapshot then stream)', () => {
  const s = pts([0, 1], [1, 2], [2, 3]);
  assert.deepEqual(mergePoints(s, pts([2, 30])), pts([0, 1], [1, 2], [2, 30]));
  assert.deepEqual(mergePoints(s, pts([1, 20], [3, 40])), pts([0, 1], [1, 20], [2, 3], [3, 40]));
  // The same points twice are harmless.
  assert.deepEqual(mergePoints(s, s), s);
});

test('mergePoints: out-of-order points are sorted into place', () => {
  assert.deepEqual(
    mergePoints(pts([0, 0], [4, 4]), pts([2, 2], [1, 1], [6, 6], [3, 3])),
    pts([0, 0], [1, 1], [2, 2], [3, 3], [4, 4], [6, 6]),
  );
  assert.deepEqual(mergePoints(pts([5, 5]), pts([1, 1])), pts([1, 1], [5, 5]));
});

test('mergePoints: within one batch a later point for a step wins', () => {
  assert.deepEqual(mergePoints(pts([0, 0]), pts([1, 1], [1, 9])), pts([0, 0], [1, 9]));
});

test('mergePoints: the inputs are not mutated', () => {
  const s = pts([0, 1], [2, 3]);
  const p = pts([1, 2], [2, 30]);
  const sCopy = structuredClone(s);
  const pCopy = structuredClone(p);
  const out = mergePoints(s, p);
  assert.deepEqual(s, sCopy);
  assert.deepEqual(p, pCopy);
  assert.notEqual(out, s);
  const appended = mergePoints(s, pts([9, 9]));
  assert.notEqual(appended, s);
  assert.equal(s.length, 2);
});

test('mergePoints: extra fields travel with the point', () => {
  const out = mergePoints([{ step: 1, value: 1, time: 10 }], [{ step: 1, value: 2, time: 20 }]);
  assert.deepEqual(out, [{ step: 1, value: 2, time: 20 }]);
});
