/**
 * The foreign-run mappers for prime-rl, NeMo-RL, ART and rLLM (server/imports/formats/), pure, on records shaped as
 * each producer writes them. The fixtures follow:
 *   prime-rl  PrimeIntellect-ai/prime-rl@559b44772e471d1538537b8805cc77f3824a5e64 src/prime_rl/monitors/file.py
 *             (episodes, metrics.jsonl), src/prime_rl/trainer/rl/token_export.py (token exports); the episode record
 *             is PrimeIntellect-ai/verifiers@a60a606ecc4d309247edf9ff92c3eabca362781f (prime-rl's deps/verifiers pin)
 *             verifiers/v1/episode.py Episode.to_record, trace.py, graph.py MessageNode, types.py;
 *   NeMo-RL   NVIDIA-NeMo/RL@7ea279abfbeb698b092856d0dab61e7cf39bc909 nemo_rl/algorithms/grpo.py (the train and val
 *             log_data), nemo_rl/utils/logger.py log_batched_dict_as_jsonl, nemo_rl/data/llm_message_utils.py;
 *   ART       src/art/utils/trajectory_logging.py write_trajectory_groups_parquet as in
 *             nansen-ai/ART@180839e10a0a9610507ed3f7b7e5fe72049d023d (a fork of OpenPipe/ART: the stored OpenPipe/ART
 *             snapshot, 779559fd0c68ce073cbd041447f88aacf1d9f585, predates the parquet logs);
 *   rLLM      rllm-org/rllm@9beb6e0f676a46d38858991fd79ac5f8e0b16d4c rllm/utils/episode_logger.py, rllm/types.py,
 *             rllm/trainer/algorithms/transform.py (groups, the reward broadcast).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mapArtRow } from '../../server/imports/formats/art.ts';
import { detectFormat } from '../../contracts/foreign-layouts.ts';
import { mapNemoRlLine } from '../../server/imports/formats/nemo-rl.ts';
import {
  mapPrimeRlLine,
  mapPrimeRlMetricsLine,
  mapPrimeRlTokenExportLine,
} from '../../server/imports/formats/prime-rl.ts';
import { mapRllmEpisode } from '../../server/imports/formats/rllm.ts';
import { artRow, primeEpisode, rllmDoc } from '../helpers/foreign-records.ts';
import { tokenSequenceKey, withTrainerSide } from '../../server/imports/token-join.ts';

const clone = <T>(v: T): T => structuredClone(v);

// ---------------------------------------------------------------- prime-rl

const primeFile = 'rollouts/step_42/train/effective/traces.jsonl';

const prime = (o: unknown, file = primeFile, split: 'train' | 'eval' = 'train') =>
  mapPrimeRlLine(o, { file, line: 3, split });

test('prime-rl: a trace becomes a trajectory with its messages, calls, results, tokens, rewards, group, step, policy', () => {
  const r = prime(primeEpisode);
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.trajectories.length, 1);
  const t = r.trajectories[0]!;
  assert.equal(t.id, 'tr-0a', "the trace's own id");
  assert.equal(t.groupId, '7');
  assert.equal(t.step, 42);
  assert.equal(t.split, 'train');
  assert.deepEqual(t.policy, { start: 40, end: 41 });
  assert.deepEqual(
    t.messages.map((m) => m.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  assert.equal(t.promptMessages, 2);
  assert.equal(t.messages[1]!.content, 'What is 23*4?', 'content parts give their text');
  assert.deepEqual(t.messages[2]!.toolCalls, [{ id: 'call_1', name: 'python', arguments: '{"code":"print(23*4)"}' }]);
  assert.equal(t.messages[3]!.toolCallId, 'call_1');
  assert.equal(t.messages[3]!.content, '92\n');
  assert.equal(t.messages[2]!.time, 1760000001500, 'node timestamps (epoch s) as epoch ms');
  assert.deepEqual(t.tokens, {
    promptIds: [1, 2, 3, 4, 5, 6],
    ids: [10, 11, 20, 21, 6, 12],
    mask: [1, 1, 0, 0, 0, 1],
    rolloutLogprobs: [-0.1, -0.2, 0, 0, 0, -0.3],
    advantages: [0.5, 0.5, 0, 0, 0, 0.5],
  });
  assert.ok(Math.abs(t.reward! - 1.1) < 1e-12, 'Σ score × weight over the scored rewards');
  assert.deepEqual(t.rewards, { correct: 1, format: 0.5 }, 'unweighted scores; the unscored judge is absent');
  assert.equal(t.advantage, 0.5);
  assert.deepEqual(t.metadata.rewards, primeEpisode.traces[0]!.rewards, 'weights kept where one is not 1');
  assert.deepEqual(t.metadata.info, { source: 'gsm8k' });
  assert.deepEqual(t.metadata.metrics, { num_tool_calls: 1 });
  assert.equal(t.metadata.stop_condition, 'no_tool_calls');
  assert.deepEqual((t.metadata.nodes as Record<string, unknown>[])[2], {
    is_content: [false, true, true],
    message: { reasoning_content: 'multiply' },
  });
  assert.deepEqual((t.metadata.episode as Record<string, unknown>).env, { id: 'math-python', name: 'math' });
  assert.equal(t.answer, undefined);
  assert.deepEqual(t.source, { file: primeFile, line: 3 });
});

test('prime-rl: nested OpenAI tool calls are read too; what the trace lacks stays absent', () => {
  const e = clone(primeEpisode) as unknown as { traces: Record<string, unknown>[]; group?: unknown };
  const nodes = e.traces[0]!.nodes as Record<string, unknown>[];
  (nodes[2]!.message as Record<string, unknown>).tool_calls = [
    { id: 'call_1', type: 'function', function: { name: 'python', arguments: '{"code":"1"}' } },
  ];
  for (const n of nodes) delete n.advantages;
  delete e.traces[0]!.rewards;
  delete e.traces[0]!.info;
  delete e.group;
  const r = prime(e);
  assert.ok(r.ok, JSON.stringify(r));
  const t = r.trajectories[0]!;
  assert.deepEqual(t.messages[2]!.toolCalls, [{ id: 'call_1', name: 'python', arguments: '{"code":"1"}' }]);
  assert.equal(t.tokens!.advantages, undefined, 'no node was assigned credit: absent, not zeros');
  assert.equal(t.reward, undefined);
  assert.equal(t.rewards, undefined);
  assert.equal(t.advantage, undefined);
  assert.equal(t.metadata.rewards, undefined);
  assert.equal(t.groupId, 'task:gsm8k-17', 'ungrouped: by task');
  const noTokens = clone(primeEpisode) as unknown as { traces: { nodes: Record<string, unknown>[] }[] };
  for (const n of noTokens.traces[0]!.nodes) {
    n.token_ids = [];
    n.mask = [];
    n.logprobs = [];
    delete n.advantages;
  }
  const nt = prime(noTokens);
  assert.ok(nt.ok);
  assert.equal(nt.trajectories[0]!.tokens, undefined, 'relay turns with no token ids: no token record');
});

test('prime-rl: several traces keep their ids; a forked trace gives a trajectory per branch, shared turns trained once', () => {
  const node = (parent: number | undefined, role: string, sampled: boolean, ids: number[]) => ({
    ...(parent === undefined ? {} : { parent }),
    message: { role, content: `${role} ${ids.join(',')}` },
    sampled,
    token_ids: ids,
    mask: ids.map(() => sampled),
    logprobs: sampled ? ids.map(() => -1) : [],
  });
  const forked = {
    id: 'tr-fork',
    nodes: [
      node(undefined, 'user', false, [1]),
      node(0, 'assistant', true, [2]),
      node(1, 'user', false, [3]),
      node(2, 'assistant', true, [4]),
      node(1, 'user', false, [5]),
      node(4, 'assistant', true, [6]),
    ],
    rewards: { correct: { score: 1, weight: 1 } },
  };
  const e = { ...clone(primeEpisode), traces: [clone(primeEpisode.traces[0]!), forked] };
  const r = prime(e);
  assert.ok(r.ok, JSON.stringify(r));
  assert.deepEqual(
    r.trajectories.map((t) => t.id),
    ['tr-0a', 'tr-fork/b0', 'tr-fork/b1'],
  );
  const [b0, b1] = [r.trajectories[1]!, r.trajectories[2]!];
  assert.deepEqual(
    b0.messages.map((m) => m.content),
    ['user 1', 'assistant 2', 'user 3', 'assistant 4'],
  );
  assert.deepEqual(
    b1.messages.map((m) => m.content),
    ['user 1', 'assistant 2', 'user 5', 'assistant 6'],
  );
  assert.deepEqual(b0.tokens, { promptIds: [1], ids: [2, 3, 4], mask: [1, 0, 1], rolloutLogprobs: [-1, 0, -1] });
  assert.deepEqual(
    b1.tokens,
    { promptIds: [1, 2, 5], ids: [6], mask: [1], rolloutLogprobs: [-1] },
    'the shared assistant turn is context in the second branch',
  );
  assert.ok(b0.groupId === b1.groupId && b0.reward === 1 && b1.reward === 1);
  const noIds = {
    ...clone(primeEpisode),
    traces: [
      { ...forked, id: undefined },
      { ...forked, id: undefined },
    ],
  };
  const n = prime(noIds);
  assert.ok(n.ok);
  assert.deepEqual(
    n.trajectories.map((t) => t.id),
    ['ep-5c1e/0/b0', 'ep-5c1e/0/b1', 'ep-5c1e/1/b0', 'ep-5c1e/1/b1'],
    'no trace id: the episode id and the trace index',
  );
});

test('prime-rl: eval work, a standalone eval run (step from the folder), failed episodes and malformed lines', () => {
  const evalWork = clone(primeEpisode);
  evalWork.run.work = { type: 'eval', step: 40, policy: undefined as never };
  delete (evalWork.run.work as { policy?: unknown }).policy;
  const e = prime(evalWork, 'rollouts/step_40/eval/all/traces.jsonl', 'eval');
  assert.ok(e.ok);
  assert.equal(e.trajectories[0]!.split, 'eval');
  assert.equal(e.trajectories[0]!.policy, undefined, 'frozen-policy work has no span');
  const standalone = { ...clone(primeEpisode), run: { type: 'eval', id: 'eval-1' } };
  const s = prime(standalone, 'rollouts/step_9/eval/all/traces.jsonl', 'eval');
  assert.ok(s.ok && s.trajectories[0]!.step === 9);
  const failed = { ...clone(primeEpisode), ok: false, errors: [{ type: 'SandboxError', message: 'boot timeout' }] };
  failed.traces = [];
  const f = prime(failed);
  assert.ok(!f.ok);
  assert.equal(f.problem.reason, 'field "traces" is empty (the episode failed: SandboxError: boot timeout)');
  assert.equal(f.problem.line, 3);
  const badStep = clone(primeEpisode) as unknown as { run: { work: { step: unknown } } };
  badStep.run.work.step = 'x';
  const b = prime(badStep);
  assert.ok(!b.ok && b.problem.reason === 'field "run.work.step" is not a number');
  const badRole = clone(primeEpisode) as unknown as { traces: { nodes: { message: { role: string } }[] }[] };
  badRole.traces[0]!.nodes[0]!.message.role = 'developer';
  const br = prime(badRole);
  assert.ok(!br.ok && /traces\[0\]\.nodes\[0\]\.message\.role "developer"/.test(br.problem.reason), JSON.stringify(br));
  const badMask = clone(primeEpisode);
  badMask.traces[0]!.nodes[1]!.mask = [false];
  const bm = prime(badMask);
  assert.ok(!bm.ok && /nodes\[1\]\.mask has 1 entries for 3 token ids/.test(bm.problem.reason));
  const noId = prime({ traces: [] });
  assert.ok(!noId.ok && noId.problem.reason === 'field "id" is missing');
});

const tokenExport = {
  schema_version: 1,
  step: 42,
  rank: 0,
  micro_step: 0,
  micro_sequence_idx: 1,
  export_sequence_idx: 3,
  env_name: 'math',
  token_ids: [1, 2, 3, 10, 11],
  position_ids: [0, 1, 2, 3, 4],
  loss_mask: [false, false, false, true, true],
  advantages: [0, 0, 0, 0.5, 0.5],
  inference_logprobs: [0, 0, 0, -0.1, -0.2],
  trainer_logprobs: [-1.5, -0.7, -0.2, -0.11, -0.19],
  entropy: [0.9, 0.4, null, 0.3, 0.2],
  mismatch_kl: [0, 0, 0, 0.001, 0.0005],
  log_importance_ratio: [0, 0, 0, -0.01, 0.01],
  importance_ratio: [1, 1, 1, 0.99, 1.01],
  prob_delta: [0, 0, 0, -0.01, 0.01],
  is_masked: [false, false, false, false, false],
  is_masked_high: [false, false, false, false, false],
  is_masked_low: [false, false, false, false, false],
  rl_weights: [null, null, null, null, null],
  ce_weights: [null, null, null, null, null],
  ref_kl_weights: [null, null, null, null, null],
};

test('prime-rl token exports: the sample tokens as the trainer saw them; a column with a non-finite value stays out', () => {
  const r = mapPrimeRlTokenExportLine(tokenExport, { file: 'token_exports/step_42/rank_0.jsonl', line: 4 });
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.step, 42);
  assert.equal(r.rank, 0);
  assert.equal(r.sequence, 3);
  assert.equal(r.envName, 'math');
  assert.equal(r.tokens.entropies, undefined, 'entropy held a null (non-finite): absent');
  assert.deepEqual(r.tokens, {
    promptIds: [1, 2, 3],
    ids: [10, 11],
    mask: [1, 1],
    rolloutLogprobs: [-0.1, -0.2],
    trainerLogprobs: [-0.11, -0.19],
    advantages: [0.5, 0.5],
  });
  assert.deepEqual(r.metadata.entropy, tokenExport.entropy);
  assert.deepEqual(r.metadata.position_ids, [0, 1, 2, 3, 4]);
  assert.equal(r.metadata.micro_step, 0);
  assert.equal(r.metadata.token_ids, undefined);
  const short = mapPrimeRlTokenExportLine({ ...tokenExport, trainer_logprobs: [0] }, { file: 'f', line: 5 });
  assert.ok(!short.ok && short.problem.reason === 'field "trainer_logprobs" has 1 entries for 5 token ids');
  const none = mapPrimeRlTokenExportLine({ step: 1 }, { file: 'f', line: 6 });
  assert.ok(!none.ok && none.problem.reason === 'field "token_ids" is missing');
});

test('prime-rl metrics.jsonl: step, time and the numeric values; the rest in metadata', () => {
  const r = mapPrimeRlMetricsLine(
    { step: 42, time: 1760000000.5, 'perf/mfu': 41.2, 'time/step': 12.5, 'reward/mean': 0.6, tag: 'x' },
    { file: 'metrics.jsonl', line: 43 },
  );
  assert.deepEqual(r, {
    ok: true,
    step: 42,
    time: 1760000000.5,
    values: { 'perf/mfu': 41.2, 'time/step': 12.5, 'reward/mean': 0.6 },
    metadata: { tag: 'x' },
  });
  const noTime = mapPrimeRlMetricsLine({ step: 1, loss: 0.1 }, { file: 'metrics.jsonl', line: 1 });
  assert.ok(noTime.ok && noTime.time === undefined);
  const bad = mapPrimeRlMetricsLine({ time: 1 }, { file: 'metrics.jsonl', line: 2 });
  assert.deepEqual(bad, { ok: false, problem: { file: 'metrics.jsonl', line: 2, reason: 'field "step" is missing' } });
});

// ---------------------------------------------------------------- NeMo-RL

/** A train line: a batch slice of one sample, every column a list of one entry, token columns padded to 11. */
const nemoTrain = {
  content: [
    [
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n',
      '<|im_start|>user\nWhat is 23*4?<|im_end|>\n<|im_start|>assistant\n',
      'The answer is 92.',
      'Environment: correct',
    ],
  ],
  rewards: [1.0],
  input_lengths: [9],
  token_ids: [[1, 2, 3, 4, 5, 10, 11, 12, 20, 0, 0]],
  token_loss_mask: [[0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0]],
  sample_loss_mask: [1.0],
  advantages: [[0, 0, 0, 0, 0, 0.7, 0.7, 0.7, 0, 0, 0]],
  generation_logprobs: [[0, 0, 0, 0, 0, -0.1, -0.2, -0.3, 0, 0, 0]],
  prev_logprobs: [[-1, -1, -1, -1, -1, -0.12, -0.21, -0.29, -2, 0, 0]],
  idx: 3,
};

