import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseRecipe } from '../../contracts/recipe.ts';
import { EMBEDDED_ARITH, RSTAR2_QWEN3_14B } from '../../server/recipes/defaults.ts';
import { checkResources, embeddedParams, type HostResources } from '../../workers/train/resources.ts';
import { modelSize } from '../../workers/train/model-size.ts';
import { config } from '../../server/config.ts';

const GiB = 2 ** 30;
// A small CPU worker: 2 cores, 8 GiB, no GPU, the local sandbox pool (one call per core).
const small: HostResources = { memoryBytes: 8 * GiB, cpus: 2, gpuMemoryBytes: [], sandboxConcurrency: 2 };
const embedded = (over: Record<string, unknown>) =>
  parseRecipe({ ...JSON.parse(JSON.stringify(EMBEDDED_ARITH)), ...over });

test('the default embedded recipe fits a small CPU worker', () => {
  assert.deepEqual(
    checkResources(EMBEDDED_ARITH, small, { params: embeddedParams(EMBEDDED_ARITH.model as never), dtype: 'fp32' }),
    [],
  );
});

test('an embedded model too big for the host is refused naming the field, the figure and the limit', () => {
  const r = embedded({ model: { kind: 'embedded', n_layer: 48, n_embd: 8192, n_head: 64 } });
  const params = embeddedParams(r.model as never);
  assert.ok(params > 51e9 && params < 52e9, `${params}`); // 48 × 16 × 8192² (attention 4d², MLP 12d²)
  const p = checkResources(r, small, { params, dtype: 'fp32' });
  assert.equal(p.length, 1, p.join('\n'));
  assert.match(
    p[0]!,
    /^model\.n_embd: training needs at least [\d.]+ GiB, 51\.5B parameters \(fp32\) × 20 bytes \(fp32 weights, gradients and AdamW's two moments, and the embedded engine's fp32 copy\), over this worker's limit of 8\.0 GiB \(its memory\)$/,
  );
});

test("trainer.ranks over the CPU cores (or the operator's maximum) is refused", () => {
  const r = embedded({ trainer: { ranks: 64, device: 'cpu' } });
  assert.deepEqual(checkResources(r, small, null), [
    "trainer.ranks: 64 ranks is over this worker's limit of 2 (its CPU cores)",
  ]);
  const two = embedded({ trainer: { ranks: 2, device: 'cpu' } });
  assert.deepEqual(checkResources(two, small, null), []);
  assert.deepEqual(checkResources(two, { ...small, maxTrainerRanks: 1 }, null), [
    "trainer.ranks: 2 ranks is over this worker's limit of 1 (TOOLSMITH_MAX_TRAINER_RANKS)",
  ]);
  // auto on a GPU host: one rank per GPU.
  const auto = embedded({ trainer: { ranks: 4 } });
  assert.deepEqual(checkResources(auto, { ...small, cpus: 64, gpuMemoryBytes: [80 * GiB, 80 * GiB] }, null), [
    "trainer.ranks: 4 ranks is over this worker's limit of 2 (its GPUs)",
  ]);
});

test('sandbox memory per call × calls at once over the host (or the maximum) is refused, per stage too', () => {
  const r = embedded({ tool: { memoryMb: 65_536 } });
  assert.deepEqual(checkResources(r, small, null).slice(0, 1), [
    "tool.memoryMb: 65,536 MiB per call × 2 calls at once = 128.0 GiB, over this worker's limit of 8.0 GiB for the sandbox (its memory)",
  ]);
  // The default recipe sets each RL stage's tool limits too: every field that asks too much is named.
  const capped = checkResources(embedded({}), { ...small, maxSandboxMemoryMb: 1024 }, null);
  assert.equal(
    capped[0],
    "tool.memoryMb: 1,024 MiB per call × 2 calls at once = 2.0 GiB, over this worker's limit of 1.0 GiB for the sandbox (TOOLSMITH_MAX_SANDBOX_MEMORY_MB)",
  );
  assert.ok(
    capped.slice(1).every((p) => /^stages\.\d+\.tool\.memoryMb: 1,024 MiB/.test(p)),
    capped.join('\n'),
  );
  const input = JSON.parse(JSON.stringify(EMBEDDED_ARITH));
  const rl = input.stages.findIndex((s: { type: string }) => s.type === 'rl');
  input.stages[rl].tool = { ...input.stages[rl].tool, memoryMb: 8192 };
  assert.deepEqual(
    checkResources(parseRecipe(input), small, null).map((p) => p.split(':')[0]),
    [`stages.${rl}.tool.memoryMb`],
  );
  // Remote sandbox nodes cap calls themselves (sandbox serve --max-memory-mb): not checked here.
  assert.deepEqual(checkResources(r, { ...small, sandboxConcurrency: null }, null), []);
  assert.ok(checkResources(r, small, null).length >= 1);
});

