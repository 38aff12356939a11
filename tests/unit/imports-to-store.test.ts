import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ForeignTrajectory } from '../../contracts/foreign.ts';
import type { StoredTrajectoryContent } from '../../contracts/trajectory.ts';
import { toStoredTrajectory } from '../../server/imports/to-store.ts';

/** prime-rl-like: a reward of 0.10 for a wrong answer (91 for 92), one timed call answered, one untimed message. */
const foreign = (over: Partial<ForeignTrajectory> = {}): ForeignTrajectory => ({
  id: 'r1',
  step: 3,
  split: 'train',
  groupId: 'g1',
  messages: [
    { role: 'user', content: 'What is 46 * 2?' },
    {
      role: 'assistant',
      content: 'Let me compute.',
      toolCalls: [{ id: 'c1', name: 'python', arguments: '{"code": "print(46*2)"}' }],
      time: 1_000,
    },
    { role: 'tool', content: '92', toolCallId: 'c1', time: 1_250 },
    { role: 'assistant', content: 'The answer is 91.' },
  ],
  promptMessages: 1,
  reward: 0.1,
  metadata: {},
  source: { file: 'rollouts/step_3.jsonl', line: 1 },
  ...over,
});

const ctx = { runId: 'run_imp', format: 'prime-rl' as const, sampleIndex: 0 };
const stored = (t: ForeignTrajectory) => {
  const row = toStoredTrajectory(t, ctx);
  return { row, content: row.content as StoredTrajectoryContent };
};

test('an imported trajectory has no verdict, whatever its reward: a partial reward is not a correct answer', () => {
  for (const reward of [0.1, 1, 0, undefined]) {
    const { row, content } = stored(foreign({ reward }));
    assert.equal(row.correct, null, `reward ${reward}`);
    assert.equal(content.verdict.correct, null, `reward ${reward}`);
  }
});

test('what the source did not keep is absent, not 0: turn tokens and generation time; a call timed at both ends has its round trip', () => {
  const { content } = stored(foreign());
  const [call, answer] = content.turns;
  assert.deepEqual(call!.absent, { tokens: true, timing: true });
  assert.deepEqual(answer!.absent, { tokens: true, timing: true });
  assert.equal(call!.tool!.finishedAt - call!.tool!.queuedAt, 250);
  assert.deepEqual(call!.tool!.absent, { tokens: true });
  // The same call without times: its round trip is unknown too.
  const untimed = stored(foreign({ messages: foreign().messages.map(({ time: _t, ...m }) => m) })).content.turns[0]!;
  assert.deepEqual(untimed.tool!.absent, { tokens: true, timing: true });
});