const nemo = (o: unknown, file = 'train_data_step5.jsonl', split: 'train' | 'eval' = 'train') =>
  mapNemoRlLine(o, { file, line: 4, split, step: 5 });

test('NeMo-RL train: roles from the log shape, tokens cut to the sample length and split at the loss mask', () => {
  const r = nemo(nemoTrain);
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.trajectories.length, 1);
  const t = r.trajectories[0]!;
  assert.equal(t.id, 'train_data_step5.jsonl:4');
  assert.equal(t.step, 5);
  assert.equal(t.split, 'train');
  assert.deepEqual(
    t.messages.map((m) => m.role),
    ['system', 'user', 'assistant', 'tool'],
  );
  assert.equal(t.promptMessages, 2);
  assert.equal(t.messages[2]!.content, 'The answer is 92.');
  assert.equal(t.reward, 1);
  assert.deepEqual(t.tokens, {
    promptIds: [1, 2, 3, 4, 5],
    ids: [10, 11, 12, 20],
    mask: [1, 1, 1, 0],
    rolloutLogprobs: [-0.1, -0.2, -0.3, 0],
    trainerLogprobs: [-0.12, -0.21, -0.29, -2],
    advantages: [0.7, 0.7, 0.7, 0],
  });
  assert.deepEqual(t.metadata, { sample_loss_mask: 1, idx: 3 }, "the sample's entry of a batch column");
  assert.equal(t.rewards, undefined);
  assert.equal(t.advantage, undefined);
  assert.equal(t.policy, undefined);
});

