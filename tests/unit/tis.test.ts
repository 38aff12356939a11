// Truncated importance sampling, TypeScript side: the recipe setting (defaults, errors naming the field), the
// policy_step params rl-step sends (the engine's logprobs, omitted when it gave none), the train/ metrics it
// logs, and the TokenRecord it attaches to each rollout from policy_step's per-token outputs. The weights
// themselves are computed and tested in Python (tests/python/test_losses.py, tests/integration/trainer.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRecipe, validateRecipe, REPORT_DEFAULTS, type RlStage } from '../../contracts/recipe.ts';
import { RL_FIELDS } from '../../components/recipes/fields.ts';
import { CharTokenizer, embeddedTokenizerSpec } from '../../workers/engines/tokenizer.ts';
import { EMBEDDED_TEMPLATE_SETTINGS as S, buildPrompt, toolResponseTurn } from '../../workers/rollout/template.ts';
import {
  appendAssistantTurn,
  appendToolResult,
  newTrajectory,
  parseErrorRecord,
} from '../../workers/rollout/trajectory.ts';
import { policySample } from '../../workers/train/policy-batch.ts';
import { attachTokenRecords, policyMetrics, tisParams, type ScoredRollout } from '../../workers/train/rl-step.ts';
import type { PolicyMetrics } from '../../workers/trainer/types.ts';
import type { ClipState } from '../../contracts/trajectory.ts';

const tok = new CharTokenizer(embeddedTokenizerSpec());
const rl = (over: Record<string, unknown> = {}) => ({
  type: 'rl',
  name: 'rl',
  data: { kind: 'generated', n: 10 },
  ...over,
});

test('recipe: rl stages correct the mismatch by default (token-level, C = 2); a partial setting keeps the other default', () => {
  assert.deepEqual(REPORT_DEFAULTS.rl.tis, { mode: 'token', cap: 2 });
  const r = parseRecipe({
    name: 'x',
    stages: [rl(), rl({ name: 'b', tis: { mode: 'mask' } }), rl({ name: 'c', tis: { cap: 3 } })],
  });
  assert.deepEqual(
    r.stages.map((s) => (s as RlStage).tis),
    [
      { mode: 'token', cap: 2 },
      { mode: 'mask', cap: 2 },
      { mode: 'token', cap: 3 },
    ],
  );
  assert.deepEqual(
    (parseRecipe({ name: 'x', stages: [rl({ tis: { mode: 'off' } })] }).stages[0] as RlStage).tis.mode,
    'off',
  );
  // The designer shows the field with the schema's default.
  assert.equal(RL_FIELDS['tis.mode']!.def, 'token');
  assert.deepEqual(RL_FIELDS['tis.mode']!.options, ['off', 'token', 'sequence', 'mask']);
  assert.equal(RL_FIELDS['tis.cap']!.def, '2');
});

test('recipe: a bad TIS mode or a cap ≤ 1 is rejected with the field path', () => {
  for (const [tis, path, re] of [
    [{ mode: 'geometric' }, 'stages.0.tis.mode', /off, token, sequence, mask/],
    [{ cap: 1 }, 'stages.0.tis.cap', /greater than 1/],
    [{ cap: 0.5 }, 'stages.0.tis.cap', /greater than 1/],
  ] as const) {
    const v = validateRecipe({ name: 'x', stages: [rl({ tis })] });
    assert.equal(v.ok, false);
    if (v.ok) continue;
    const hit = v.errors.find((e) => e.path === path);
    assert.ok(hit, `no error at ${path}: ${JSON.stringify(v.errors)}`);
    assert.match(hit.message, re);
  }
});

test('tisParams: the engine logprobs go to the trainer; an engine that gave none sends none (the step runs uncorrected)', () => {
  const rows = [
    [-0.5, null, -1],
    [null, -2],
  ];
  assert.deepEqual(tisParams(rows, { mode: 'sequence', cap: 3 }), {
    rollout_logprobs: rows,
    tis_mode: 'sequence',
    tis_cap: 3,
  });
  assert.deepEqual(tisParams([[null, null], [null]], { mode: 'token', cap: 2 }), { tis_mode: 'token', tis_cap: 2 });
});

const base: PolicyMetrics = {
  loss: 0.1,
  clip_frac_low: 0,
  clip_frac_high: 0,
  dual_clip_frac: 0,
  approx_kl: 0,
  entropy: 1,
  grad_norm: 1,
  lr: 1e-6,
  tokens: 100,
  masked_tokens: 40,
  tokens_per_s: 10,
  step: 1,
  skipped: false,
  tis_applied: true,
  tis_tokens: 30,
  mismatch_kl: 0.01,
  tis_mean_weight: 0.98,
  tis_truncated_frac: 0.1,
  tis_masked_frac: 0,
  token_weights: [],
  token_clip: [],
};

