import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRecipe } from '../../contracts/recipe.ts';
import { EMBEDDED_ARITH, RSTAR2_QWEN3_14B, RSTAR2_QWEN3_14B_INPUT } from '../../server/recipes/defaults.ts';
import { preflight, storedDatasetNames, type WorkerResources } from '../../contracts/preflight.ts';

// The report's rollout server is configured (TOOLSMITH_ROLLOUT_URLS); any other URL is refused (tested below).
const bare: WorkerResources = {
  modelDir: () => null,
  modelsRoot: '/data/models',
  gpus: 0,
  datasets: new Set(),
  rolloutServers: ['http://rollout-0:30000/v1/'],
};

test("the report's recipe validates with method.md's settings", () => {
  const r = RSTAR2_QWEN3_14B;
  assert.deepEqual(r.model, { kind: 'model', name: 'qwen3-14b-sft' });
  assert.deepEqual(
    r.stages.map(
      (s) =>
        s.type === 'rl' && [
          s.steps,
          s.rolloutsPerPrompt,
          s.keep,
          s.promptsPerStep,
          s.epsLow,
          s.epsHigh,
          s.lr,
          s.warmupSteps,
          s.maxResponseTokens,
          s.maxTurns,
          s.resetOptimizer,
          s.dataFilter.kind,
        ],
    ),
    [
      [300, 32, 16, 512, 0.2, 0.28, 1e-6, 20, 8192, 10, false, 'all'],
      [85, 32, 16, 512, 0.2, 0.28, 1e-6, 20, 12288, 10, false, 'all'],
      [125, 32, 16, 512, 0.2, 0.28, 1e-6, 20, 12288, 15, true, 'hard'],
    ],
  );
  assert.deepEqual([r.eval!.temperature, r.eval!.k, r.eval!.maxTurns], [0.6, 16, 30]);
  assert.match(r.description, /released scripts use 128/);
  assert.deepEqual(parseRecipe(JSON.parse(JSON.stringify(RSTAR2_QWEN3_14B_INPUT))), r);
});

