/**
 * The foreign-run mappers (server/imports/formats/), pure, on records shaped as each producer writes them:
 *   verl  RayPPOTrainer._dump_generations (verl/trainer/ppo/ray_trainer.py): input, output, gts, score, step, extra
 *         reward keys, uid in newer trainers only;
 *   TRL   GRPOTrainer with log_completions=True: step, prompt, completion, one column per reward function, advantage;
 *   ATIF  laude-institute/harbor docs/rfcs/0001-trajectory-format.md, the RFC whose changelog reads v1.4 (read from a
 *         mirror of its main branch; no commit id of it could be had on this machine, so the version is the pin).
 * The real producers' own files are imported by the integration tests where they run here
 * (tests/integration/imports-producers.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mapAtifDocument } from '../../server/imports/formats/atif.ts';
import { detectFormat } from '../../contracts/foreign-layouts.ts';
import { mapTrlRow } from '../../server/imports/formats/trl.ts';
import { mapVerlLine } from '../../server/imports/formats/verl.ts';
import { parseRewardWeights } from '../../contracts/reward-weights.ts';

const verl = (o: unknown, line = 1) => mapVerlLine(o, { file: 'rollout/3.jsonl', line, split: 'train' });

test('verl: a line becomes one trajectory; extra numeric keys are reward components, the rest metadata', () => {
  const r = verl({ input: 'Q: 2+2?', output: 'It is 4.', gts: '4', score: 1.0, step: 3, acc: true, pred: '4' });
  assert.ok(r.ok);
  const [t] = r.trajectories;
  assert.equal(t!.step, 3);
  assert.equal(t!.reward, 1);
  assert.deepEqual(t!.rewards, { acc: 1 });
  assert.equal(t!.answer, '4');
  assert.deepEqual(t!.metadata, { pred: '4' });
  assert.deepEqual(
    t!.messages.map((m) => m.role),
    ['user', 'assistant'],
  );
  assert.equal(t!.promptMessages, 1);
  assert.equal(t!.tokens, undefined, 'verl keeps no tokens: absent, not empty');
  assert.equal(t!.advantage, undefined);
});

test('verl: the group is the uid where the dump has one, else the identical input', () => {
  const a = verl({ input: 'same', output: 'x', score: 0, step: 1 }, 1);
  const b = verl({ input: 'same', output: 'y', score: 1, step: 1 }, 2);
  const c = verl({ input: 'other', output: 'z', score: 1, step: 1 }, 3);
  const d = verl({ input: 'same', output: 'w', score: 1, step: 1, uid: 'g-7' }, 4);
  assert.ok(a.ok && b.ok && c.ok && d.ok);
  assert.equal(a.trajectories[0]!.groupId, b.trajectories[0]!.groupId);
  assert.notEqual(a.trajectories[0]!.groupId, c.trajectories[0]!.groupId);
  assert.equal(d.trajectories[0]!.groupId, 'g-7');
  assert.notEqual(a.trajectories[0]!.id, b.trajectories[0]!.id);
});

test('verl: a malformed line is a problem naming the file, the line and the field', () => {
  const r = verl({ input: 'q', output: 'a', step: 2 }, 17);
  assert.deepEqual(r, {
    ok: false,
    problem: { file: 'rollout/3.jsonl', line: 17, reason: 'field "score" is missing' },
  });
  const s = verl([1, 2], 18);
  assert.ok(!s.ok && /not an object/.test(s.problem.reason));
});

test('TRL: the reward is the weighted sum of the reward columns, which stay beside it; None is absent', () => {
  const row = { step: 5, prompt: 'Q', completion: 'A', accuracy_reward: 1, format_reward: 0.5, advantage: 0.7 };
  const r = mapTrlRow(row, { file: 'completions/completions_00005.parquet', line: 2 });
  assert.ok(r.ok);
  assert.equal(r.trajectories[0]!.reward, 1.5);
  assert.deepEqual(r.trajectories[0]!.rewards, { accuracy_reward: 1, format_reward: 0.5 });
  assert.equal(r.trajectories[0]!.advantage, 0.7);
  const w = mapTrlRow(row, { file: 'f', line: 2, weights: { accuracy_reward: 2, format_reward: 0.1 } });
  assert.ok(w.ok);
  assert.equal(w.trajectories[0]!.reward, 2.05);
  const none = mapTrlRow({ ...row, format_reward: null }, { file: 'f', line: 3 });
  assert.ok(none.ok);
  assert.deepEqual(none.trajectories[0]!.rewards, { accuracy_reward: 1 });
  const noReward = mapTrlRow({ step: 1, prompt: 'Q', completion: 'A' }, { file: 'f', line: 4 });
  assert.ok(!noReward.ok && noReward.problem.reason === 'no reward column');
});

test('TRL: conversational prompts and completions keep their messages; one prompt in one step is one group', () => {
  const prompt = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Q' },
  ];
  const a = mapTrlRow(
    { step: 1, prompt, completion: [{ role: 'assistant', content: 'A' }], r: 1 },
    { file: 'f', line: 1 },
  );
  const b = mapTrlRow(
    { step: 1, prompt, completion: [{ role: 'assistant', content: 'B' }], r: 0 },
    { file: 'f', line: 2 },
  );
  assert.ok(a.ok && b.ok);
  assert.equal(a.trajectories[0]!.promptMessages, 2);
  assert.deepEqual(
    a.trajectories[0]!.messages.map((m) => m.role),
    ['system', 'user', 'assistant'],
  );
  assert.equal(a.trajectories[0]!.groupId, b.trajectories[0]!.groupId);
});

const atifDoc = {
  schema_version: 'ATIF-v1.4',
  session_id: 'sess-1',
  agent: { name: 'toolsmith', version: '1' },
  steps: [
    { step_id: 1, source: 'system', message: 'You may run Python.' },
    { step_id: 2, source: 'user', message: 'What is 23*4?', timestamp: '2026-10-16T14:30:00Z' },
    {
      step_id: 3,
      source: 'agent',
      message: 'Let me compute.',
      tool_calls: [{ tool_call_id: 'c1', function_name: 'python', arguments: { code: 'print(23*4)' } }],
      observation: { results: [{ source_call_id: 'c1', content: '92\n' }] },
      metrics: { prompt_token_ids: [1, 2, 3], completion_token_ids: [10, 11], logprobs: [-0.1, -0.2] },
    },
    {
      step_id: 4,
      source: 'agent',
      message: 'The answer is 92.',
      metrics: { completion_token_ids: [12], logprobs: [-0.3] },
    },
  ],
  extra: { reward: 1, step: 7, group_id: 'g1', note: 'kept' },
};

test('ATIF: steps become messages with calls and their results; tokens and logprobs concatenate; reward from extra', () => {
  const r = mapAtifDocument(atifDoc, { file: 'a/trajectory.json' });
  assert.ok(r.ok);
  const t = r.trajectories[0]!;
  assert.deepEqual(
    t.messages.map((m) => m.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  assert.equal(t.promptMessages, 2);
  assert.deepEqual(t.messages[2]!.toolCalls, [{ id: 'c1', name: 'python', arguments: '{"code":"print(23*4)"}' }]);
  assert.equal(t.messages[3]!.toolCallId, 'c1');
  assert.equal(t.messages[1]!.time, Date.parse('2026-10-16T14:30:00Z'));
  assert.deepEqual(t.tokens, { promptIds: [1, 2, 3], ids: [10, 11, 12], rolloutLogprobs: [-0.1, -0.2, -0.3] });
  assert.equal(t.reward, 1);
  assert.equal(t.step, 7);
  assert.equal(t.groupId, 'g1');
  assert.deepEqual(t.metadata.extra, { note: 'kept' });
});

test("ATIF: no reward in the document is absent, or the caller's (Harbor's verifier/reward.txt); partial tokens are absent", () => {
  const doc = structuredClone(atifDoc) as typeof atifDoc;
  doc.extra = { reward: undefined as never, step: 0, group_id: 'g', note: '' };
  delete (doc.steps[3] as { metrics?: unknown }).metrics;
  const r = mapAtifDocument(doc, { file: 'f.json' });
  assert.ok(r.ok);
  assert.equal(r.trajectories[0]!.reward, undefined);
  assert.equal(r.trajectories[0]!.tokens, undefined, 'one agent step without token ids: no token record at all');
  const withFile = mapAtifDocument(doc, { file: 'f.json', reward: 0.25 });
  assert.ok(withFile.ok && withFile.trajectories[0]!.reward === 0.25);
  const bad = mapAtifDocument({ ...atifDoc, schema_version: 'OTHER-2' }, { file: 'x.json' });
  assert.ok(!bad.ok && /not ATIF v1/.test(bad.problem.reason));
});

test('detect: each framework is known by its layout; none or several is an error saying to name one', () => {
  const cases: [string[], string][] = [
    [['rollouts/step_0/train/all/traces.jsonl', 'metrics.jsonl'], 'prime-rl'],
    [['monitors/file/traces/stream.jsonl', 'monitors/file/traces/stream.index.jsonl'], 'prime-rl'],
    [['rollout/1.jsonl', 'rollout/10.jsonl', 'rollout/2.jsonl'], 'verl'],
    [['train_data_step1.jsonl', 'val_data_step1.jsonl'], 'nemo-rl'],
    [['out/completions/completions_00001.parquet'], 'trl'],
    [['trajectories/train/0001.parquet'], 'art'],
    [['episodes/train_step_1_epoch_0/ep-1.json'], 'rllm'],
    [['trial-1/agent/trajectory.json', 'trial-1/verifier/reward.txt'], 'atif'],
  ];
  for (const [paths, format] of cases) {
    const d = detectFormat(paths);
    assert.ok(d.ok, `${paths}: ${JSON.stringify(d)}`);
    assert.equal(d.format, format);
  }
  const verlFiles = detectFormat(['rollout/1.jsonl', 'rollout/10.jsonl', 'rollout/2.jsonl']);
  assert.ok(verlFiles.ok);
  assert.deepEqual(
    verlFiles.files,
    ['rollout/1.jsonl', 'rollout/2.jsonl', 'rollout/10.jsonl'],
    'steps in number order',
  );
  const none = detectFormat(['README.md']);
  assert.ok(!none.ok && /--format/.test(none.reason));
  const both = detectFormat(['1.jsonl', 'train_data_step1.jsonl']);
  assert.ok(!both.ok && /several formats/.test(both.reason));
});

test('reward weights from name=w text (the CLI flag and the Import run field): each entry named when it is wrong', () => {
  assert.deepEqual(parseRewardWeights('accuracy=1, format = 0.5,', '--weights'), { accuracy: 1, format: 0.5 });
  assert.deepEqual(parseRewardWeights('', 'Reward weights'), {});
  for (const bad of ['accuracy', 'accuracy=', '=1', 'a=1=2', 'a=x', 'a=Infinity'])
    assert.throws(
      () => parseRewardWeights(bad, 'Reward weights'),
      (e: Error) => e.message === `Reward weights: "${bad}" is not name=number`,
      bad,
    );
});