test('NeMo-RL train: several turns alternate assistant and observation; the same prompt is one group', () => {
  const multi = {
    content: [['<|im_start|>user\nPlay.<|im_end|>\n<|im_start|>assistant\n', 'move 1', 'board A', 'move 2', 'done']],
    rewards: [0.5],
    input_lengths: [6],
    token_ids: [[1, 2, 3, 4, 5, 6]],
    token_loss_mask: [[0, 1, 0, 1, 0, 0]],
    idx: 0,
  };
  const r = nemo(multi);
  assert.ok(r.ok, JSON.stringify(r));
  assert.deepEqual(
    r.trajectories[0]!.messages.map((m) => m.role),
    ['user', 'assistant', 'tool', 'assistant', 'tool'],
  );
  assert.equal(r.trajectories[0]!.promptMessages, 1);
  const again = nemo({ ...multi, content: [['<|im_start|>user\nPlay.<|im_end|>\n<|im_start|>assistant\n', 'x', 'y']] });
  const other = nemo({ ...multi, content: [['<|im_start|>user\nOther.<|im_end|>\n', 'x', 'y']] });
  assert.ok(again.ok && other.ok);
  assert.equal(r.trajectories[0]!.groupId, again.trajectories[0]!.groupId);
  assert.notEqual(r.trajectories[0]!.groupId, other.trajectories[0]!.groupId);
});

