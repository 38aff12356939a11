/**
 * One exported model as the embedded engine loads it (onnx-engine.ts): its config, tokenizer and ONNX Runtime
 * session from an export directory (workers/trainer/export_onnx.py's `static` graph), and whether a new export can
 * take an old one's place in the same KV cache.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { EngineDevice } from '../../contracts/engine.ts';
import { HfTokenizer } from './hf-tokenizer.ts';

export interface ModelConfig {
  vocab_size: number;
  n_layer: number;
  n_head: number;
  /** Key/value heads (grouped-query attention): the cache's head count. */
  n_kv_head: number;
  n_embd: number;
  block_size: number;
  head_dim: number;
  eos_token_id?: number | null;
  /** Which graph export_onnx.py wrote: this engine runs 'static'. */
  graph?: 'static' | 'legacy';
}

export interface Loaded {
  session: ort.InferenceSession;
  config: ModelConfig;
  tokenizer: HfTokenizer;
  tokenizerJson: string;
  dir: string;
}

export interface LoadOptions {
  /** onnxruntime intra-op threads (default: onnxruntime's choice). */
  threads?: number;
  /** Whether idle threads spin between operators (onnxruntime's default: yes). */
  spin?: boolean;
  /** onnxruntime's execution provider (default cpu). */
  device?: EngineDevice;
}

export async function loadDir(dir: string, o: LoadOptions = {}): Promise<Loaded> {
  const { threads, spin = true, device = 'cpu' } = o;
  const raw = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as ModelConfig;
  if ((raw.graph ?? 'legacy') !== 'static')
    throw new Error(
      `${dir}: the export has the ${raw.graph ?? 'legacy'} graph; export it again (workers/trainer/export_onnx.py)`,
    );
  const config: ModelConfig = { ...raw, n_kv_head: raw.n_kv_head ?? raw.n_head };
  const tokenizerJson = fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8');
  const cfgFile = path.join(dir, 'tokenizer_config.json');
  const tokenizer = HfTokenizer.fromFiles({
    'tokenizer.json': tokenizerJson,
    ...(fs.existsSync(cfgFile) ? { 'tokenizer_config.json': fs.readFileSync(cfgFile, 'utf8') } : {}),
  });
  if (tokenizer.vocabSize !== config.vocab_size)
    throw new Error(`tokenizer has ${tokenizer.vocabSize} tokens, model ${config.vocab_size}`);
  // Subnormal floats are many times slower on x86; a trained small model's activations have plenty: flush them.
  const opts: ort.InferenceSession.SessionOptions = {
    // On cuda, operators the CUDA provider lacks fall back to the CPU one, which onnxruntime always adds.
    executionProviders: [device],
    graphOptimizationLevel: 'all',
    extra: { session: { set_denormal_as_zero: '1', ...(spin ? {} : { intra_op: { allow_spinning: '0' } }) } },
  };
  if (threads) {
    opts.intraOpNumThreads = threads;
    opts.interOpNumThreads = 1;
  }
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), opts);
  return { session, config, tokenizer, tokenizerJson, dir };
}

export function sameShape(a: ModelConfig, b: ModelConfig): boolean {
  return (
    a.n_layer === b.n_layer && a.n_kv_head === b.n_kv_head && a.head_dim === b.head_dim && a.block_size === b.block_size
  );
}
