// Answers that would collect a reward without committing to one value.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { MAX_ANSWER_CHARS, Verifier } from '../../workers/reward/verifier.ts';
import { scoreTrajectory } from '../../workers/rollout/score.ts';
import type { Trajectory } from '../../contracts/trajectory.ts';

// Each symbolic check's time limit (2 s by default) is one these verdicts never mean to reach: generous, so that a check
// stalled on a busy machine is still decided by what it computes (tests/unit/reward-timeout.test.ts tests the limit).
const v = new Verifier({ workers: 1, timeoutMs: 60_000 });
after(() => v.close());

test('several \\boxed{} with different values inside <answer> are incorrect; the same value boxed twice is fine', async () => {
  const hedge = await v.verify('4', '<answer>\\boxed{3} \\boxed{4}</answer>');
  assert.equal(hedge.correct, false);
  assert.match(hedge.reason, /hedge/);
  assert.equal((await v.verify('4', '<answer>\\boxed{4} \\boxed{4}</answer>')).correct, true);
});

test('several candidates for a single-value gold are incorrect: a list, a set, words between them', async () => {
  for (const p of ['3, 4', '\\{3,4\\}', '3 \\text{ or } 4', '4 \\text{ and } 5', '(4, 4)']) {
    assert.equal((await v.verify('4', `<answer>\\boxed{${p}}</answer>`)).correct, false, p);
  }
  // A list is settled by the fast path itself (final: Math-Verify, in fallback mode, is not asked).
  for (const p of ['3, 4', '\\{3,4\\}', '3 \\text{ or } 4', '4 \\text{ and } 5', '4; 4']) {
    assert.match((await v.verify('4', `<answer>\\boxed{${p}}</answer>`)).reason, /candidates for one value/, p);
  }
});

test('an enormous expression is incorrect, even one equal to the gold', async () => {
  const huge = `4${'+0'.repeat(MAX_ANSWER_CHARS)}`;
  const r = await v.verify('4', `<answer>\\boxed{${huge}}</answer>`);
  assert.equal(r.correct, false);
  assert.match(r.reason, /answer too long/);
  assert.equal(
    (await v.verify('4', '<answer>\\boxed{4+0+0}</answer>')).correct,
    true,
    'a short expression is still judged',
  );
});

test('in a response, an answer outside <answer> is none (the reward); a bare answer is still read where the text is one', async () => {
  const r = await v.verify('4', 'the answer is 4', { bare: false });
  assert.equal(r.correct, false);
  assert.match(r.reason, /no <answer> block/);
  assert.equal((await v.verify('4', '4', { bare: false })).correct, false);
  assert.equal((await v.verify('4', '4')).correct, true, 'the CLI and corpora pass answers');
  const t = { turns: [{ text: '<reason>2+2</reason>4' }] } as unknown as Trajectory;
  assert.equal((await scoreTrajectory(t, '4', v)).reward, 0, 'the reward reads only <answer>');
  const ok = { turns: [{ text: '<reason>2+2</reason><answer>\\boxed{4}</answer>' }] } as unknown as Trajectory;
  assert.equal((await scoreTrajectory(ok, '4', v)).reward, 1);
});

test('an answer that only repeats an expression of the problem is incorrect; a number, or the gold itself, is judged', async () => {
  const problem = 'What is $1234 \\cdot 5678$? Is it prime (answer yes or no)?';
  const r = await v.verify('7006652', '<answer>\\boxed{1234 \\cdot 5678}</answer>', { problem });
  assert.equal(r.correct, false);
  assert.match(r.reason, /repeats/);
  assert.equal((await v.verify('7006652', '<answer>\\boxed{7006652}</answer>', { problem })).correct, true);
  assert.equal(
    (await v.verify('no', '<answer>\\boxed{no}</answer>', { problem })).correct,
    true,
    'the gold may be a word of the problem',
  );
  assert.equal(
    (await v.verify('1234', '<answer>\\boxed{1234}</answer>', { problem })).correct,
    true,
    'a plain number is a commitment',
  );
  const t = { turns: [{ text: '<answer>\\boxed{1234\\cdot 5678}</answer>' }] } as unknown as Trajectory;
  assert.equal((await scoreTrajectory(t, '7006652', v, problem)).reward, 0);
});