test('tool.session "trajectory": on the local pool its sessions must fit the memory; sandbox nodes bound their own', () => {
  const withSessions = (memoryMb: number, where: 'recipe' | 'stage') => {
    const input = JSON.parse(JSON.stringify(EMBEDDED_ARITH));
    const rl = input.stages.findIndex((s: { type: string }) => s.type === 'rl');
    if (where === 'recipe') input.tool = { ...input.tool, session: 'trajectory', memoryMb };
    else input.stages[rl].tool = { ...input.tool, session: 'trajectory', memoryMb };
    return { recipe: parseRecipe(input), field: where === 'recipe' ? 'tool.session' : `stages.${rl}.tool.session` };
  };
  const only = (ps: string[]) => ps.filter((p) => p.includes('.session'));
  const roomy = { ...small, memoryBytes: 24 * GiB };
  for (const where of ['recipe', 'stage'] as const) {
    const { recipe, field } = withSessions(1024, where);
    // 8 sessions (4 per core on 2 cores) × 1 GiB fit 24 GiB, not 4 GiB.
    assert.deepEqual(only(checkResources(recipe, roomy, null)), []);
    assert.deepEqual(only(checkResources(recipe, { ...roomy, maxSandboxMemoryMb: 4096 }, null)), [
      `${field}: "trajectory" sessions hold up to 1,024 MiB each (tool.memoryMb), 8 open at once = 8.0 GiB, over this worker's limit of 4.0 GiB for the sandbox: lower tool.memoryMb or set tool.session to "replay"`,
    ]);
    // Sandbox nodes (and Ray's) have sessions too and bound them themselves: nothing to refuse here.
    assert.deepEqual(
      only(checkResources(recipe, { ...roomy, sandboxConcurrency: null, maxSandboxMemoryMb: 4096 }, null)),
      [],
    );
  }
});

test("a named model on GPUs: the memory of the ranks' GPUs together (FSDP shards), LoRA needs a quarter", () => {
  const r = RSTAR2_QWEN3_14B; // 8 ranks on cuda
  const size = { params: 14.8e9, dtype: 'bf16' };
  const h100s = {
    memoryBytes: 2048 * GiB,
    cpus: 128,
    gpuMemoryBytes: Array(8).fill(80 * GiB),
    sandboxConcurrency: null,
  };
  assert.deepEqual(checkResources(r, h100s, size), []);
  const p = checkResources(r, { ...h100s, gpuMemoryBytes: Array(8).fill(16 * GiB) }, size);
  assert.deepEqual(
    p.map((x) => x.split(':')[0]),
    ['model.name'],
  );
  assert.match(
    p[0]!,
    /needs at least 220\.5 GiB, 14\.8B parameters \(bf16\) × 16 bytes .* over this worker's limit of 128\.0 GiB \(8 GPUs' memory\)/,
  );
  const lora = parseRecipe({ ...JSON.parse(JSON.stringify(r)), trainer: { ...r.trainer, lora: { rank: 8 } } });
  assert.deepEqual(checkResources(lora, { ...h100s, gpuMemoryBytes: Array(8).fill(16 * GiB) }, size), []);
  assert.match(
    checkResources(r, h100s, size).concat(checkResources(r, { ...h100s, maxTrainerMemoryMb: 1024 }, size))[0]!,
    /TOOLSMITH_MAX_TRAINER_MEMORY_MB/,
  );
});

