/**
 * A small SFT'd embedded model, trained on demand and cached by content in the machine's build cache (outside the
 * clone, scripts/build-cache.mjs: a fresh clone's test run reuses it; each entry's files are checked against their
 * recorded hashes before use): the tests, bench:rollout and the live demo need a policy that already calls the tool
 * (a random one never does), and training one takes about three minutes on 2 cores.
 *
 * The cache key hashes the config and every source file the result depends on, so editing the task, template,
 * tokenizer, model or trainer retrains it. The ONNX export is keyed apart, by the exporter's sources: editing the
 * engine's graph re-exports the cached checkpoint (seconds) instead of retraining. Concurrent callers (test files run
 * in parallel) wait on a lock dir.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type CacheEntry, cacheEntry, lockEntry } from '../../scripts/build-cache.mjs';
import { HfTokenizer } from '../../workers/engines/hf-tokenizer.ts';
import { EMBEDDED_VOCAB } from '../../workers/engines/tokenizer.ts';
import { sftDataset, tokenizeDemo } from '../../workers/tasks/demos.ts';
import { TrainerClient } from '../../workers/trainer/client.ts';
import { trainerPython } from '../../workers/trainer/python.ts';
import { runSft, sftSteps } from '../../workers/train/sft.ts';

export interface EmbeddedSftConfig {
  model: {
    arch?: 'qwen3' | 'qwen2' | 'llama';
    n_layer: number;
    n_head: number;
    n_kv_head?: number;
    n_embd: number;
    block_size: number;
  };
  demos: number;
  epochs: number;
  batch: number;
  lr: number;
  maxSteps?: number;
  seed: number;
}

export const DEFAULT_EMBEDDED_SFT: EmbeddedSftConfig = {
  // Qwen2 (q/k/v biases) learns to call the tool within 2,000 steps; embedded-arith's Qwen3 needs 4,000 (twice the
  // build time, for a fixture that only needs a policy that calls the tool).
  model: { arch: 'qwen2', n_layer: 4, n_head: 4, n_embd: 64, block_size: 512 },
  demos: 16000,
  epochs: 1,
  batch: 8,
  lr: 3e-3,
  seed: 1,
};

const ROOT = path.resolve(import.meta.dirname, '../..');
const SOURCES = [
  'workers/tasks/arith.ts',
  'workers/tasks/demos.ts',
  'workers/rollout/template.ts',
  'workers/engines/tokenizer.ts',
  'workers/train/sft.ts',
  'workers/trainer/requirements.txt',
];

/**
 * Python files that never run in the trainer process: a benchmark, the GPU check and `model init|import|check`'s tool
 * with its inspection module.
 */
const BENCH_ONLY = ['raw_step_bench.py', 'gpu_check.py', 'model_tool.py', 'model_inspect.py'];
/** The exporter: its output is keyed by these alone (exportKey), not part of the training key. */
const EXPORTER = ['export_onnx.py', 'onnx_weights.py'];

/** Every Python module of the trainer, so that editing any of them retrains. */
function trainerSources(): string[] {
  const dir = 'workers/trainer';
  return fs
    .readdirSync(path.join(ROOT, dir))
    .filter((f) => f.endsWith('.py') && !BENCH_ONLY.includes(f) && !EXPORTER.includes(f))
    .sort()
    .map((f) => `${dir}/${f}`);
}

export function sftCacheKey(cfg: EmbeddedSftConfig): string {
  const h = crypto.createHash('sha256').update(JSON.stringify(cfg));
  for (const f of [...SOURCES, ...trainerSources()]) {
    const p = path.join(ROOT, f);
    if (fs.existsSync(p)) h.update(f).update(fs.readFileSync(p));
  }
  return h.digest('hex').slice(0, 16);
}

/** Key of the export made from a cached checkpoint: the exporter and the model code it runs. */
export function exportKey(): string {
  const h = crypto.createHash('sha256');
  for (const f of [...EXPORTER, 'hf_model.py', 'char_tokenizer.py'])
    h.update(f).update(fs.readFileSync(path.join(ROOT, 'workers/trainer', f)));
  return h.digest('hex').slice(0, 12);
}