test('NeMo-RL val: the message log keeps its roles (environment as tool); older dumps have no tokens', () => {
  const val = {
    content: [
      [
        { role: 'user', content: '<|im_start|>user\nWhat is 23*4?<|im_end|>\n<|im_start|>assistant\n' },
        { role: 'assistant', content: '92' },
        { role: 'environment', content: 'Environment: correct' },
      ],
    ],
    rewards: [1.0],
    idx: 0,
  };
  const r = nemo(val, 'val_data_step5.jsonl', 'eval');
  assert.ok(r.ok, JSON.stringify(r));
  const t = r.trajectories[0]!;
  assert.equal(t.split, 'eval');
  assert.deepEqual(
    t.messages.map((m) => m.role),
    ['user', 'assistant', 'tool'],
  );
  assert.equal(t.promptMessages, 1);
  assert.equal(t.tokens, undefined);
  assert.deepEqual(t.metadata, { idx: 0 });
  const older = { content: nemoTrain.content, rewards: [0], generation_logprobs: [[0, -0.1]], idx: 1 };
  const o = nemo(older);
  assert.ok(o.ok);
  assert.equal(o.trajectories[0]!.tokens, undefined, 'no token ids: no token record');
  assert.deepEqual(o.trajectories[0]!.metadata, { generation_logprobs: [0, -0.1], idx: 1 }, 'unmapped: kept');
});

