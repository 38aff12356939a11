/**
 * bench:engine — decode throughput of the embedded ONNX engine on the two models it serves, in one run: the
 * embedded default (the SFT'd 0.3M-parameter character model, tests/helpers/embedded-sft.ts) and the real pretrained
 * SmolLM2-135M-Instruct (fetched by its pins, tests/helpers/real-model.ts). For each: one request, then 16 at once,
 * each sampling up to 96 tokens (temperature 1; a request may stop earlier at its end-of-turn token) from the same
 * minimal-template GSM8K prompt; tokens generated / wall time, medians of 3. Then SmolLM2 again on the engine as it
 * was before its cache rows grew with the requests (every row the whole context long), for the ratio.
 *
 *   npx tsx bench/engine-models.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { OnnxEngine } from '../workers/engines/onnx-engine.ts';
import { EMBEDDED_TEMPLATE_SETTINGS, buildPrompt } from '../workers/rollout/template.ts';
import { ensureEmbeddedSftModel } from '../tests/helpers/embedded-sft.ts';
import { realOnnx } from '../tests/helpers/real-model.ts';

const QUESTION =
  'John has 10 hectares of pineapple field. There are 100 pineapples per hectare. John can harvest his pineapples every 3 months. How many pineapples can John harvest within a year?';
const TOKENS = 96;
const ROUNDS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function rate(dir: string, batch: number, cacheStart?: number): Promise<{ tps: number; tokens: number }> {
  const engine = await OnnxEngine.load(dir, { maxBatch: 16, cacheStart });
  const prompt = buildPrompt(QUESTION, EMBEDDED_TEMPLATE_SETTINGS);
  try {
    const runs: number[] = [];
    let tokens = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      const outs = await Promise.all(
        Array.from({ length: batch }, (_, i) =>
          engine.generate({ prompt, maxTokens: TOKENS, temperature: 1, topP: 1, stop: [], seed: r * 100 + i }),
        ),
      );
      tokens = outs.reduce((s, o) => s + o.tokenIds.length, 0);
      runs.push(tokens / ((performance.now() - t0) / 1000));
    }
    return { tps: median(runs), tokens };
  } finally {
    await engine.close();
  }
}

const models: [string, string][] = [
  [
    'embedded default (0.3M, char tokenizer)',
    await ensureEmbeddedSftModel({ log: (m) => console.error(`[sft] ${m}`) }),
  ],
  ['SmolLM2-135M-Instruct (BPE, 49,152)', await realOnnx()],
];
console.log(`decode throughput, ${TOKENS} sampled tokens per request, medians of ${ROUNDS} (tokens/s):`);
console.log('model                                      batch 1   batch 16   ratio 16/1');
const rows: number[][] = [];
for (const [name, dir] of models) {
  const one = await rate(dir, 1);
  const sixteen = await rate(dir, 16);
  rows.push([one.tps, sixteen.tps]);
  console.log(
    `${name.padEnd(42)} ${one.tps.toFixed(1).padStart(7)} ${sixteen.tps.toFixed(1).padStart(10)} ${(sixteen.tps / one.tps).toFixed(2).padStart(12)}`,
  );
}
// The engine as it was before its cache rows grew with the requests: every row sized for the whole context, which
// every decode step's attention reads.
const smol = models[1]![1];
const ctx = (JSON.parse(fs.readFileSync(path.join(smol, 'config.json'), 'utf8')) as { block_size: number }).block_size;
const before = [await rate(smol, 1, ctx), await rate(smol, 16, ctx)];
console.log(
  `${`SmolLM2, cache rows of the whole context (${ctx})`.padEnd(42)} ${before[0]!.tps.toFixed(1).padStart(7)} ${before[1]!.tps.toFixed(1).padStart(10)} ${(before[1]!.tps / before[0]!.tps).toFixed(2).padStart(12)}`,
);
console.log(
  `SmolLM2, growing rows / whole-context rows: batch 1 ${(rows[1]![0]! / before[0]!.tps).toFixed(2)}x, batch 16 ${(rows[1]![1]! / before[1]!.tps).toFixed(2)}x`,
);
console.log(
  `SmolLM2 / embedded at batch 16: ${(rows[1]![1]! / rows[0]![1]!).toFixed(4)} (1 : ${(rows[0]![1]! / rows[1]![1]!).toFixed(0)})`,
);