test('policyMetrics: the TIS numbers under train/, tis_applied as 0/1 and the share of trained tokens it covered', () => {
  const m = policyMetrics(base);
  assert.equal(m['train/mismatch_kl'], 0.01);
  assert.equal(m['train/tis_mean_weight'], 0.98);
  assert.equal(m['train/tis_truncated_frac'], 0.1);
  assert.equal(m['train/tis_masked_frac'], 0);
  assert.equal(m['train/tis_applied'], 1);
  assert.equal(m['train/tis_coverage'], 30 / 40);
  assert.equal(m['train/loss'], 0.1);
  const none = policyMetrics({ ...base, tis_applied: false, tis_tokens: 0 });
  assert.deepEqual([none['train/tis_applied'], none['train/tis_coverage']], [0, 0]);
  assert.ok(Object.values(m).every((x) => typeof x === 'number' && Number.isFinite(x)));
});

function trajectory(q: string, answer: string) {
  const prompt = buildPrompt(q, S);
  let t = newTrajectory(prompt, tok.encode(prompt).length);
  const call =
    'Add.</reason>\n<tool_call>\n{"name": "python", "arguments": {"code": "print(2+3)", "input": ""}}\n</tool_call>';
  const ids1 = tok.encode(call);
  t = appendAssistantTurn(
    t,
    {
      text: call,
      tokens: ids1.length,
      tokenIds: ids1,
      logprobs: ids1.map(() => -0.5),
      engineFinish: 'stop',
      genStartedAt: 0,
      genFinishedAt: 1,
    },
    S,
  );
  const appended = toolResponseTurn('5\n', S);
  t = appendToolResult(t, {
    ...parseErrorRecord('x', appended, tok.encode(appended).length, 2),
    status: 'ok',
    name: 'python',
    arguments: { code: 'print(2+3)', input: '' },
  });
  const fin = `<answer>\\boxed{${answer}}</answer>`;
  const ids2 = tok.encode(fin);
  return appendAssistantTurn(
    t,
    {
      text: fin,
      tokens: ids2.length,
      tokenIds: ids2,
      logprobs: ids2.map(() => -0.25),
      engineFinish: 'stop',
      genStartedAt: 3,
      genFinishedAt: 4,
    },
    S,
  );
}

test("attachTokenRecords: kept rollouts carry the update's per-token arrays (tool tokens blanked), the others none", () => {
  const problem = { id: 'p', question: 'What is 2+3?', answer: '5' };
  const scored = (sample: number, a: string): ScoredRollout => ({
    problem,
    group: 0,
    sample,
    trajectory: trajectory(problem.question, a),
    verdict: { correct: a === '5', method: 'exact', extracted: a, reason: '' },
    reward: a === '5' ? 1 : 0,
    pErr: 0,
    pFormat: 0,
  });
  const rollouts = [scored(0, '5'), scored(1, '6'), scored(2, '7')];
  // Rollouts 1 and 0 are kept, in that order (policy_step's order is the kept list's, not the rollouts').
  const kept = [
    { r: rollouts[1]!, advantage: -1 },
    { r: rollouts[0]!, advantage: 1 },
  ];
  const samples = kept.map((k) => policySample(k.r.trajectory, tok));
  const n = samples.map((s) => s.responseMask.length);
  const old = samples.map((s, i) => s.responseMask.map((_, j) => -0.1 * (i + 1) - j / 1000));
  const policy = {
    token_weights: samples.map((s, i) => s.responseMask.map((_, j) => (j === 0 ? 2 : 1 - i / 10))),
    token_clip: samples.map((s) => s.responseMask.map((_, j): ClipState => (j === 0 ? 4 : 0))),
  };
  attachTokenRecords(rollouts, tok, { kept, old, policy });
  const [r0, r1, r2] = rollouts.map((r) => r.tokens!);
  for (const [rec, i, adv] of [
    [r1!, 0, -1],
    [r0!, 1, 1],
  ] as const) {
    const s = samples[i]!;
    assert.equal(rec.ids.length, n[i]);
    assert.deepEqual(rec.ids, s.ids.slice(s.responseStart));
    assert.deepEqual(rec.mask, s.responseMask);
    assert.equal(rec.advantage, adv);
    assert.equal(rec.weights![0], 2);
    assert.equal(rec.clip![0], 4);
    s.responseMask.forEach((m, j) => {
      if (m) {
        assert.equal(rec.trainerLogprobs![j], old[i]![j]);
        assert.equal(rec.weights![j], policy.token_weights[i]![j]);
      } else {
        assert.ok(
          Number.isNaN(rec.trainerLogprobs![j]!) && Number.isNaN(rec.weights![j]!),
          `tool token ${j} is blanked`,
        );
      }
    });
    assert.equal(rec.rolloutLogprobs[0], -0.5);
  }
  assert.deepEqual([r2!.trainerLogprobs, r2!.weights, r2!.clip, r2!.advantage], [null, null, null, null]);
  assert.equal(r2!.ids.length, policySample(rollouts[2]!.trajectory, tok).responseMask.length);
  // No update (nothing kept): every rollout still gets its record, untrained.
  const again = [scored(0, '5')];
  attachTokenRecords(again, tok, null);
  assert.equal(again[0]!.tokens!.weights, null);
  assert.ok(again[0]!.tokens!.ids.length > 0);
});
