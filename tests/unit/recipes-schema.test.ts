import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UserError } from '../../contracts/errors.ts';
import {
  EMBEDDED_ARITH,
  EMBEDDED_ARITH_INPUT,
  EMBEDDED_ARITH_KNOBS,
  MICRO,
  MICRO_INPUT,
} from '../../server/recipes/defaults.ts';
import {
  parseRecipe,
  REPORT_DEFAULTS,
  stageSteps,
  totalSteps,
  validateRecipe,
  type RlStage,
  type SftStage,
} from '../../contracts/recipe.ts';

const rl = (over: Record<string, unknown> = {}) => ({
  type: 'rl',
  name: 'rl',
  data: { kind: 'generated', n: 10 },
  ...over,
});
const sft = (over: Record<string, unknown> = {}) => ({
  type: 'sft',
  name: 'sft',
  data: { kind: 'generated', n: 100 },
  ...over,
});

test('the built-in recipes parse, and parsing a parsed recipe changes nothing', () => {
  assert.equal(EMBEDDED_ARITH.name, 'embedded-arith');
  assert.deepEqual(
    EMBEDDED_ARITH.stages.map((s) => [s.type, s.name]),
    [
      ['sft', 'sft'],
      ['rl', 'rl-stage-1'],
      ['rl', 'rl-stage-2'],
      ['rl', 'rl-stage-3-hard'],
    ],
  );
  assert.deepEqual(EMBEDDED_ARITH.model, {
    kind: 'embedded',
    arch: 'qwen3',
    n_layer: 4,
    n_head: 4,
    n_embd: 64,
    block_size: 512,
  });
  const [, s1, s2, s3] = EMBEDDED_ARITH.stages as [SftStage, RlStage, RlStage, RlStage];
  assert.ok(s2.maxResponseTokens > s1.maxResponseTokens, 'stage 2 has the longer budget');
  assert.deepEqual(s3.dataFilter, { kind: 'hard', k: EMBEDDED_ARITH_KNOBS.hardK, dropSolved: true });
  // RL starts with fresh moments (not SFT's); stage 2 carries stage 1's; stage 3 resets (the report).
  assert.deepEqual(
    [s1, s2, s3].map((s) => s.resetOptimizer),
    [true, false, true],
  );
  for (const s of [s1, s2, s3]) assert.ok(s.maxResponseTokens < EMBEDDED_ARITH_KNOBS.model.block_size);
  assert.deepEqual(parseRecipe(EMBEDDED_ARITH), EMBEDDED_ARITH);
  assert.deepEqual(parseRecipe(JSON.parse(JSON.stringify(EMBEDDED_ARITH_INPUT))), EMBEDDED_ARITH);
  assert.deepEqual(parseRecipe(MICRO), MICRO);
  assert.equal(MICRO_INPUT.name, 'micro');
});

test('totalSteps: SFT epochs × ⌈demos / batch⌉ (capped by maxSteps) plus RL steps', () => {
  const K = EMBEDDED_ARITH_KNOBS;
  assert.equal(stageSteps(EMBEDDED_ARITH.stages[0]!), K.sftEpochs * Math.ceil(K.sftDemos / K.sftBatch));
  assert.equal(stageSteps(EMBEDDED_ARITH.stages[0]!), 3000);
  assert.equal(totalSteps(EMBEDDED_ARITH), 3000 + K.stage1.steps + K.stage2.steps + K.stage3.steps);
  // micro: 2 epochs × ⌈60 / 4⌉ = 30 SFT steps, 2 RL steps.
  assert.equal(totalSteps(MICRO), 32);
  const r = parseRecipe({
    name: 'x',
    stages: [
      sft({ data: { kind: 'generated', n: 101 }, batch: 10, epochs: 2 }),
      sft({ name: 's2', maxSteps: 5 }),
      rl({ steps: 7 }),
    ],
  });
  assert.deepEqual(r.stages.map(stageSteps), [22, 5, 7]);
  assert.equal(totalSteps(r), 34);
});