/** The export dir (model.onnx, tokenizer.json, config.json) of an SFT'd embedded model; trains it if not cached.
 *  Beside it, `model/` is the same model as a trainer checkpoint (HF format). */
export async function ensureEmbeddedSftModel(
  opts: { config?: EmbeddedSftConfig; log?: (m: string) => void } = {},
): Promise<string> {
  const cfg = opts.config ?? DEFAULT_EMBEDDED_SFT;
  // Two entries of the machine's build cache (never a data folder's models/, which holds only models registered by
  // name): the checkpoint, keyed by what training depends on, and its export, keyed by that and the exporter too.
  const key = sftCacheKey(cfg);
  const model = cacheEntry('sft-model', key);
  const out = cacheEntry('sft-export', `${key}:${exportKey()}`);
  if (!model || !out)
    throw new Error('the SFT fixture needs the build cache (set TOOLSMITH_BUILD_CACHE to a writable folder)');
  const ready = () => model.ready() && out.ready();
  if (ready()) return out.dir;
  const unlock = await lockEntry(model, 15 * 60_000);
  try {
    if (ready()) return out.dir;
    if (!model.ready()) await trainFixture(cfg, model, opts.log ?? (() => {}));
    out.begin();
    exportCheckpoint(model.dir, out.dir);
    out.seal();
    return out.dir;
  } finally {
    unlock();
  }
}

/** The fixture's trainer checkpoint (HF format) that ensureEmbeddedSftModel exported, for benchmarks that train on
 *  from it or export it another way. */
export function sftCheckpointDir(cfg: EmbeddedSftConfig = DEFAULT_EMBEDDED_SFT): string {
  const model = cacheEntry('sft-model', sftCacheKey(cfg));
  if (!model?.ready()) throw new Error('the SFT fixture is not built: call ensureEmbeddedSftModel first');
  return model.dir;
}

/** Train the fixture model from scratch into the cache entry `model` (a trainer checkpoint, HF format). */
async function trainFixture(cfg: EmbeddedSftConfig, model: CacheEntry, log: (m: string) => void): Promise<void> {
  model.begin();
  const trainer = await TrainerClient.start();
  try {
    // The model's own tokenizer (the char tokenizer.json the trainer writes), as a recipe's SFT stage uses.
    await trainer.init({ model: cfg.model, vocab: EMBEDDED_VOCAB, seed: cfg.seed });
    const tok = HfTokenizer.fromFiles(await trainer.tokenizerFiles());
    // Demonstrations longer than the context are dropped, as the SFT stage of a recipe does (maxLength).
    const data = sftDataset({ n: cfg.demos, seed: cfg.seed })
      .map((d) => tokenizeDemo(d, tok))
      .filter((d) => d.ids.length <= cfg.model.block_size);
    const total = sftSteps(data.length, cfg);
    await trainer.setOptim(
      {
        lr: cfg.lr,
        warmup_steps: Math.ceil(total * 0.04),
        total_steps: total,
        schedule: 'cosine',
        weight_decay: 0.01,
        grad_clip: 1,
      },
      true,
    );
    const t0 = Date.now();
    await runSft(trainer, data, {
      epochs: cfg.epochs,
      batch: cfg.batch,
      seed: cfg.seed,
      maxSteps: cfg.maxSteps,
      onStep: (m) => {
        if (m.step % 50 === 0 || m.step === total)
          log(`sft step ${m.step}/${total} loss ${m.loss.toFixed(3)} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
      },
    });
    await trainer.save(model.dir);
    model.seal();
  } finally {
    await trainer.close();
  }
}

/** export_onnx.py on a saved checkpoint into `out` (written beside, then renamed: never half an export). */
export function exportCheckpoint(model: string, out: string, graph: 'static' | 'legacy' = 'static'): void {
  const tmp = `${out}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  execFileSync(
    trainerPython(),
    [path.join(ROOT, 'workers/trainer/export_onnx.py'), '--model', model, '--out', tmp, '--graph', graph],
    { stdio: 'pipe', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
  );
  fs.rmSync(out, { recursive: true, force: true });
  fs.renameSync(tmp, out);
}
