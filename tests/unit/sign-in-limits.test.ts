// The pieces of the sign-in limits (server/http/): the sliding-window limiter (per account, per email, per address),
// the gate that caps password hashes computed at once, and the counter that replaces rows for refused anonymous
// requests. A fake clock; no server (tests/integration/sign-in-limits.test.ts runs them in the real one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WindowLimiter } from '../../server/http/window-limiter.ts';
import { ConcurrencyGate } from '../../server/http/concurrency-gate.ts';
import { RefusalCounter } from '../../server/http/refusals.ts';

function clock(start = 1_000_000) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

test('window limiter: max events in a sliding window, then refused with the seconds until the oldest expires', () => {
  const c = clock();
  const l = new WindowLimiter({ max: 3, windowMs: 60_000 }, { now: c.now });
  assert.ok(l.hit('a').ok);
  c.advance(10_000);
  assert.ok(l.hit('a').ok);
  assert.ok(l.hit('a').ok);
  const refused = l.hit('a');
  assert.deepEqual(refused, { ok: false, retryAfterS: 50 });
  assert.ok(l.hit('b').ok, 'keys are independent');
  c.advance(50_001);
  assert.ok(l.hit('a').ok, 'the oldest left the window');
  assert.equal(l.hit('a').ok, false);
  assert.equal(l.count('a'), 3);
});

test('window limiter: reservations count in-flight attempts, so parallel requests cannot all pass', () => {
  const c = clock();
  const l = new WindowLimiter({ max: 10, windowMs: 900_000 }, { now: c.now });
  const held = Array.from({ length: 60 }, () => l.reserve('ada@example.com'));
  assert.equal(held.filter((h) => h.ok).length, 10, 'ten reserved while none has finished');
  // Two succeed (given back), eight fail (counted): two more may try, then the account is at its limit.
  held.filter((h) => h.ok).forEach((h, i) => h.ok && h.settle(i >= 2));
  assert.equal(l.count('ada@example.com'), 8);
  assert.ok(l.reserve('ada@example.com').ok);
  const last = l.reserve('ada@example.com');
  assert.ok(last.ok);
  last.settle(true);
  last.settle(true); // settling twice counts once
  assert.equal(l.count('ada@example.com'), 9);
});

test('window limiter: entries nothing is counted for are dropped; the map is bounded and keeps keys held at their limit', () => {
  const c = clock();
  const l = new WindowLimiter({ max: 2, windowMs: 60_000 }, { now: c.now, maxKeys: 100 });
  const r = l.reserve('x');
  assert.ok(r.ok);
  r.settle(false);
  assert.equal(l.size, 0, 'a success leaves nothing behind');
  l.hit('victim');
  l.hit('victim'); // at its limit
  for (let i = 0; i < 10_000; i++) l.hit(`made-up-${i}@example.com`);
  assert.ok(l.size <= 100, `size ${l.size}`);
  assert.equal(l.hit('victim').ok, false, 'flooding with new keys did not free the locked one');
  c.advance(60_001);
  assert.ok(l.hit('victim').ok);
});

test('concurrency gate: at most `limit` at once, the queue in order, beyond it refused; a caller that left is skipped', async () => {
  const gate = new ConcurrencyGate(2, 3);
  let running = 0,
    peak = 0;
  const order: number[] = [];
  const releases: Array<() => void> = [];
  const task = (i: number) => async () => {
    running++;
    peak = Math.max(peak, running);
    order.push(i);
    await new Promise<void>((r) => releases.push(r));
    running--;
    return i;
  };
  const gone = new AbortController();
  const results = [0, 1, 2, 3, 4].map((i) => gate.run(task(i), i === 3 ? gone.signal : undefined));
  const refused = await gate.run(task(99));
  assert.deepEqual(refused, { ok: false, reason: 'busy' });
  assert.equal(gate.active, 2);
  assert.equal(gate.queued, 3);
  gone.abort();
  assert.deepEqual(await results[3], { ok: false, reason: 'aborted' });
  assert.equal(gate.queued, 2, 'the caller that left frees its place at once');
  while (releases.length || gate.active) {
    releases.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  assert.equal(peak, 2);
  assert.equal(gate.peak, 2, 'the gate reports the most that ran at once (handed-over slots count once)');
  assert.deepEqual(order, [0, 1, 2, 4]);
  assert.deepEqual(
    await Promise.all([results[0], results[1], results[2], results[4]]),
    [0, 1, 2, 4].map((i) => ({ ok: true, value: i })),
  );
  assert.equal(gate.active, 0);
  assert.throws(() => new ConcurrencyGate(0, 1), /limit must be ≥ 1/);
});

test('concurrency gate: a task that throws frees its slot', async () => {
  const gate = new ConcurrencyGate(1, 1);
  await assert.rejects(
    gate.run(async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.deepEqual(await gate.run(async () => 7), { ok: true, value: 7 });
});

test('refusal counter: totals for a metric, at most one summary line per interval, nothing written per request', () => {
  const lines: string[] = [];
  const timers: Array<() => void> = [];
  const r = new RefusalCounter({
    intervalMs: 60_000,
    log: (l) => lines.push(l),
    schedule: (fn) => {
      timers.push(fn);
    },
  });
  for (let i = 0; i < 500; i++) r.count('trpc: UNAUTHORIZED');
  r.count('sign-in link: unknown email', 3);
  assert.equal(timers.length, 1, 'one line scheduled, however many refusals');
  assert.equal(lines.length, 0);
  timers.shift()!();
  assert.deepEqual(lines, [
    'refused anonymous requests in the last 60 s: 503 (trpc: UNAUTHORIZED 500, sign-in link: unknown email 3)',
  ]);
  r.flush();
  assert.equal(lines.length, 1, 'no line when nothing was refused');
  r.count('sign-in: busy');
  timers.shift()!();
  assert.equal(lines[1], 'refused anonymous requests in the last 60 s: 1 (sign-in: busy 1)');
  assert.deepEqual(r.totalsByKind(), {
    'sign-in link: unknown email': 3,
    'sign-in: busy': 1,
    'trpc: UNAUTHORIZED': 500,
  });
});
