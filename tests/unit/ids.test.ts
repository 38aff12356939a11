import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../server/ids.ts';

// The queue leases due jobs of equal priority in id order: ids made one after another, most of them within the same
// millisecond, must sort in the order they were made (a job enqueued first is leased first).
test('ids made one after another sort in that order, within a millisecond too, and keep one length', () => {
  const ids = Array.from({ length: 5000 }, () => newId('job_'));
  const times = new Set(ids.map((id) => id.slice(4, 13)));
  assert.ok(times.size < ids.length, 'some ids share a millisecond');
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.match(id, /^job_[0-9a-z]{9}[0-9a-f]{20}$/);
});