test("preflight names every missing piece of the report's recipe on a bare worker", () => {
  const p = preflight(RSTAR2_QWEN3_14B, bare);
  assert.equal(p.length, 5, p.join('\n'));
  assert.match(p[0]!, /^model\.name: no model "qwen3-14b-sft" under \/data\/models/);
  assert.match(p[1]!, /^dataset "rstar2-rl-42k": not stored here/);
  assert.match(p[2]!, /^dataset "aime24": not stored here/);
  assert.match(p[3]!, /^trainer\.ranks: 8 ranks on cuda need 8 GPUs on this worker; it has 0/);
  assert.match(p[4]!, /^trainer\.nodes: 8 nodes × 8 ranks/);
  assert.match(p[4]!, /needs a cluster to place them: launch the run on Ray \(TOOLSMITH_RAY_ADDRESS/);
  assert.deepEqual(storedDatasetNames(RSTAR2_QWEN3_14B), ['rstar2-rl-42k', 'aime24']);
  // On one 8-GPU node with the model and the data, only the node count remains (the recipe pushes weights to SGLang).
  const ready = {
    ...bare,
    gpus: 8,
    modelDir: (n: string) => `/data/models/${n}`,
    datasets: new Set(['rstar2-rl-42k', 'aime24']),
  };
  assert.deepEqual(
    preflight(RSTAR2_QWEN3_14B, ready).map((x) => x.split(':')[0]),
    ['trainer.nodes'],
  );
  // Inside the run's Ray job the cluster places the 8 × 8 ranks: nothing is left to refuse (the GPUs are the cluster's).
  assert.deepEqual(preflight(RSTAR2_QWEN3_14B, { ...ready, gpus: 0, onRay: true }), []);
  // Without weightSync the servers would never see an update: refused, naming the field.
  const input = JSON.parse(JSON.stringify(RSTAR2_QWEN3_14B_INPUT));
  delete input.engine.weightSync;
  const noSync = preflight(parseRecipe(input), ready);
  assert.equal(noSync.length, 2);
  assert.match(
    noSync[1]!,
    /^engine\.weightSync: rollouts on OpenAI-compatible servers \(http:\/\/rollout-0:30000\/v1\) need the new weights pushed/,
  );
});

test('OpenAI-compatible rollout servers train once weightSync is set; vllm-lora needs a LoRA run', () => {
  const base = JSON.parse(JSON.stringify(RSTAR2_QWEN3_14B_INPUT));
  const ready = {
    ...bare,
    gpus: 8,
    modelDir: (n: string) => `/data/models/${n}`,
    datasets: new Set(['rstar2-rl-42k', 'aime24']),
  };
  const one = { ...base.trainer, nodes: 1 };
  const sg = parseRecipe({ ...base, trainer: one, engine: { ...base.engine, weightSync: { mode: 'sglang' } } });
  assert.deepEqual(preflight(sg, ready), []);
  assert.equal(sg.engine.kind === 'openai' && sg.engine.weightSync?.onnx, false);
  const lora = parseRecipe({ ...base, trainer: one, engine: { ...base.engine, weightSync: { mode: 'vllm-lora' } } });
  assert.deepEqual(
    preflight(lora, ready).map((x) => x.split(':')[0]),
    ['engine.weightSync.mode'],
  );
  const withLora = parseRecipe({
    ...base,
    trainer: { ...one, lora: { rank: 8 } },
    engine: { ...base.engine, weightSync: { mode: 'vllm-lora' } },
  });
  assert.deepEqual(preflight(withLora, ready), []);
  // The folder is a name under the configured root, never a path.
  assert.throws(
    () => parseRecipe({ ...base, engine: { ...base.engine, weightSync: { mode: 'vllm', dir: '../etc' } } }),
    /engine\.weightSync\.dir/,
  );
  assert.throws(
    () => parseRecipe({ ...base, engine: { ...base.engine, weightSync: { mode: 'nccl' } } }),
    /engine\.weightSync\.mode/,
  );
});

test('the embedded recipe needs nothing a fresh worker lacks', () => {
  assert.deepEqual(preflight(EMBEDDED_ARITH, bare), []);
  const two = parseRecipe({ ...JSON.parse(JSON.stringify(EMBEDDED_ARITH)), trainer: { ranks: 2 } });
  assert.deepEqual(preflight(two, bare), []); // 2 ranks on 'auto' run as gloo processes on the CPU
  const cuda = parseRecipe({ ...JSON.parse(JSON.stringify(EMBEDDED_ARITH)), trainer: { ranks: 2, device: 'cuda' } });
  assert.deepEqual(preflight(cuda, { ...bare, gpus: 1 }), [
    'trainer.ranks: 2 ranks on cuda need 2 GPUs on this worker; it has 1',
  ]);
});

test('a recipe names only the rollout servers the deployment configured (no calls to arbitrary addresses)', () => {
  const input = JSON.parse(JSON.stringify(RSTAR2_QWEN3_14B_INPUT));
  input.engine.urls = ['http://rollout-0:30000/v1', 'http://169.254.169.254/latest/meta-data'];
  const ready = {
    ...bare,
    gpus: 8,
    modelDir: (n: string) => `/data/models/${n}`,
    datasets: new Set(['rstar2-rl-42k', 'aime24']),
  };
  const p = preflight(parseRecipe(input), ready);
  assert.deepEqual(
    p.map((x) => x.split(':')[0]),
    ['trainer.nodes', 'engine.urls.1'],
  );
  assert.match(
    p[1]!,
    /^engine\.urls\.1: http:\/\/169\.254\.169\.254\/latest\/meta-data is not one of this deployment's rollout servers \(http:\/\/rollout-0:30000\/v1\); an admin lists them in TOOLSMITH_ROLLOUT_URLS$/,
  );
  assert.match(preflight(parseRecipe(input), { ...ready, rolloutServers: [] })[1]!, /none configured/);
});