test("omitted fields get defaults: the report's where scale-free, scaled ones for the embedded model", () => {
  const r = parseRecipe({ name: 'bare', stages: [sft(), rl()], eval: { datasets: [{ kind: 'generated', n: 5 }] } });
  assert.deepEqual(r.model, { kind: 'embedded', arch: 'qwen3', n_layer: 4, n_head: 4, n_embd: 64, block_size: 512 });
  assert.deepEqual(r.tokenizer, { kind: 'char' });
  assert.deepEqual(r.trainer, { ranks: 1, nodes: 1, device: 'auto', gradientCheckpointing: false, lora: null });
  assert.deepEqual(r.engine, { kind: 'embedded', weights: 'float32', device: 'cpu' });
  assert.deepEqual(r.tool, { timeoutS: 4, memoryMb: 1024, session: false, seedCalls: false });
  assert.equal(r.template.variant, 'minimal');
  assert.equal(r.template.toolName, 'python');
  assert.deepEqual(r.template.toolFormat, { style: 'paper', maxFieldChars: null, middle: null });
  assert.equal(r.seed, 0);
  assert.equal(r.description, '');
  const s = r.stages[0] as SftStage;
  assert.deepEqual([s.epochs, s.warmupRatio, s.schedule, s.maxLength], [3, 0.04, 'cosine', 512]);
  assert.deepEqual(s.data, {
    kind: 'generated',
    task: 'arith',
    n: 100,
    seed: 1,
    shares: { tool: 0.7, recover: 0.15, no_tool: 0.15, direct: 0 },
  });
  const g = r.stages[1] as RlStage;
  assert.deepEqual(g.roc, { enabled: true, positiveSelection: 'weighted', minPerSign: 2, dropEqualReward: true });
  assert.deepEqual([g.epsLow, g.epsHigh, g.dualClip, g.temperature], [0.2, 0.28, null, 1.0]);
  assert.equal(g.keep, g.rolloutsPerPrompt / 2, 'G = half of 2G');
  assert.ok(g.maxResponseTokens < 512);
  assert.deepEqual(g.dataFilter, { kind: 'all' });
  assert.equal(g.resetOptimizer, false);
  assert.deepEqual(g.tool, r.tool);
  assert.deepEqual(g.data, { kind: 'generated', task: 'arith', split: 'train', n: 10, seed: 0 });
  assert.equal(r.eval!.temperature, 0.6);
  assert.equal(r.eval!.everySteps, null);
  assert.equal(r.eval!.datasets[0]!.split, 'test');
  // Hard filter k defaults to the report's 8; plain GRPO keeps every rollout.
  const h = parseRecipe({
    name: 'h',
    stages: [sft(), rl({ dataFilter: { kind: 'hard' }, roc: { enabled: false }, rolloutsPerPrompt: 6 })],
  });
  assert.deepEqual((h.stages[1] as RlStage).dataFilter, { kind: 'hard', k: 8, dropSolved: true });
  assert.equal((h.stages[1] as RlStage).keep, 6);
});

test("a named model gets the report's size-dependent defaults, its own tokenizer and template", () => {
  const r = parseRecipe({
    name: 'big',
    model: { kind: 'model', name: 'qwen3-14b-base' },
    stages: [sft(), rl()],
    eval: { datasets: [{ kind: 'stored', name: 'aime24' }] },
  });
  assert.deepEqual(r.tokenizer, { kind: 'model' });
  const s = r.stages[0] as SftStage;
  const g = r.stages[1] as RlStage;
  assert.deepEqual([s.lr, s.batch], [REPORT_DEFAULTS.sft.lr, REPORT_DEFAULTS.sft.batch]);
  assert.deepEqual(
    [g.lr, g.warmupSteps, g.rolloutsPerPrompt, g.keep, g.promptsPerStep, g.maxResponseTokens],
    [1e-6, 20, 32, 16, 512, 8192],
  );
  assert.deepEqual([r.eval!.k, r.eval!.maxTokens, r.eval!.maxTurns], [16, 30_000, 30]);
  assert.deepEqual([r.template.variant, r.template.toolName], ['full', 'execute_python_code_with_standard_io']);
  assert.deepEqual(r.eval!.datasets[0], { kind: 'stored', name: 'aime24', split: 'test' });
});

