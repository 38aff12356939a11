/**
 * bench:engine — decode throughput of the embedded ONNX engine on the two models it serves, in one run: the
 * embedded default (the SFT'd 0.3M-parameter character model, tests/helpers/embedded-sft.ts) and the real pretrained
 * SmolLM2-135M-Instruct (fetched by its pins, tests/helpers/real-model.ts) exported with each weight format
 * (contracts/engine.ts ENGINE_WEIGHTS: float32, int8, int4; workers/trainer/onnx_weights.py). For each: one request,
 * then 16 at once, then 32 (as the RL loop batches rollouts), each sampling up to 96 tokens (temperature 1; a request may stop earlier at its end-of-turn token)
 * from the same minimal-template GSM8K prompt; tokens generated / wall time, medians of 3. Per format also the graph's
 * size, export_onnx.py's re-export time, and the log-prob mismatch of the batch-16 samples against transformers'
 * float32 scoring of the same tokens (bench/engine_refs.py mismatch): what RL's importance correction sees.
 *
 * Then two references on the same weights, same prompt, same 96 sampled tokens at temperature 1, same threads (the
 * machine's cores), batch 1 and 16, medians of 3: llama.cpp (node-llama-cpp 3.21.1's prebuilt CPU binary, from the
 * bench's own package bench/llama-cpp/, installed here on first use with `npm ci --omit=optional --ignore-scripts` so
 * the root install never carries its 700 MB of GPU binaries) on the Q4_1 GGUF SmolLM2 is fetched from, 16 sequences
 * of one context decoded together (bench/llama-cpp/rate.mjs); and transformers' generate() with its KV cache on the
 * float32 Hugging Face directory the engine was exported from (bench/engine_refs.py, the trainer's Python). Last, the
 * limits this machine sets (bench/engine_refs.py limits): float32 weight bytes over measured copy bandwidth bound
 * batch 1, FLOPs per token (2 x parameters) over measured sgemm GFLOP/s bound batch 16.
 *
 * Last, groups as the RL loop samples them (printGroups): eight rollouts of each of four prompts at once, the prompt
 * prefilled by each rollout against once for its group (GenerateRequest.sharedPrompt), side by side.
 *
 *   npx tsx bench/engine-models.ts [--groups]   (--groups: only that table, embedded and SmolLM2 int8)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ENGINE_WEIGHTS, type EngineWeights } from '../contracts/engine.ts';
import { OnnxEngine } from '../workers/engines/onnx-engine.ts';
import { EMBEDDED_TEMPLATE_SETTINGS, buildPrompt } from '../workers/rollout/template.ts';
import { ensureEmbeddedSftModel } from '../tests/helpers/embedded-sft.ts';
import { realGguf, realModel, realOnnx } from '../tests/helpers/real-model.ts';
import { trainerPython } from '../workers/trainer/python.ts';

const QUESTION =
  'John has 10 hectares of pineapple field. There are 100 pineapples per hectare. John can harvest his pineapples every 3 months. How many pineapples can John harvest within a year?';
const TOKENS = 96;
const ROUNDS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

type Sample = { tokenIds: number[]; logprobs: number[] | null };

async function rate(dir: string, batch: number): Promise<{ tps: number; tokens: number; samples: Sample[] }> {
  // Batch 32 with 32 rows, as the RL loop loads the engine (workers/engines/create.ts); 1 and 16 with 16, as before.
  const engine = await OnnxEngine.load(dir, { maxBatch: Math.max(16, batch) });
  const prompt = buildPrompt(QUESTION, EMBEDDED_TEMPLATE_SETTINGS);
  try {
    const runs: number[] = [];
    let outs: Sample[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      outs = await Promise.all(
        Array.from({ length: batch }, (_, i) =>
          engine.generate({ prompt, maxTokens: TOKENS, temperature: 1, topP: 1, stop: [], seed: r * 100 + i }),
        ),
      );
      runs.push(outs.reduce((s, o) => s + o.tokenIds.length, 0) / ((performance.now() - t0) / 1000));
    }
    return { tps: median(runs), tokens: outs.reduce((s, o) => s + o.tokenIds.length, 0), samples: outs };
  } finally {
    await engine.close();
  }
}

/** export_onnx.py's own timing of one export of the HF directory with these weights (the model already loaded). */
function exportSeconds(hf: string, weights: EngineWeights): number | string {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-export-'));
  try {
    const r = child(trainerPython(), [
      path.join(import.meta.dirname, '../workers/trainer/export_onnx.py'),
      '--out',
      out,
      '--model',
      hf,
      '--weights',
      weights,
    ]);
    return r.ok ? (r.value as { seconds: number }).seconds : r.error;
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/** Four more questions: with QUESTION, the prompts of the groups below. */
const GROUP_QUESTIONS = [
  QUESTION,
  'A baker makes 24 muffins a day and sells them in boxes of 6. How many boxes does she fill in a week?',
  'Tom reads 15 pages an hour. His book has 240 pages and he has read 90. How many more hours does he need?',
  'A train travels 180 km in 2 hours, then 150 km in 3 hours. What is its average speed in km per hour?',
];
const GROUP = 8;

/**
 * As the RL loop samples: four prompts, eight rollouts of each at once (32 rows), every request its own session, with
 * the prompt shared by its group (GenerateRequest.sharedPrompt: its tokens but the last prefilled once) or not (each
 * rollout prefills it). Tokens/s as rate(), a fresh engine per round (a shared prompt's cache would outlive it), and
 * the prompt tokens prefilled and the engine's share of time prefilling in the last round.
 */
async function groupRate(dir: string, shared: boolean) {
  const runs: number[] = [];
  let prefilled = 0;
  let prefillShare = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const engine = await OnnxEngine.load(dir, { maxBatch: GROUP * GROUP_QUESTIONS.length });
    try {
      const t0 = performance.now();
      const outs = await Promise.all(
        GROUP_QUESTIONS.flatMap((q, g) =>
          Array.from({ length: GROUP }, (_, i) =>
            engine.generate({
              prompt: buildPrompt(q, EMBEDDED_TEMPLATE_SETTINGS),
              maxTokens: TOKENS,
              temperature: 1,
              topP: 1,
              stop: [],
              seed: r * 1000 + g * 100 + i,
              sessionId: `${g}-${i}`,
              sharedPrompt: shared,
            }),
          ),
        ),
      );
      const ms = performance.now() - t0;
      runs.push(outs.reduce((s, o) => s + o.tokenIds.length, 0) / (ms / 1000));
      prefilled = engine.prefillTokens;
      prefillShare = engine.prefillMs / engine.computeMs;
    } finally {
      await engine.close();
    }
  }
  return { tps: median(runs), prefilled, prefillShare };
}

async function printGroups(models: [string, string][]) {
  console.log(
    `\ngroups: ${GROUP_QUESTIONS.length} prompts x ${GROUP} rollouts at once (${GROUP * GROUP_QUESTIONS.length} rows), ${TOKENS} sampled tokens each, medians of ${ROUNDS}:`,
  );
  console.log(
    'model                                      prompt   tokens/s   prompt tokens prefilled   time prefilling   ratio',
  );
  for (const [name, dir] of models) {
    const each = await groupRate(dir, false);
    const once = await groupRate(dir, true);
    for (const [how, x] of [
      ['each', each],
      ['shared', once],
    ] as const)
      console.log(
        `${name.padEnd(42)} ${how.padStart(6)} ${x.tps.toFixed(1).padStart(10)} ${String(x.prefilled).padStart(25)} ${`${(100 * x.prefillShare).toFixed(1)}%`.padStart(17)} ${how === 'shared' ? (once.tps / each.tps).toFixed(2).padStart(7) : ''}`,
      );
  }
}

const embedded = await ensureEmbeddedSftModel({ log: (m) => console.error(`[sft] ${m}`) });
if (process.argv.includes('--groups')) {
  // Only the groups' table, on the embedded model and SmolLM2 with the RL recipes' int8 weights.
  await printGroups([
    ['embedded default (0.3M, char tokenizer)', embedded],
    ['SmolLM2-135M-Instruct, int8 weights', await realOnnx('int8')],
  ]);
  process.exit(0);
}
const smol: Partial<Record<EngineWeights, string>> = {};
for (const w of ENGINE_WEIGHTS) smol[w] = await realOnnx(w); // one at a time: each export takes both cores
const models: [string, string][] = [
  ['embedded default (0.3M, char tokenizer)', embedded],
  ...ENGINE_WEIGHTS.map((w): [string, string] => [`SmolLM2-135M-Instruct, ${w} weights`, smol[w]!]),
];
console.log(`decode throughput, ${TOKENS} sampled tokens per request, medians of ${ROUNDS} (tokens/s):`);
console.log('model                                      batch 1   batch 16   batch 32   ratio 16/1   ratio 32/16');
const rows: number[][] = [];
const samples: Sample[][] = [];
for (const [name, dir] of models) {
  const one = await rate(dir, 1);
  const sixteen = await rate(dir, 16);
  const thirtyTwo = await rate(dir, 32);
  rows.push([one.tps, sixteen.tps, thirtyTwo.tps]);
  samples.push(sixteen.samples);
  console.log(
    `${name.padEnd(42)} ${one.tps.toFixed(1).padStart(7)} ${sixteen.tps.toFixed(1).padStart(10)} ${thirtyTwo.tps.toFixed(1).padStart(10)} ${(sixteen.tps / one.tps).toFixed(2).padStart(12)} ${(thirtyTwo.tps / sixteen.tps).toFixed(2).padStart(13)}`,
  );
}

// References on the same weights, in the same run.
const THREADS = os.availableParallelism();
const prompt = buildPrompt(QUESTION, EMBEDDED_TEMPLATE_SETTINGS);
type Ref = { tps: number; tokens: number; prompt_tokens: number };
const threadEnv = { ...process.env, OMP_NUM_THREADS: String(THREADS), OPENBLAS_NUM_THREADS: String(THREADS) };

/** One JSON line from a child process, or the reason it gave none. */
function child(cmd: string, args: string[]): { ok: true; value: unknown } | { ok: false; error: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: threadEnv, maxBuffer: 16 << 20 });
  const line = r.stdout?.trim().split('\n').pop() ?? '';
  if (r.status === 0 && line.startsWith('{')) return { ok: true, value: JSON.parse(line) };
  const why = `${r.error?.message ?? ''} ${r.stderr ?? ''}`.trim().split('\n').slice(-3).join(' | ');
  return { ok: false, error: `exit ${r.status}: ${why}` };
}