test('NeMo-RL: a slice of several samples gives several trajectories; malformed lines are problems', () => {
  const two = {
    content: [
      ['<|im_start|>user\nQ<|im_end|>\n', 'a', 'ok'],
      ['<|im_start|>user\nQ<|im_end|>\n', 'b', 'no'],
    ],
    rewards: [1, 0],
    idx: 0,
  };
  const r = nemo(two);
  assert.ok(r.ok, JSON.stringify(r));
  assert.deepEqual(
    r.trajectories.map((t) => [t.id, t.reward]),
    [
      ['train_data_step5.jsonl:4/0', 1],
      ['train_data_step5.jsonl:4/1', 0],
    ],
  );
  const noReward = nemo({ content: nemoTrain.content, idx: 0 });
  assert.deepEqual(noReward, {
    ok: false,
    problem: { file: 'train_data_step5.jsonl', line: 4, reason: 'field "rewards" is missing' },
  });
  const short = nemo({ ...nemoTrain, prev_logprobs: [[0, 0]] });
  assert.ok(!short.ok && short.problem.reason === 'field "prev_logprobs" has 2 entries for 9 tokens');
  const ragged = nemo({ ...nemoTrain, input_lengths: [9, 9] });
  assert.ok(!ragged.ok && ragged.problem.reason === 'field "input_lengths" is not a list of 1 per-sample entries');
  const badRole = nemo({ content: [[{ role: 'critic', content: 'x' }]], rewards: [1] });
  assert.ok(!badRole.ok && /content\[0\]\.role "critic"/.test(badRole.problem.reason));
  const noStep = mapNemoRlLine(nemoTrain, { file: 'dump.jsonl', line: 1 });
  assert.ok(!noStep.ok && /no step in the file name/.test(noStep.problem.reason));
});

