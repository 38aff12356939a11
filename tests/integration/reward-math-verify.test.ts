// @no-database: runs once, not once per database.
// Math-Verify as the verifier's authoritative last step, through a real sandbox pool whose zygotes preload it:
// what the fast path cannot settle goes to it and its verdict stands; what the fast path settles never reaches it;
// a slow check is ended by the sandbox's wall clock while other checks and the event loop go on.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { MathVerify, MATH_VERIFY_POOL } from '../../workers/reward/math-verify.ts';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import { Verifier } from '../../workers/reward/verifier.ts';
import { verifierFromSettings } from '../../workers/handlers/verifier.ts';
import { VerifierSettingsSchema } from '../../contracts/recipe.ts';

let mv: MathVerify;
let v: Verifier;
/**
 * The Math-Verify limit for every check whose verdict a test reads: the limit is the sandbox's wall clock, which a
 * check of a fraction of a second can outlast on a loaded machine (then the verdict would be "no verdict", not the
 * one asserted). Only the test of the limit itself uses a short one.
 */
const ROOMY_S = 120;
before(async () => {
  mv = MathVerify.owning(await SandboxPool.start({ ...MATH_VERIFY_POOL, size: 2 }));
  v = new Verifier({
    workers: 1,
    mathVerify: 'fallback',
    mathVerifier: mv,
    explain: true,
    mathVerifyTimeLimitS: ROOMY_S,
  });
});
after(async () => {
  await v.close();
  await mv.close();
});

test('what the fast path cannot settle, Math-Verify decides, and the verdict says so', async () => {
  const before = mv.stats.checks;
  // The fast path compares a union of intervals with one interval by shape, and so cannot settle it.
  const r = await v.verify('[1,2]\\cup[2,3]', '[1,3]');
  assert.deepEqual([r.correct, r.method], [true, 'math-verify'], r.reason);
  assert.match(r.reason, /Math-Verify: equal/);
  assert.deepEqual(r.steps!.map((s) => s.step).slice(-3), ['fast path', 'math-verify', 'verdict']);
  const w = await v.verify('[1,2]\\cup[3,4]', '[1,4]');
  assert.deepEqual([w.correct, w.method], [false, 'math-verify'], w.reason);
  assert.equal(mv.stats.checks, before + 2);
});

test('what the fast path settles never reaches Math-Verify', async () => {
  const before = mv.stats.checks;
  for (const [gold, pred, correct] of [
    ['1000000007', '1000000008', false],
    ['\\frac{1}{2}', '0.5', true],
    ['B', '(C)', false],
    ['18446744073709551617', '18446744073709551616', false],
    ['(3,2)', '(p,q)=(3,2)', true],
    ['\\text{east}', 'West', false],
  ] as const) {
    const r = await v.verify(gold, pred);
    assert.equal(r.correct, correct, `${gold} vs ${pred}: ${r.reason}`);
    assert.notEqual(r.method, 'math-verify');
  }
  assert.equal(mv.stats.checks, before);
});

test('a wrong answer Math-Verify alone calls right (a primed letter) is settled before it can be asked', async () => {
  for (const [gold, pred] of [
    ['B', "B'"],
    ['P', "P''"],
  ] as const) {
    assert.equal(
      (await mv.check(gold, pred, ROOMY_S)).equal,
      true,
      `Math-Verify alone drops the prime: ${gold} vs ${pred}`,
    );
    const before = mv.stats.checks;
    const r = await v.verify(gold, pred);
    assert.equal(r.correct, false, `${gold} vs ${pred}: ${r.reason}`);
    assert.equal(r.method, 'exact');
    assert.equal(mv.stats.checks, before, 'Math-Verify was not asked');
  }
});

test('the wrong free-text answers Math-Verify alone pays are incorrect, in fallback and in always mode', async () => {
  const always = new Verifier({ workers: 1, mathVerify: 'always', mathVerifier: mv, mathVerifyTimeLimitS: ROOMY_S });
  try {
    for (const [gold, pred] of [
      ['2', '$2^{10}.$'],
      ['1', 'The answer is $1/3.$'],
      ['4', 'The answer is 4 4/9.'],
      ['1 - \\frac{1}{\\mathrm{e}}', '$1 + \\frac{1}{\\mathrm{e}}$'],
    ] as const) {
      // Math-Verify 0.9.0 as it is reads `$2` out of `$2^{10}.$`, 4 out of the sentence, 1 out of `1 + \frac{1}{`.
      assert.equal((await mv.check(gold, pred, ROOMY_S, true)).equal, true, `Math-Verify alone: ${gold} vs ${pred}`);
      for (const verifier of [v, always]) {
        const r = await verifier.verify(gold, pred);
        assert.equal(r.correct, false, `${gold} vs ${pred}: ${r.reason}`);
      }
    }
    // A formula Math-Verify reads only a fragment of (its clean-up cuts `\mathrm{e}}` short) is no verdict of its own.
    const cut = await mv.check('1 - \\frac{1}{\\mathrm{e}}', '1 + \\frac{1}{\\mathrm{e}}', ROOMY_S);
    assert.equal(cut.equal, null, cut.reason);
    assert.match(cut.reason, /fragment/);
    // A formula it cannot parse gives no number picked out of it: `2^{10}.` is not 2.
    assert.equal((await mv.check('2', '2^{10}.', ROOMY_S)).equal, false);
  } finally {
    await always.close();
  }
});

