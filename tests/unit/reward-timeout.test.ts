import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Verifier } from '../../workers/reward/verifier.ts';

const v = new Verifier({ workers: 2 });
after(() => v.close());

test('a pathological expression is cut off at its limit, the event loop stays responsive, and the pool recovers', async () => {
  await v.pool.warm();
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const t0 = Date.now();
  // (10^7)! makes compute-engine grind (bignum factorial) far past the limit.
  const slow = [
    v.verify('(10^{7})!', '(10^{7}+1)!', { timeoutMs: 500 }),
    v.verify('(10^{7}+2)!', '(10^{7}+3)!', { timeoutMs: 500 }),
  ];
  // a cheap check issued meanwhile is not held up by the event loop
  const quick = await v.verify('\\frac{1}{2}', '0.5');
  assert.equal(quick.correct, true);
  const results = await Promise.all(slow);
  const elapsed = Date.now() - t0;
  clearInterval(timer);
  for (const r of results) {
    assert.equal(r.correct, false);
    assert.match(r.reason, /ran past 500 ms/);
  }
  assert.ok(elapsed < 2500, `took ${elapsed} ms`);
  assert.ok(ticks >= (elapsed / 10) * 0.5, `event loop starved: ${ticks} ticks in ${elapsed} ms`);
  assert.ok(v.pool.terminated >= 2);
  // the replaced workers answer the next symbolic check
  const after_ = await v.verify('\\sqrt{8}', '2\\sqrt{2}', { timeoutMs: 5000 });
  assert.equal(after_.correct, true);
  assert.equal(after_.method, 'symbolic');
});
