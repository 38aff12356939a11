// A free-text answer (no \boxed{}) is the formula it states, so that no wrong answer is paid
// because the sentence around it, or a full stop inside its math, was compared instead. The Math-Verify step on the
// same cases: tests/integration/reward-math-verify.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, test } from 'node:test';
import { extractAnswer, statedAnswer } from '../../workers/reward/extract.ts';
import { normalize } from '../../workers/reward/normalize.ts';
import { Verifier } from '../../workers/reward/verifier.ts';

// Each symbolic check's time limit (2 s by default) is one these verdicts never mean to reach: generous, so that a check
// stalled on a busy machine is still decided by what it computes (tests/unit/reward-timeout.test.ts tests the limit).
const v = new Verifier({ workers: 1, timeoutMs: 60_000 });
after(() => v.close());

/** Math-Verify's own test cases, as bench:verify runs them (each row names its test file, commit and test). */
const upstream = fs
  .readFileSync(new URL('../fixtures/verifier-corpus-math-verify.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { gold: string; pred: string; equal: boolean; source: string });

test("the four wrong free-text answers are incorrect (Math-Verify's own test cases)", async () => {
  for (const [gold, pred] of [
    ['2', '$2^{10}.$'],
    ['1', 'The answer is $1/3.$'],
    ['4', 'The answer is 4 4/9.'],
    ['1 - \\frac{1}{\\mathrm{e}}', '$1 + \\frac{1}{\\mathrm{e}}$'],
  ]) {
    const r = await v.verify(gold, pred);
    assert.equal(r.correct, false, `${gold} vs ${pred}: ${r.reason}`);
  }
});

test('a free-text answer is the formula it states: lead-in words, full stop and math delimiters go', () => {
  for (const [text, formula] of [
    ['$2^{10}.$', '2^{10}'],
    ['The answer is $1/3.$', '1/3'],
    ['The answer is 4 4/9.', '4 4/9'],
    ['$1 + \\frac{1}{\\mathrm{e}}$', '1 + \\frac{1}{\\mathrm{e}}'],
    ['So the final answer is: $\\frac{1}{3}$.', '\\frac{1}{3}'],
    ['Answer: 12', '12'],
    ['$$\\frac{1}{3}.$$', '\\frac{1}{3}'],
    ['\\[\\frac{1}{3}.\\]', '\\frac{1}{3}'],
    ['\\(x+1\\),', 'x+1'],
    ['$\\frac{1}{3} .$', '\\frac{1}{3}'],
  ])
    assert.equal(statedAnswer(text), formula, text);
});

test('what is not one stated formula is left as it is: two spans, a unit after the math, an ellipsis, a ratio', () => {
  for (const text of ['$1$ and $2$', '$28$ percent', '1, 2, 3, ...', 'a:b', 'x = 3', 'the east', '5!'])
    assert.equal(statedAnswer(text), text, text);
  // An ellipsis inside the delimiters stays: `1, 2, 3, ...` is not the list `1, 2, 3`.
  assert.equal(statedAnswer('$1, 2, 3, ...$'), '1, 2, 3, ...');
});

test('extraction applies it to a bare answer and to an <answer> block without a box, not to a box', () => {
  assert.equal(extractAnswer('<answer>The answer is 42.</answer>').answer, '42');
  assert.equal(extractAnswer('The answer is $1/3.$').answer, '1/3');
  assert.equal(extractAnswer('The answer is $1/3.$', 'boxed').answer, '1/3');
  assert.equal(extractAnswer('<answer>\\boxed{2^{10}}</answer>').answer, '2^{10}');
  assert.equal(extractAnswer('<answer>.</answer>').answer, null, 'a full stop alone states nothing');
  // A response still needs its <answer>: a sentence outside one is no answer in the reward.
  assert.equal(extractAnswer('The answer is 4.', 'answer', false).answer, null);
});

test('a percent word is the percent sign; a mixed number may space its whole part in thousands', () => {
  assert.deepEqual(normalize('4 4/9 percentage'), { s: '\\frac{40}{9}', percent: true, degrees: false });
  assert.deepEqual(normalize('4 4/9pct'), { s: '\\frac{40}{9}', percent: true, degrees: false });
  assert.equal(normalize('the percentage').percent, false, 'a word answer is no percentage');
  assert.equal(normalize('1 000 4/9').s, '\\frac{9004}{9}');
});

test("Math-Verify's own test cases: every wrong answer is incorrect, and a representative set of right ones correct", async () => {
  const paid: string[] = [];
  await Promise.all(
    upstream
      .filter((r) => !r.equal)
      .map(async (r) => {
        const x = await v.verify(r.gold, r.pred);
        if (x.correct) paid.push(`${r.source}: ${JSON.stringify(r.gold)} vs ${JSON.stringify(r.pred)} (${x.reason})`);
      }),
  );
  assert.deepEqual(paid, [], 'no wrong answer is paid');
  for (const [gold, pred] of [
    ['$\\frac{1}{3}$', 'The answer is $\\frac{1}{3}.$'],
    ['$\\frac{1}{3}$', '\\[\\frac{1}{3}.\\]'],
    ['$(1,2)$', '$(1,2).$'],
    ['$5$', '$5 \\text{ cm}.$'],
    ['40/9', 'The answer is 4 4/9.'],
    ['71/6', '+11 5/6'],
    ['9004/9', '1 000 4/9'],
    ['40/900', '4 4/9 percentage'],
    ['$1 - \\frac{1}{\\mathrm{e}}$', '$1 - \\frac{1}{\\mathrm{e}}$'],
    ['$19, 46, and 82$', '$19, 46, \\text{ and } 82$'],
  ]) {
    assert.ok(
      upstream.some((r) => r.gold === gold && r.pred === pred && r.equal),
      `${gold} vs ${pred} is in the fixture`,
    );
    const r = await v.verify(gold, pred);
    assert.equal(r.correct, true, `${gold} vs ${pred}: ${r.reason}`);
  }
});
