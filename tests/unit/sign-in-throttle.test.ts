// The sign-in throttle's decisions (server/http/sign-in-throttle.ts), pure: records and a time in, allowed or the
// seconds to wait out. The stored side, several web servers and restarts: tests/integration/sign-in-throttle.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  charged,
  decide,
  delayS,
  expiresAt,
  settled,
  THROTTLE_POLICY as P,
  type PairRecord,
} from '../../server/http/sign-in-throttle.ts';

const T0 = 1_800_000_000_000;
const pair = (
  address: string,
  failures: number,
  lastFailureAt: number | null,
  lastSuccessAt: number | null = null,
) => ({
  address,
  failures,
  lastFailureAt,
  lastSuccessAt,
});

/** Fail from `address` at `at` as the edge does it: claim (decide, charge), then settle as a failure. */
function fail(pairs: PairRecord[], address: string, at: number): PairRecord[] {
  assert.ok(decide(pairs, address, at).ok, `an attempt from ${address} at +${(at - T0) / 1000} s was allowed`);
  const own = pairs.find((p) => p.address === address);
  const next = settled(charged(own, address, at), 'failure', at);
  return [...pairs.filter((p) => p !== own), next];
}

test('delays grow from 4 s, doubling, capped at 5 minutes; none below the free count', () => {
  assert.deepEqual(
    [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 100, 10_000].map((n) => delayS(n, 5)),
    [0, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300, 300],
  );
});

test('one address: five failures free, then each attempt waits its delay from the last failure', () => {
  let pairs: PairRecord[] = [];
  for (let i = 0; i < 5; i++) pairs = fail(pairs, 'a', T0 + i * 1000);
  assert.deepEqual(decide(pairs, 'a', T0 + 5000), { ok: false, retryAfterS: 3, scope: 'address' });
  assert.ok(decide(pairs, 'a', T0 + 8000).ok, '4 s after the fifth failure');
  pairs = fail(pairs, 'a', T0 + 8000);
  assert.deepEqual(decide(pairs, 'a', T0 + 8000), { ok: false, retryAfterS: 8, scope: 'address' });
});

test("50 wrong tries from one address slow that address only: another address, the owner's, is not held back", () => {
  let pairs: PairRecord[] = [];
  let t = T0;
  for (let i = 0; i < 50; i++) {
    const d = decide(pairs, 'attacker', t);
    if (!d.ok) t += d.retryAfterS * 1000; // the attacker waits out each delay
    pairs = fail(pairs, 'attacker', t);
  }
  assert.equal(pairs[0]!.failures, 50);
  assert.deepEqual(decide(pairs, 'attacker', t), { ok: false, retryAfterS: 300, scope: 'address' });
  assert.deepEqual(decide(pairs, 'owner-new-address', t), { ok: true }, 'one address counts at most 5 for the account');
});

test('guessing from many addresses meets the account delay, even from a fresh address each time', () => {
  let pairs: PairRecord[] = [];
  for (let i = 0; i < 10; i++) pairs = fail(pairs, `bot-${i}`, T0);
  const d = decide(pairs, 'bot-new', T0 + 10);
  assert.equal(d.ok, false);
  assert.deepEqual(d, { ok: false, retryAfterS: 4, scope: 'account' });
  // Waited out, one more, and the next wait is twice as long: the account's delay grows however the addresses turn.
  pairs = fail(pairs, 'bot-new', T0 + 4000);
  assert.deepEqual(decide(pairs, 'bot-newer', T0 + 4000), { ok: false, retryAfterS: 8, scope: 'account' });
  // An address that signed in to this account lately is the owner's: the account's delay does not hold it.
  const withOwner = [...pairs, pair('owner', 0, null, T0 - 24 * 3600_000)];
  assert.deepEqual(decide(withOwner, 'owner', T0 + 4000), { ok: true });
  // …until it is no longer recent.
  const stale = [...pairs, pair('owner', 0, null, T0 + 4000 - P.knownMs)];
  assert.equal(decide(stale, 'owner', T0 + 4000).ok, false);
});

test('one address counts at most its first five towards the account', () => {
  const pairs = [pair('a', 40, T0), pair('b', 4, T0)];
  assert.ok(decide(pairs, 'c', T0).ok, '5 + 4 < 10');
  assert.deepEqual(decide([...pairs, pair('d', 1, T0)], 'c', T0), { ok: false, retryAfterS: 4, scope: 'account' });
});

test('attempts in flight count: each allowed attempt is charged before its password is checked', () => {
  let pairs: PairRecord[] = [];
  let allowed = 0;
  for (let i = 0; i < 30; i++) {
    const address = `par-${i}`;
    if (!decide(pairs, address, T0).ok) continue;
    allowed++;
    pairs = [...pairs, charged(undefined, address, T0)]; // not settled yet
  }
  assert.equal(allowed, 10);
});

test('settling: a success clears its pair and marks the address known; an attempt not checked is given back', () => {
  const p = charged(pair('a', 3, T0), 'a', T0 + 1000);
  assert.deepEqual(p, pair('a', 4, T0 + 1000));
  assert.deepEqual(settled(p, 'success', T0 + 2000), pair('a', 0, null, T0 + 2000));
  assert.deepEqual(settled(p, 'not-checked', T0 + 2000), pair('a', 3, T0 + 1000));
  assert.deepEqual(settled(p, 'failure', T0 + 2000), pair('a', 4, T0 + 2000), 'the delay runs from the answer');
});

test('a run of failures is forgotten an hour after its last one; rows expire when nothing in them matters', () => {
  const old = pair('a', 30, T0);
  const others = [old, pair('b', 5, T0 - 10 * 60_000), pair('c', 5, T0 - 10 * 60_000)];
  assert.equal(decide(others, 'd', T0 + P.forgetMs - 20 * 60_000).ok, true, 'the delay (5 minutes) is over');
  assert.equal(decide(others, 'a', T0 + 299_000).ok, false);
  // b and c still count for the account until an hour after their last failure: 15 of them, 64 s from a's.
  assert.deepEqual(decide(others, 'd', T0 + 30_000), { ok: false, retryAfterS: 98, scope: 'account' });
  assert.ok(decide(others, 'd', T0 + 128_000).ok);
  assert.deepEqual(charged(old, 'a', T0 + P.forgetMs), pair('a', 1, T0 + P.forgetMs), 'a new run starts at one');
  assert.equal(expiresAt(old), T0 + P.forgetMs);
  assert.equal(expiresAt(pair('a', 0, null, T0)), T0 + P.knownMs);
  assert.equal(expiresAt(pair('a', 2, T0 + 5, T0)), T0 + P.knownMs);
});