// ---------------------------------------------------------------- ART

const art = (o: unknown, file = 'trajectories/train/0004.parquet', split: 'train' | 'eval' = 'train') =>
  mapArtRow(o, { file, line: 7, split, step: 4 });

test('ART: a row becomes a trajectory with its calls, results, reward and group; JSON columns land parsed in metadata', () => {
  const r = art(artRow);
  assert.ok(r.ok, JSON.stringify(r));
  const t = r.trajectories[0]!;
  assert.equal(t.id, 'trajectories/train/0004.parquet:7');
  assert.equal(t.step, 4);
  assert.equal(t.split, 'train');
  assert.equal(t.groupId, 'group:2');
  assert.deepEqual(
    t.messages.map((m) => m.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  assert.equal(t.promptMessages, 2);
  assert.deepEqual(t.messages[2], {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'call_a', name: 'search', arguments: '{"q":"invoice"}' }],
  });
  assert.equal(t.messages[3]!.toolCallId, 'call_a');
  assert.equal(t.messages[4]!.trainable, undefined, 'a sampled message is trained on: the default');
  assert.equal(t.reward, 0.8);
  assert.deepEqual(t.metadata, {
    group_metadata: null,
    group_metrics: { judge_score: 0.4 },
    group_logs: null,
    metrics: { correct: 1, turns: 2 },
    metadata: { scenario_id: 's-9' },
    tools: [{ type: 'function', function: { name: 'search', parameters: { type: 'object' } } }],
    logs: ['searched once'],
  });
  assert.equal(t.tokens, undefined);
  assert.equal(t.rewards, undefined);
  assert.equal(t.advantage, undefined);
});

test('ART: an assistant message given as a dict is not trained on; tool_calls may be a list; no reward is absent', () => {
  const row = clone(artRow) as unknown as { messages: Record<string, unknown>[]; reward: unknown; step?: number };
  row.messages.splice(2, 0, { role: 'assistant', content: 'Earlier answer.', tool_calls: null, trainable: false });
  row.messages[3]!.tool_calls = [{ id: 'call_a', type: 'function', function: { name: 'search', arguments: '{}' } }];
  row.reward = null;
  const r = art(row, 'trajectories/val/0012.parquet', 'eval');
  assert.ok(r.ok, JSON.stringify(r));
  const t = r.trajectories[0]!;
  assert.equal(t.split, 'eval');
  assert.equal(t.messages[2]!.trainable, false);
  assert.equal(t.promptMessages, 3, 'the prompt ends at the first sampled message');
  assert.deepEqual(t.messages[3]!.toolCalls, [{ id: 'call_a', name: 'search', arguments: '{}' }]);
  assert.equal(t.reward, undefined);
  const fromName = mapArtRow(artRow, { file: 'm/trajectories/val/10001.parquet', line: 1 });
  assert.ok(fromName.ok && fromName.trajectories[0]!.step === 10001 && fromName.trajectories[0]!.split === 'eval');
});