const LLAMA_DIR = path.join(import.meta.dirname, 'llama-cpp');
/** node-llama-cpp as bench/llama-cpp/package-lock.json pins it, its linux-x64 CPU binary only, installed once. */
function llamaCppInstalled(): string | undefined {
  const pkg = path.join(LLAMA_DIR, 'node_modules/node-llama-cpp/package.json');
  const want = (
    JSON.parse(fs.readFileSync(path.join(LLAMA_DIR, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    }
  ).dependencies['node-llama-cpp'];
  const have = () => fs.existsSync(pkg) && (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { version: string }).version;
  if (have() === want) return undefined;
  console.error(
    `[llama.cpp] npm ci --prefix bench/llama-cpp --omit=optional --ignore-scripts (node-llama-cpp ${want})`,
  );
  try {
    execFileSync(
      'npm',
      ['ci', '--prefix', LLAMA_DIR, '--omit=optional', '--ignore-scripts', '--no-audit', '--no-fund'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
  } catch (e) {
    return `npm ci failed: ${String((e as { stderr?: Buffer }).stderr ?? e)
      .trim()
      .split('\n')
      .slice(-2)
      .join(' | ')}`;
  }
  return have() === want ? undefined : 'node-llama-cpp is not installed after npm ci';
}

const gguf = await realGguf();
const hfDir = (await realModel()).dir;
const refs: Record<string, [Ref | string, Ref | string]> = {};
const installError = llamaCppInstalled();
refs['llama.cpp'] = [1, 16].map((b) => {
  if (installError) return installError;
  const r = child(process.execPath, [
    path.join(LLAMA_DIR, 'rate.mjs'),
    gguf,
    String(b),
    String(TOKENS),
    String(ROUNDS),
    String(THREADS),
    prompt,
  ]);
  return r.ok ? (r.value as Ref) : r.error;
}) as [Ref | string, Ref | string];
const script = path.join(import.meta.dirname, 'engine_refs.py');
refs.transformers = [1, 16].map((b) => {
  const r = child(trainerPython(), [
    script,
    'transformers',
    '--model',
    hfDir,
    '--prompt',
    prompt,
    '--batch',
    String(b),
    '--tokens',
    String(TOKENS),
    '--rounds',
    String(ROUNDS),
    '--threads',
    String(THREADS),
  ]);
  return r.ok ? (r.value as Ref) : r.error;
}) as [Ref | string, Ref | string];
const lim = child(trainerPython(), [script, 'limits', '--model', hfDir, '--threads', String(THREADS)]);

// Rows 1.. of `rows` are SmolLM2 in ENGINE_WEIGHTS' order.
const cell = (x: Ref | string) => (typeof x === 'string' ? 'failed' : x.tps.toFixed(1));
console.log(
  `\nSmolLM2-135M-Instruct, the same weights, prompt, ${TOKENS} sampled tokens at temperature 1 and ${THREADS} threads (tokens/s, medians of ${ROUNDS}):`,
);
console.log('                                                   batch 1   batch 16');
for (const [i, w] of ENGINE_WEIGHTS.entries())
  console.log(
    `${`engine (ONNX Runtime, ${w})`.padEnd(50)} ${rows[i + 1]![0]!.toFixed(1).padStart(7)} ${rows[i + 1]![1]!.toFixed(1).padStart(10)}`,
  );
const names: Record<string, string> = {
  'llama.cpp': 'llama.cpp (node-llama-cpp 3.21.1, Q4_1 GGUF)',
  transformers: 'transformers generate() (float32, KV cache)',
};
for (const [k, [one, sixteen]] of Object.entries(refs))
  console.log(`${names[k]!.padEnd(50)} ${cell(one).padStart(7)} ${cell(sixteen).padStart(10)}`);
for (const [k, pair] of Object.entries(refs))
  pair.forEach((x, i) => {
    if (typeof x === 'string') console.log(`${k} batch ${i ? 16 : 1} failed: ${x}`);
  });
console.log('\nengine / reference (b1, b16):');
ENGINE_WEIGHTS.forEach((w, i) => {
  const r = rows[i + 1]!;
  const parts = Object.entries(refs).map(
    ([k, pair]) => `${k} ${pair.map((x, j) => (typeof x === 'string' ? '—' : (r[j]! / x.tps).toFixed(2))).join(', ')}`,
  );
  console.log(`  ${w.padEnd(8)} ${parts.join('; ')}`);
});

// What each format costs: graph size, re-export time, and the log-prob mismatch against the float32 trainer
// (transformers) on the batch-16 samples of the last round.
console.log('\nformat    model.onnx   re-export   |engine - transformers| log-prob per token (mean, max; tokens)');
ENGINE_WEIGHTS.forEach((w, i) => {
  const size = fs.statSync(path.join(smol[w]!, 'model.onnx')).size;
  const secs = exportSeconds(hfDir, w);
  const file = path.join(os.tmpdir(), `bench-samples-${process.pid}.json`);
  fs.writeFileSync(file, JSON.stringify(samples[i + 1]));
  const m = child(trainerPython(), [
    script,
    'mismatch',
    '--model',
    hfDir,
    '--prompt',
    prompt,
    '--samples',
    file,
    '--threads',
    String(THREADS),
  ]);
  fs.rmSync(file, { force: true });
  const mm = m.ok ? (m.value as { tokens: number; mean_abs: number; max_abs: number }) : undefined;
  console.log(
    `${w.padEnd(8)} ${`${(size / 1e6).toFixed(0)} MB`.padStart(11)} ${typeof secs === 'number' ? `${secs.toFixed(1)} s`.padStart(11) : 'failed'.padStart(11)}   ${mm ? `${mm.mean_abs.toFixed(4)}, ${mm.max_abs.toFixed(3)}; ${mm.tokens}` : `failed: ${m.ok ? '' : m.error}`}`,
  );
  if (typeof secs === 'string') console.log(`  export failed: ${secs}`);
});

const engine = rows[1]!;
if (lim.ok) {
  const l = lim.value as {
    params: number;
    weight_bytes: number;
    flops_per_token: number;
    bandwidth_gbs: number;
    gflops_batch16_shape: number;
    gflops_square: number;
  };
  const b1 = (l.bandwidth_gbs * 1e9) / l.weight_bytes;
  const b16Bandwidth = 16 * b1;
  const b16Flops = (l.gflops_square * 1e9) / l.flops_per_token;
  const ggufBytes = fs.statSync(gguf).size;
  console.log(
    `limits on this machine: float32 weights ${(l.weight_bytes / 1e6).toFixed(1)} MB (${(l.params / 1e6).toFixed(1)}M parameters), copy bandwidth ${l.bandwidth_gbs.toFixed(1)} GB/s → batch 1 ≤ ${b1.toFixed(1)} tokens/s (the ${(ggufBytes / 1e6).toFixed(1)} MB Q4_1 GGUF: ≤ ${((l.bandwidth_gbs * 1e9) / ggufBytes).toFixed(0)})`,
  );
  console.log(
    `  ${(l.flops_per_token / 1e9).toFixed(3)} GFLOP per token; sgemm ${l.gflops_square.toFixed(1)} GFLOP/s (1024², ${THREADS} threads; ${l.gflops_batch16_shape.toFixed(1)} at the batch-16 output projection's shape) → batch 16 ≤ min(${b16Bandwidth.toFixed(0)} by bandwidth, ${b16Flops.toFixed(0)} by FLOPs) = ${Math.min(b16Bandwidth, b16Flops).toFixed(0)} tokens/s`,
  );
  console.log(
    `  engine at ${((100 * engine[0]!) / b1).toFixed(0)}% of the batch-1 bound, ${((100 * engine[1]!) / Math.min(b16Bandwidth, b16Flops)).toFixed(0)}% of the batch-16 bound`,
  );
} else console.log(`limits failed: ${lim.error}`);

await printGroups(models);
