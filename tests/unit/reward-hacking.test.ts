// Issue 15, requirement 5 (in part): answers that would collect a reward without committing to one value.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { MAX_ANSWER_CHARS, Verifier } from '../../workers/reward/verifier.ts';

const v = new Verifier({ workers: 1 });
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
});

test('an enormous expression is incorrect, even one equal to the gold', async () => {
  const huge = `4${'+0'.repeat(MAX_ANSWER_CHARS)}`;
  const r = await v.verify('4', `<answer>\\boxed{${huge}}</answer>`);
  assert.equal(r.correct, false);
  assert.match(r.reason, /answer too long/);
  assert.equal((await v.verify('4', '<answer>\\boxed{4+0+0}</answer>')).correct, true, 'a short expression is still judged');
});
