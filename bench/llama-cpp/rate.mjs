/**
 * bench:engine's llama.cpp reference (node-llama-cpp 3.21.1's prebuilt linux-x64 CPU binary, never compiled here):
 * decode tokens/s on a GGUF, one JSON line on stdout. `batch` sequences of one context sample at once (the library
 * batches their decode steps), each up to `tokens` tokens from the same prompt (special tokens parsed), temperature 1
 * with top-k, top-p, min-p and repeat penalty off; a sequence may stop earlier at an end-of-generation token. Tokens
 * generated / wall time, median of `rounds` after an untimed warm-up; every round starts from cleared sequences (its prompt evaluated again).
 *
 *   node bench/llama-cpp/rate.mjs GGUF BATCH TOKENS ROUNDS THREADS PROMPT
 */
import { performance } from 'node:perf_hooks';
import { LlamaCompletion, getLlama } from 'node-llama-cpp';

const [gguf, batchArg, tokensArg, roundsArg, threadsArg, prompt] = process.argv.slice(2);
const batch = Number(batchArg);
const maxTokens = Number(tokensArg);
const rounds = Number(roundsArg);
const threads = Number(threadsArg);

const llama = await getLlama({ gpu: false, build: 'never', maxThreads: threads, logLevel: 'error' });
const model = await llama.loadModel({ modelPath: gguf, gpuLayers: 0 });
const promptTokens = model.tokenize(prompt, true);
// Each sequence has its own contextSize cells: the prompt and the sampled tokens fit.
const context = await model.createContext({ sequences: batch, contextSize: 512, threads, flashAttention: false });
const sequences = Array.from({ length: batch }, () => context.getSequence());
const runs = [];
let tokens = 0;
// Round -1 is a warm-up of 4 tokens, untimed: the first decode of a batch size sets up its buffers (and the CPU
// backend repacks the 4-bit weights), which otherwise costs the first timed round several times its length.
for (let r = -1; r < rounds; r++) {
  for (const s of sequences) await s.clearHistory();
  const completions = sequences.map((s) => new LlamaCompletion({ contextSequence: s, autoDisposeSequence: false }));
  const counts = new Array(batch).fill(0);
  const t0 = performance.now();
  await Promise.all(
    completions.map((c, i) =>
      c.generateCompletionWithMeta(promptTokens, {
        maxTokens: r < 0 ? 4 : maxTokens,
        temperature: 1,
        topK: 0,
        topP: 1,
        minP: 0,
        repeatPenalty: false,
        seed: r * 100 + i,
        onToken: (t) => {
          counts[i] += t.length;
        },
      }),
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  for (const c of completions) c.dispose();
  if (r < 0) continue;
  tokens = counts.reduce((s, n) => s + n, 0);
  runs.push(tokens / seconds);
}
runs.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    tps: runs[Math.floor(runs.length / 2)],
    tokens,
    prompt_tokens: promptTokens.length,
    runs,
    release: llama.llamaCppRelease.release,
    build: llama.buildType,
  }),
);
await context.dispose();
await model.dispose();
await llama.dispose();
