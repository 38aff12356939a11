// @no-database: runs once, not once per database (the verifier and the sandbox only).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import { Verifier } from '../../workers/reward/verifier.ts';

/** The sympy last resort through the real sandbox: answers go in on stdin, never into the code. */
let pool: SandboxPool;
let v: Verifier;
/**
 * The sympy call's limit (the sandbox's wall clock; 5 s by default) for checks whose verdict a test reads: importing
 * sympy and simplifying can outlast 5 s on a loaded machine, and then the verdict would not be sympy's.
 */
const SYMPY_S = 120;
before(async () => {
  pool = await SandboxPool.start({ size: 1, log: () => {} });
  v = new Verifier({ sandbox: pool, steps: ['sympy'], sympyTimeoutS: SYMPY_S });
});
after(async () => {
  await v.close();
  await pool.close();
});

test('sympy decides equal and not-equal expressions', async () => {
  const a = await v.verify('x^2-1', '(x-1)(x+1)');
  assert.deepEqual([a.correct, a.method], [true, 'sympy'], a.reason);
  const b = await v.verify('\\frac{\\sqrt{3}}{2}', '\\sin(\\pi/3)');
  assert.deepEqual([b.correct, b.method], [true, 'sympy'], b.reason);
  const c = await v.verify('(x+1)^2', 'x^2+1');
  assert.deepEqual([c.correct, c.method], [false, 'sympy'], c.reason);
});

test('a hostile answer is data: it reaches sympy through stdin and does not run', async () => {
  const r = await v.verify('1', '__import__("os").system("echo pwned")');
  assert.equal(r.correct, false);
  assert.doesNotMatch(r.reason, /pwned/);
});

test('without a sandbox the last resort reports itself unavailable', async () => {
  const w = new Verifier({ steps: ['sympy'] });
  try {
    const r = await w.verify('x^2-1', '(x-1)(x+1)');
    assert.equal(r.correct, false);
    assert.match(r.reason, /sympy last resort unavailable/);
  } finally {
    await w.close();
  }
});

test('integers past double precision: the full cascade leaves them to sympy, which compares them exactly', async () => {
  const w = new Verifier({ sandbox: pool, sympyTimeoutS: SYMPY_S });
  try {
    const yes = await w.verify('18446744073709551617', '2^{64}+1');
    assert.deepEqual([yes.correct, yes.method], [true, 'sympy'], yes.reason);
    const no = await w.verify('18446744073709551617', '2^{64}');
    assert.deepEqual([no.correct, no.method], [false, 'sympy'], no.reason);
  } finally {
    await w.close();
  }
});