test('modelSize reads the parameter count and precision from safetensors headers, else config.json', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'model-size-'));
  try {
    const header = JSON.stringify({
      __metadata__: { format: 'pt' },
      'a.weight': { dtype: 'BF16', shape: [1000, 4096], data_offsets: [0, 0] },
      'b.weight': { dtype: 'BF16', shape: [4096], data_offsets: [0, 0] },
    });
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(Buffer.byteLength(header)));
    fs.writeFileSync(path.join(dir, 'model.safetensors'), Buffer.concat([len, Buffer.from(header)]));
    const named = parseRecipe({ ...JSON.parse(JSON.stringify(RSTAR2_QWEN3_14B)) });
    assert.deepEqual(await modelSize(named, dir), { params: 1000 * 4096 + 4096, dtype: 'bfloat16' });
    fs.rmSync(path.join(dir, 'model.safetensors'));
    fs.writeFileSync(
      path.join(dir, 'config.json'),
      JSON.stringify({
        hidden_size: 64,
        num_hidden_layers: 2,
        vocab_size: 100,
        num_attention_heads: 4,
        intermediate_size: 256,
        torch_dtype: 'float32',
      }),
    );
    assert.deepEqual(await modelSize(named, dir), {
      params: 100 * 64 + 2 * (64 * 64 * 2 + 64 * 64 * 2 + 3 * 64 * 256 + 128) + 64,
      dtype: 'float32',
    });
    assert.equal(await modelSize(named, path.join(dir, 'missing')), null);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the maxima are read from the environment and refuse nonsense naming the variable', () => {
  const c = config({
    TOOLSMITH_MAX_TRAINER_RANKS: '4',
    TOOLSMITH_MAX_TRAINER_MEMORY_MB: '65536',
    TOOLSMITH_MAX_SANDBOX_MEMORY_MB: '8192',
  });
  assert.deepEqual([c.maxTrainerRanks, c.maxTrainerMemoryMb, c.maxSandboxMemoryMb], [4, 65536, 8192]);
  assert.equal(config({}).maxTrainerRanks, undefined);
  assert.throws(
    () => config({ TOOLSMITH_MAX_SANDBOX_MEMORY_MB: 'lots' }),
    /TOOLSMITH_MAX_SANDBOX_MEMORY_MB="lots" is not a positive number/,
  );
});

test('a budget the plan exceeds is refused with the figures; within it, nothing is said', () => {
  const params = embeddedParams(EMBEDDED_ARITH.model as never);
  const model = { params, dtype: 'fp32' };
  // The default recipe stores ~40 steps × 64 trajectories × (1.5 KB + ~135 tokens × 20 B): about 11 MB.
  const tight = embedded({ budget: { storageGB: 0.001 } });
  const p = checkResources(tight, small, model);
  assert.equal(p.length, 1, p.join('\n'));
  assert.match(
    p[0]!,
    /^budget\.storageGB: the plan stores [\d.]+ GB of trajectories and token records, over the budget of 0\.001 GB; 40 RL steps of [\d.]+ s on 2 CPU cores/,
  );
  assert.deepEqual(checkResources(embedded({ budget: { storageGB: 100 } }), small, model), []);
  // GPU-hours: none on a CPU worker; on 8 GPUs the report's run is far over 10.
  assert.deepEqual(checkResources(embedded({ budget: { gpuHours: 1 } }), small, model), []);
  const gpuHost: HostResources = { ...small, memoryBytes: 2000 * GiB, cpus: 112, gpuMemoryBytes: Array(8).fill(141e9) };
  const report = parseRecipe({ ...JSON.parse(JSON.stringify(RSTAR2_QWEN3_14B)), budget: { gpuHours: 10 } });
  const q = checkResources(report, gpuHost, { params: 14.8e9, dtype: 'bf16' });
  assert.ok(
    q.some((line) =>
      /^budget\.gpuHours: the plan takes [\d.]+ GPU-hours, over the budget of 10; 510 RL steps/.test(line),
    ),
    q.join('\n'),
  );
  assert.throws(() => embedded({ budget: { gpuHours: 0 } }), /budget\.gpuHours: must be positive/);
});
