import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Verifier } from '../../workers/reward/verifier.ts';

const v = new Verifier({ workers: 2 });
after(() => v.close());

// The test's own timeout only turns a verifier that never cuts the grind off (minutes for (10^7)!) into a failure.
test('a pathological expression is cut off at its limit, the event loop stays responsive, and the pool recovers', {
  timeout: 120_000,
}, async () => {
  await v.pool.warm();
  // What happened in which order: behaviour, not a clock (a busy machine stretches every duration here).
  const order: string[] = [];
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  // (10^7)! makes compute-engine grind (bignum factorial) far past the limit.
  const slow = [
    v.verify('(10^{7})!', '(10^{7}+1)!', { timeoutMs: 500 }),
    v.verify('(10^{7}+2)!', '(10^{7}+3)!', { timeoutMs: 500 }),
  ].map((p) =>
    p.then((r) => {
      order.push('slow');
      return r;
    }),
  );
  // a cheap check issued meanwhile is answered while the slow ones still grind: it does not wait for them
  const quick = await v.verify('\\frac{1}{2}', '0.5');
  order.push('quick');
  assert.equal(quick.correct, true);
  const ticksAtQuick = ticks;
  const results = await Promise.all(slow);
  clearInterval(timer);
  for (const r of results) {
    assert.equal(r.correct, false);
    assert.match(r.reason, /ran past 500 ms/);
  }
  assert.deepEqual(order, ['quick', 'slow', 'slow'], 'the quick check came back before either slow one');
  // The main thread's timers kept firing while the workers ground (the grinding is off the event loop).
  assert.ok(ticks > ticksAtQuick, `no timer fired while the slow checks ran (${ticks} ticks)`);
  assert.ok(v.pool.terminated >= 2);
  // the replaced workers answer the next symbolic check (its limit one it never means to reach: it takes milliseconds,
  // and a busy machine must not turn its answer into a timeout)
  const after_ = await v.verify('\\sqrt{8}', '2\\sqrt{2}', { timeoutMs: 60_000 });
  assert.equal(after_.correct, true);
  assert.equal(after_.method, 'symbolic');
});