test("Math-Verify's own test cases through the cascade: no wrong answer is paid; right ones stated in a sentence are", async () => {
  const rows = fs
    .readFileSync(new URL('../fixtures/verifier-corpus-math-verify.jsonl', import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { gold: string; pred: string; equal: boolean; source: string });
  const paid: string[] = [];
  for (const r of rows.filter((x) => !x.equal)) {
    const x = await v.verify(r.gold, r.pred);
    if (x.correct) paid.push(`${r.source}: ${r.gold} vs ${r.pred} (${x.reason})`);
  }
  assert.deepEqual(paid, []);
  for (const [gold, pred] of [
    ['$\\frac{1}{3}$', 'The answer is $\\frac{1}{3}.$'],
    ['$\\sqrt{2}$', '$\\sqrt{2}.$'],
    ['40/9', 'The answer is 4 4/9.'],
    ['$F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}$', '$F_n = \\sum_{k=0}^{n-1} F_{n-k-1} F_k$'],
  ] as const) {
    const x = await v.verify(gold, pred);
    assert.equal(x.correct, true, `${gold} vs ${pred}: ${x.reason}`);
  }
});

test("mode 'always': Math-Verify decides every pair, even one the fast path finds equal", async () => {
  const always = new Verifier({ workers: 1, mathVerify: 'always', mathVerifier: mv, mathVerifyTimeLimitS: ROOMY_S });
  try {
    const r = await always.verify('\\frac{1}{2}', '0.5');
    assert.deepEqual([r.correct, r.method], [true, 'math-verify'], r.reason);
    const n = await always.verify('12', '13');
    assert.deepEqual([n.correct, n.method], [false, 'math-verify'], n.reason);
  } finally {
    await always.close();
  }
});

test('a slow check ends at its time limit without stalling the others or the event loop', async () => {
  const limited = new Verifier({ workers: 1, mathVerify: 'fallback', mathVerifier: mv, mathVerifyTimeLimitS: 0.5 });
  // The other checks go to the same Math-Verify sandboxes beside it, under a limit they cannot reach (a 0.5 s wall
  // clock is one a loaded machine can spend on any check).
  const others = new Verifier({ workers: 1, mathVerify: 'fallback', mathVerifier: mv, mathVerifyTimeLimitS: ROOMY_S });
  try {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    // (x+y+1)^60 - x^60 takes sympy seconds to simplify; the label forces the fast path to defer.
    let ticksBySlowVerdict = -1;
    const slow = limited.verify('f(x,y)=(x+y+1)^{60}', 'f(x,y)=x^{60}+y^{60}').then((r) => {
      ticksBySlowVerdict = ticks;
      return r;
    });
    const quick = Promise.all(
      Array.from({ length: 6 }, (_, i) => others.verify(`[${i},${i + 1}]\\cup[${i + 1},${i + 2}]`, `[${i},${i + 2}]`)),
    );
    const [s, q] = await Promise.all([slow, quick]);
    clearInterval(timer);
    // Ended by its limit (the sandbox's wall clock), not by an answer: that it ends at all is the bound on its time.
    assert.equal(s.correct, false);
    assert.notEqual(s.method, 'math-verify');
    assert.match(s.reason, /Math-Verify no verdict within 0\.5 s/);
    for (const r of q) assert.deepEqual([r.correct, r.method], [true, 'math-verify'], r.reason);
    // The slow check's verdict came at least 0.5 s after it was asked for, and timers ran before it: a check that held
    // the event loop until its verdict would let no 20 ms tick in before it. (How many ticks fit in is the
    // scheduler's affair.)
    assert.ok(ticksBySlowVerdict >= 1, `the event loop ran ${ticksBySlowVerdict} timer ticks before the verdict`);
  } finally {
    await limited.close();
    await others.close();
  }
});

test('a hostile answer is data: it reaches Math-Verify on stdin and never runs', async () => {
  const r = await v.verify('1', '"]]})\nimport os; os.system("echo pwned") #');
  assert.equal(r.correct, false);
  assert.doesNotMatch(JSON.stringify(r), /pwned\n/);
});

test('without Math-Verify the fast path verdict stands, and the reason says the last step was unavailable', async () => {
  const none = new Verifier({ workers: 1, mathVerify: 'fallback', mathVerifier: null });
  try {
    const r = await none.verify('[1,2]\\cup[2,3]', '[1,3]');
    assert.equal(r.correct, false);
    assert.match(r.reason, /Math-Verify unavailable/);
  } finally {
    await none.close();
  }
});

test("a recipe's settings: Math-Verify's own pool starts once, on the first pair the fast path leaves, and closes with the verifier", async () => {
  let starts = 0;
  const w = new Verifier({
    workers: 1,
    mathVerify: 'fallback',
    mathVerifyTimeLimitS: ROOMY_S,
    mathVerifier: async () => {
      starts++;
      return MathVerify.owning(await SandboxPool.start(MATH_VERIFY_POOL));
    },
  });
  try {
    assert.equal((await w.verify('12', '13')).correct, false);
    assert.equal(starts, 0);
    const [a, b] = await Promise.all([w.verify('[1,2]\\cup[2,3]', '[1,3]'), w.verify('[1,2]\\cup[3,4]', '[1,4]')]);
    assert.deepEqual([a.correct, a.method, b.correct, b.method], [true, 'math-verify', false, 'math-verify']);
    assert.equal(starts, 1);
  } finally {
    await w.close();
  }
  // The defaults but for the time limit (the most a recipe may give), for the reason at the top of the file.
  const defaults = verifierFromSettings(VerifierSettingsSchema.parse({ mathVerifyTimeLimitS: 60 }));
  const off = verifierFromSettings(VerifierSettingsSchema.parse({ mathVerify: 'off' }));
  try {
    assert.equal((await defaults.verify('[1,2]\\cup[2,3]', '[1,3]')).method, 'math-verify');
    assert.match((await off.verify('[1,2]\\cup[2,3]', '[1,3]')).reason, /different shapes/);
  } finally {
    await defaults.close();
    await off.close();
  }
});
