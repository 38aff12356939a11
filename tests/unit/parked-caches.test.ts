import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIN_REUSE, ParkedCaches } from '../../workers/engines/parked-caches.ts';

const prefix = (tokens: number[]) => ({ tokens, keys: [], values: [] });
const seq = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);

test("a session's cache serves its own next turn once; a sessionless one serves any sessionless request and stays", () => {
  const c = new ParkedCaches(1000);
  c.keep(prefix(seq(20)), { session: 'a' });
  c.keep(prefix(seq(12)));
  assert.equal(c.take(seq(30), 'b', 29), null, "another session's cache is never used");
  assert.equal(c.take(seq(30), 'a', 15)?.n, 15, 'at most the limit');
  assert.equal(c.take(seq(30), 'a', 29), null, 'taken: gone');
  assert.equal(c.take(seq(30), undefined, 29)?.n, 12);
  assert.equal(c.take(seq(30), undefined, 29)?.n, 12, 'a sessionless cache stays');
  assert.equal(c.take([0, ...seq(30, 100)], undefined, 29), null, `a common prefix under ${MIN_REUSE} tokens is none`);
});

test('a shared prompt cache serves only requests that share exactly its tokens, never take()', () => {
  const c = new ParkedCaches(1000);
  c.keep(prefix(seq(20)), { shared: true });
  assert.equal(c.take(seq(30), undefined, 29), null);
  assert.equal(c.shared(seq(21), 19), null, 'not its length');
  assert.deepEqual(c.shared(seq(21), 20)?.tokens, seq(20));
  assert.equal(c.shared([1, ...seq(20, 1)], 20), null, 'not its tokens');
});

test('beyond the budget the least recently used go first, and clear drops all', () => {
  const c = new ParkedCaches(35);
  c.keep(prefix(seq(10)), { session: 'a' });
  c.keep(prefix(seq(10)), { shared: true });
  c.keep(prefix(seq(10)), { session: 'b' });
  c.keep(prefix(seq(15)), { session: 'c' });
  assert.deepEqual(c.tokens, [10, 10, 15], "a's, the oldest, is evicted");
  c.clear();
  assert.deepEqual(c.tokens, []);
  assert.deepEqual(new ParkedCaches(0).tokens, []);
});