test('ART: malformed rows are problems naming the field', () => {
  const noGroup = art({ ...artRow, group_index: undefined });
  assert.ok(!noGroup.ok && noGroup.problem.reason === 'field "group_index" is missing');
  const badJson = art({ ...artRow, metrics: '{"correct": ' });
  assert.ok(!badJson.ok && badJson.problem.reason === 'field "metrics" is not valid JSON');
  const badCalls = art({ ...artRow, messages: [{ ...artRow.messages[2]!, tool_calls: '[{' }] });
  assert.ok(!badCalls.ok && badCalls.problem.reason === 'messages[0].tool_calls is not valid JSON');
  const noMessages = art({ ...artRow, messages: null });
  assert.deepEqual(noMessages, {
    ok: false,
    problem: { file: 'trajectories/train/0004.parquet', line: 7, reason: 'field "messages" is not a list' },
  });
});

// ---------------------------------------------------------------- rLLM

const rllmFile = 'episodes/train_step_3_epoch_0/episode_hashab12cd34_idtask-17_2.json';

const rllm = (o: unknown, file = rllmFile) => mapRllmEpisode(o, { file, split: 'train' });

test('rLLM: each trajectory of an episode, its steps merged into one conversation, rewards per step and in total', () => {
  const r = rllm(rllmDoc);
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.trajectories.length, 2);
  const [solver, judge] = r.trajectories as [(typeof r.trajectories)[number], (typeof r.trajectories)[number]];
  assert.equal(solver.id, '0b7c9a52-solver');
  assert.equal(solver.step, 3);
  assert.equal(solver.split, 'train');
  assert.equal(solver.groupId, 'task-17:solver', "rLLM's own group: task and agent");
  assert.deepEqual(
    solver.messages.map((m) => m.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  assert.equal(solver.promptMessages, 2);
  assert.deepEqual(solver.messages[2]!.toolCalls, [
    { id: 'call_1', name: 'python', arguments: '{"code":"print(23*4)"}' },
  ]);
  assert.equal(solver.messages[3]!.toolCallId, 'call_1');
  assert.equal(solver.reward, 1, 'no trajectory reward: the last step’s, as rLLM broadcasts it');
  assert.deepEqual(solver.rewards, { step_0: 0, step_1: 1 });
  assert.deepEqual(solver.metadata.messageFields, { 2: { reasoning: '23*4' } });
  assert.deepEqual((solver.metadata.steps as Record<string, unknown>[])[0], {
    observation: 'What is 23*4?',
    thought: '23*4',
    action: { tool: 'python' },
    done: false,
    model_response: 'Let me compute.',
    timing: { llm: 1.1 },
  });
  assert.equal(solver.metadata.name, 'solver');
  assert.equal((solver.metadata.episode as Record<string, unknown>).is_correct, true);
  assert.deepEqual(solver.source, { file: rllmFile, line: 0 });
  assert.equal(solver.tokens, undefined, 'rLLM logs no token ids');
  assert.equal(solver.advantage, undefined);
  assert.equal(solver.policy, undefined);
  assert.equal(judge.groupId, 'task-17:judge');
  assert.equal(judge.reward, 1, 'the trajectory reward where the workflow set one');
  assert.deepEqual(judge.rewards, { step_0: 0 });
});

test('rLLM: steps that restart the context add their messages; ids without uid; step and split from the folder', () => {
  const doc = clone(rllmDoc) as unknown as Record<string, unknown> & { trajectories: Record<string, unknown>[] };
  doc.trajectories = [doc.trajectories[1]!];
  delete doc.trajectories[0]!.uid;
  delete doc.training_step;
  (doc.trajectories[0]!.steps as unknown[]).push({
    reward: 1,
    chat_completions: [
      { role: 'user', content: 'Sure?' },
      { role: 'assistant', content: 'Yes.' },
    ],
  });
  const r = mapRllmEpisode(doc, { file: 'episodes/val_step_8_epoch_1/episode_hash00_idtask-17_2.json' });
  assert.ok(r.ok, JSON.stringify(r));
  const t = r.trajectories[0]!;
  assert.equal(t.id, 'task-17:2');
  assert.equal(t.step, 8);
  assert.equal(t.split, 'eval');
  assert.deepEqual(
    t.messages.map((m) => m.content),
    ['Is 92 right for 23*4?', 'Correct.', 'Sure?', 'Yes.'],
  );
  const noReward = clone(rllmDoc);
  noReward.trajectories[0]!.steps = [];
  const n = rllm(noReward);
  assert.ok(n.ok);
  assert.equal(n.trajectories[0]!.reward, undefined, 'no reward and no step: absent');
  assert.equal(n.trajectories[0]!.rewards, undefined);
});

test('rLLM: malformed documents are problems naming the field', () => {
  const noId = rllm({ ...rllmDoc, episode_id: undefined });
  assert.deepEqual(noId, { ok: false, problem: { file: rllmFile, line: 0, reason: 'field "episode_id" is missing' } });
  const empty = rllm({ ...rllmDoc, trajectories: [] });
  assert.ok(!empty.ok && empty.problem.reason === 'field "trajectories" is empty');
  const summary = rllm({ training_step: 3, epoch: 0, mode: 'train', num_episodes: 8, episode_files: [] });
  assert.ok(!summary.ok && summary.problem.reason === 'field "episode_id" is missing');
  const bad = clone(rllmDoc) as unknown as { trajectories: { steps: { chat_completions: unknown }[] }[] };
  bad.trajectories[0]!.steps[1]!.chat_completions = [{ role: 'user', content: 'x' }, { content: 'no role' }];
  const b = rllm(bad);
  assert.ok(!b.ok && /trajectories\[0\]\.steps\[1\]\.chat_completions\[1\]\.role/.test(b.problem.reason));
});

test('detect: ART step files past 9999 and rLLM episodes, not their batch summaries', () => {
  const a = detectFormat(['m/trajectories/train/9999.parquet', 'm/trajectories/train/10000.parquet']);
  assert.ok(a.ok && a.format === 'art' && a.files.length === 2);
  const r = detectFormat([
    'episodes/train_step_1_epoch_0/episode_hashab_idt_0.json',
    'episodes/train_step_1_epoch_0/batch_summary.json',
  ]);
  assert.ok(r.ok && r.format === 'rllm');
  assert.deepEqual(r.files, ['episodes/train_step_1_epoch_0/episode_hashab_idt_0.json']);
});

test("prime-rl token export join: the key is the whole sequence; the trainer's side is added whole, entropies only where none", () => {
  assert.equal(tokenSequenceKey([1, 2], [3]), tokenSequenceKey([1, 2], [3]));
  assert.notEqual(tokenSequenceKey([1, 2], [3]), tokenSequenceKey([1], [2, 3]), 'where the completion starts counts');
  assert.notEqual(tokenSequenceKey(undefined, [12, 3]), tokenSequenceKey([1], [23]));
  const record = {
    ids: [10, 11],
    mask: [1, 1],
    turn: [0, 0],
    chars: [0, 0],
    rolloutLogprobs: [-0.1, -0.2],
    entropy: [Number.NaN, Number.NaN],
    trainerLogprobs: null,
    weights: null,
    clip: null,
    advantage: 0.5,
  };
  const joined = withTrainerSide(record, { ids: [10, 11], trainerLogprobs: [-0.11, -0.19], entropies: [0.3, 0.2] });
  assert.deepEqual(joined, {
    ...record,
    entropy: [0.3, 0.2],
    trainerLogprobs: [-0.11, -0.19],
    weights: [Number.NaN, Number.NaN],
    clip: [0, 0],
  });
  const measured = { ...record, entropy: [0.9, 0.8] };
  assert.deepEqual(
    withTrainerSide(measured, { ids: [10, 11], trainerLogprobs: [-1, -1], entropies: [0.3, 0.2] })?.entropy,
    [0.9, 0.8],
    "the rollout's own entropies stay",
  );
  assert.equal(withTrainerSide(record, { ids: [10], trainerLogprobs: [-1] }), null, 'another length: nothing joined');
  assert.equal(withTrainerSide(record, { ids: [10, 11] }), null, 'nothing to add');
});
