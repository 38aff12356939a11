import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  compareHref,
  EMPTY_FILTER,
  pagesFor,
  pagesToEvict,
  queryKeyOf,
  rowAt,
  toListFilter,
  togglePick,
  visibleRange,
} from '../../components/explorer/explorer-window.ts';

test('visibleRange: viewport rows plus overscan, clamped', () => {
  assert.deepEqual(visibleRange(0, 300, 30, 100_000, 5), { start: 0, end: 16 });
  assert.deepEqual(visibleRange(3000, 300, 30, 100_000, 5), { start: 95, end: 116 });
  assert.deepEqual(visibleRange(30 * 99_990, 300, 30, 100_000, 5), { start: 99_985, end: 100_000 });
  assert.deepEqual(visibleRange(0, 300, 30, 0), { start: 0, end: 0 });
  assert.deepEqual(visibleRange(1e9, 300, 30, 10, 2), { start: 7, end: 10 });
});

test('pagesFor and rowAt: the pages covering a range', () => {
  assert.deepEqual(pagesFor({ start: 95, end: 116 }, 100), [0, 1]);
  assert.deepEqual(pagesFor({ start: 0, end: 100 }, 100), [0]);
  assert.deepEqual(pagesFor({ start: 5, end: 5 }, 100), []);
  const pages = new Map([[1, ['a', 'b']]]);
  assert.equal(rowAt(pages, 2, 3), 'b');
  assert.equal(rowAt(pages, 2, 0), undefined);
});

test('pagesToEvict: drops the pages farthest from view', () => {
  assert.deepEqual(pagesToEvict([0, 1, 2, 50, 51], [50, 51], 3), [0, 1]);
  assert.deepEqual(pagesToEvict([0, 1], [0], 5), []);
});

test('toListFilter: the form as trajectories.list filter, with field errors', () => {
  assert.deepEqual(toListFilter(EMPTY_FILTER), { filter: {}, errors: {} });
  const { filter, errors } = toListFilter({
    minReward: '0.5',
    maxReward: 'x',
    selected: 'yes',
    toolError: 'no',
    finishReason: ' stop ',
    search: ' print( ',
  });
  assert.deepEqual(filter, {
    minReward: 0.5,
    selected: true,
    hasToolError: false,
    finishReason: 'stop',
    search: 'print(',
  });
  assert.deepEqual(errors, { maxReward: 'not a number' });
  assert.equal(toListFilter({ ...EMPTY_FILTER, minReward: '1', maxReward: '0' }).errors.maxReward, 'below the minimum');
});

test('queryKeyOf: changes with step, sort and every filter field', () => {
  const a = queryKeyOf({ step: 1, filter: {}, sort: 'index' });
  assert.notEqual(a, queryKeyOf({ step: 2, filter: {}, sort: 'index' }));
  assert.notEqual(a, queryKeyOf({ step: 1, filter: { selected: false }, sort: 'index' }));
  assert.equal(a, queryKeyOf({ step: 1, filter: {}, sort: 'index' }));
});

test('togglePick and compareHref: two picks make a compare link', () => {
  let p = togglePick([], 'a');
  p = togglePick(p, 'b');
  assert.equal(compareHref(p), '/trajectories/a?compare=b');
  p = togglePick(p, 'c');
  assert.deepEqual(p, ['b', 'c']);
  assert.deepEqual(togglePick(p, 'b'), ['c']);
  assert.equal(compareHref(['c']), null);
});