/** Each bad input, the path its error must name, and a word of the reason. */
const bad: [string, unknown, string, RegExp][] = [
  ['negative lr', { name: 'x', stages: [rl({ lr: -1e-4 })] }, 'stages.0.lr', /positive/],
  [
    'keep > rolloutsPerPrompt',
    { name: 'x', stages: [sft(), rl({ rolloutsPerPrompt: 8, keep: 9 })] },
    'stages.1.keep',
    /at most rolloutsPerPrompt \(8\)/,
  ],
  [
    'keep = rolloutsPerPrompt with RoC',
    { name: 'x', stages: [sft(), rl({ rolloutsPerPrompt: 8, keep: 8 })] },
    'stages.1.keep',
    /less than rolloutsPerPrompt/,
  ],
  [
    'too few rollouts',
    { name: 'x', stages: [sft(), rl({ rolloutsPerPrompt: 1 })] },
    'stages.1.rolloutsPerPrompt',
    /at least 2/,
  ],
  ['unknown stage type', { name: 'x', stages: [{ type: 'dpo', name: 'd' }] }, 'stages.0.type', /"sft" or "rl"/],
  [
    'n_embd not divisible by n_head',
    { name: 'x', model: { kind: 'embedded', n_head: 5, n_embd: 64 }, stages: [sft()] },
    'model.n_embd',
    /divisible by model.n_head/,
  ],
  [
    'maxResponseTokens ≥ block_size',
    { name: 'x', stages: [sft(), rl({ maxResponseTokens: 512 })] },
    'stages.1.maxResponseTokens',
    /less than model.block_size \(512\)/,
  ],
  ['bad name', { name: 'my recipe!', stages: [sft()] }, 'name', /letters, digits/],
  [
    'a model path instead of a name',
    { name: 'x', model: { kind: 'checkpoint', path: '/etc' }, stages: [sft()] },
    'model.kind',
    /"embedded" or "model"/,
  ],
  [
    'a model name that is a path',
    { name: 'x', model: { kind: 'model', name: '../../etc' }, stages: [sft()] },
    'model.name',
    /letters, digits/,
  ],
  [
    'a tokenizer file path',
    { name: 'x', tokenizer: { kind: 'file', path: '/etc/shadow' }, stages: [sft()] },
    'tokenizer.kind',
    /"char"/,
  ],
  [
    'char tokenizer on a named model',
    { name: 'x', model: { kind: 'model', name: 'm' }, tokenizer: { kind: 'char' }, stages: [sft()] },
    'tokenizer.kind',
    /brings its own tokenizer/,
  ],
  [
    'LoRA on the embedded model',
    { name: 'x', trainer: { lora: {} }, stages: [sft()] },
    'trainer.lora',
    /pretrained model/,
  ],
  [
    'n_kv_head not dividing n_head',
    { name: 'x', model: { kind: 'embedded', n_kv_head: 3 }, stages: [sft()] },
    'model.n_kv_head',
    /divide model.n_head/,
  ],
  ['ranks 0', { name: 'x', trainer: { ranks: 0 }, stages: [sft()] }, 'trainer.ranks', /1/],
  [
    'openai engine without URLs',
    { name: 'x', engine: { kind: 'openai', urls: [] }, stages: [sft()] },
    'engine.urls',
    /at least one/,
  ],
  ['empty stages', { name: 'x', stages: [] }, 'stages', /at least one stage/],
  [
    'bad dataset kind',
    { name: 'x', stages: [rl({ data: { kind: 'url', url: 'http://x' } })] },
    'stages.0.data.kind',
    /"generated" or "stored"/,
  ],
  [
    'bad eval dataset kind',
    { name: 'x', stages: [sft()], eval: { datasets: [{ kind: 'hf', name: 'a' }] } },
    'eval.datasets.0.kind',
    /"generated" or "stored"/,
  ],
  [
    'bad eval pick',
    { name: 'x', stages: [sft()], eval: { datasets: [{ kind: 'stored', name: 'a', limit: 5, pick: 'random' }] } },
    'eval.datasets.0.pick',
    /pick must be "first" or "spread"/,
  ],
  ['duplicate stage names', { name: 'x', stages: [sft(), sft()] }, 'stages.1.name', /unique/],
  [
    'hard filter first',
    { name: 'x', stages: [rl({ dataFilter: { kind: 'hard' } })] },
    'stages.0.dataFilter',
    /trained policy/,
  ],
  ['sft maxLength > block_size', { name: 'x', stages: [sft({ maxLength: 600 })] }, 'stages.0.maxLength', /block_size/],
  ['dual-clip ≤ 1', { name: 'x', stages: [sft(), rl({ dualClip: 0.5 })] }, 'stages.1.dualClip', /greater than 1/],
  [
    'bad family',
    { name: 'x', stages: [sft({ data: { kind: 'generated', n: 3, families: ['calculus'] } })] },
    'stages.0.data.families.0',
    /./,
  ],
  [
    'plain GRPO with keep < 2G',
    { name: 'x', stages: [sft(), rl({ roc: { enabled: false }, rolloutsPerPrompt: 8, keep: 4 })] },
    'stages.1.keep',
    /plain GRPO/,
  ],
];

