// Integers compare exactly at any size, with the separators people write; a tolerance
// (NUMERIC_TOLERANCE) only for numbers that are not both integers; "a, b" with a space is a list, not a number.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Verifier } from '../../workers/reward/verifier.ts';
import { NUMERIC_TOLERANCE, parseExact } from '../../workers/reward/normalize.ts';

// Each symbolic check's time limit (2 s by default) is one these verdicts never mean to reach: generous, so that a check
// stalled on a busy machine is still decided by what it computes (tests/unit/reward-timeout.test.ts tests the limit).
const v = new Verifier({ workers: 1, timeoutMs: 60_000 });
after(() => v.close());
const judge = async (gold: string, pred: string) => (await v.verify(gold, `<answer>\\boxed{${pred}}</answer>`)).correct;

test('big integers off by one are different, at any size', async () => {
  for (const [g, p] of [
    ['1000000007', '1000000008'],
    ['123456789012', '123456789013'],
    ['18446744073709551616', '18446744073709551617'],
    ['18446744073709551616', '18446744073709551615'],
    ['-9007199254740993', '-9007199254740992'],
  ]) {
    assert.equal(await judge(g, p), false, `${g} vs ${p}`);
    assert.equal(await judge(g, g), true, `${g} vs itself`);
  }
  assert.equal(await judge('1000000008', '10^9+7'), false, 'an expression evaluating to the neighbour');
  assert.equal(await judge('1000000007', '10^9+7'), true);
});

test('an integer gold is matched exactly: no tolerance, but equal fractions and trailing zeros are the same number', async () => {
  assert.equal(await judge('12', '12.0000000001'), false);
  assert.equal(await judge('12', '12.0'), true);
  assert.equal(await judge('7', '\\frac{14}{2}'), true);
  assert.equal(await judge('7', '15/2'), false);
  assert.equal(await judge('-3', '(-3)'), true);
});

test('non-integers compare within the stated tolerance', async () => {
  assert.deepEqual(NUMERIC_TOLERANCE, { rel: 1e-8, abs: 1e-9 });
  assert.equal(await judge('0.5', '1/2'), true);
  assert.equal(await judge('3.14159265', '3.1415926535'), true, 'within 1e-8 relative');
  assert.equal(await judge('3.14159', '3.1416'), false);
});

test('thousands separators: 1,000  1{,}000  1\\,000  1 000 are one number; "a, b" with a space is a list', async () => {
  for (const p of ['1,000', '1{,}000', '1\\,000', '1 000', '1\\ 000', '1~000'])
    assert.equal(await judge('1000', p), true, p);
  assert.equal(await judge('1234567', '1,234,567'), true);
  assert.equal(await judge('1234567', '1, 234, 567'), false, 'spaced groups not all of three digits: a list');
  assert.equal(await judge('32349', '32, 349'), false, 'a comma and a space: a list');
  assert.equal(await judge('100000', '100, 000'), true, 'three-digit groups, and the gold is a single integer');
  assert.equal(await judge('32, 349', '32,349'), false, 'a list gold is not one number');
  assert.equal(await judge('32, 349', '349, 32'), true, 'an unbracketed list in any order');
});

test('parseExact keeps big integers and decimals exact', () => {
  assert.deepEqual(parseExact('18446744073709551617'), { n: 18446744073709551617n, d: 1n });
  assert.deepEqual(parseExact('-0.125'), { n: -125n, d: 1000n });
  assert.deepEqual(parseExact('\\frac{3}{-4}'), { n: -3n, d: 4n });
  assert.equal(parseExact('x'), null);
  assert.equal(parseExact('1/0'), null);
});

test('the tolerance is a setting (recipe verifier.tolerance); integers ignore it', async () => {
  const loose = new Verifier({ workers: 1, timeoutMs: 60_000, tolerance: { rel: 1e-3, abs: 0 } });
  try {
    assert.equal((await loose.verify('3.14159', '3.1416')).correct, true);
    assert.equal((await loose.verify('1000', '1001')).correct, false, 'integers still compare exactly');
  } finally {
    await loose.close();
  }
});