for (const [what, input, path, reason] of bad) {
  test(`rejected with the field path: ${what}`, () => {
    const v = validateRecipe(input);
    assert.equal(v.ok, false);
    if (v.ok) return;
    const hit = v.errors.find((e) => e.path === path);
    assert.ok(hit, `no error at ${path}: ${JSON.stringify(v.errors)}`);
    assert.match(hit.message, reason);
    assert.throws(
      () => parseRecipe(input),
      (e: unknown) => {
        assert.ok(e instanceof UserError);
        assert.ok(e.message.startsWith('recipe: '), e.message);
        assert.ok(e.message.includes(`${path}: `), e.message);
        return true;
      },
    );
  });
}

test('several problems are all reported at once', () => {
  const v = validateRecipe({
    name: 'bad name',
    model: { kind: 'embedded', n_head: 3 },
    stages: [sft(), rl({ keep: 100, lr: 0 })],
  });
  assert.equal(v.ok, false);
  if (v.ok) return;
  assert.deepEqual(v.errors.map((e) => e.path).sort(), ['model.n_embd', 'name', 'stages.1.keep', 'stages.1.lr']);
});

test('non-objects are rejected without throwing anything but a UserError', () => {
  for (const x of [null, 3, 'recipe', [], { stages: [null] }, { name: 'x', stages: [{ type: 'rl' }] }]) {
    assert.equal(validateRecipe(x).ok, false);
    assert.throws(() => parseRecipe(x), UserError);
  }
});

test("verifier settings: the report's behaviour by default, each field checked", () => {
  const r = parseRecipe({ name: 'v', stages: [sft()] });
  assert.deepEqual(r.verifier, {
    mode: 'answer',
    tolerance: { rel: 1e-8, abs: 1e-9 },
    timeLimitMs: 2000,
    sympy: true,
    sympyTimeLimitS: 5,
    mathVerify: 'fallback',
    mathVerifyTimeLimitS: 5,
  });
  assert.throws(() => parseRecipe({ name: 'v', stages: [sft()], verifier: { mode: 'last' } }), /verifier\.mode/);
  assert.throws(
    () => parseRecipe({ name: 'v', stages: [sft()], verifier: { tolerance: { rel: -1 } } }),
    /verifier\.tolerance\.rel/,
  );
  assert.throws(
    () => parseRecipe({ name: 'v', stages: [sft()], verifier: { timeLimitMs: 10 } }),
    /verifier\.timeLimitMs/,
  );
  assert.throws(
    () => parseRecipe({ name: 'v', stages: [sft()], verifier: { mathVerify: 'sometimes' } }),
    /verifier\.mathVerify/,
  );
  assert.throws(
    () => parseRecipe({ name: 'v', stages: [sft()], verifier: { mathVerifyTimeLimitS: 0 } }),
    /verifier\.mathVerifyTimeLimitS/,
  );
});

test("the embedded engine's weight format: float32 by default, int8/int4 accepted, anything else refused by name", () => {
  const base = { name: 'w', stages: [sft()] };
  assert.deepEqual(parseRecipe({ ...base, engine: { kind: 'embedded', weights: 'int4' } }).engine, {
    kind: 'embedded',
    weights: 'int4',
    device: 'cpu',
  });
  assert.throws(() => parseRecipe({ ...base, engine: { kind: 'embedded', weights: 'int3' } }), /engine\.weights/);
});

test("the embedded engine's device: cpu by default, cuda accepted, anything else refused by name", () => {
  const base = { name: 'd', stages: [sft()] };
  assert.deepEqual(parseRecipe({ ...base, engine: { kind: 'embedded', device: 'cuda' } }).engine, {
    kind: 'embedded',
    weights: 'float32',
    device: 'cuda',
  });
  assert.throws(
    () => parseRecipe({ ...base, engine: { kind: 'embedded', device: 'gpu' } }),
    /engine\.device: device must be "cpu" or "cuda"/,
  );
});
