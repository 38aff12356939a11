/**
 * An engine from a spec: the embedded ONNX decoder (an export dir) or OpenAI-compatible servers (vLLM, SGLang,
 * `toolsmith serve-model`). Callers then talk to the InferenceEngine interface only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';
import type { EngineSpec } from '../../contracts/engine.ts';
import type { InferenceEngine, PolicyEngineFactory } from './types.ts';


export async function createEngine(spec: EngineSpec): Promise<InferenceEngine> {
  if (spec.kind === 'embedded') {
    for (const f of ['model.onnx', 'tokenizer.json', 'config.json']) {
      if (!fs.existsSync(path.join(spec.checkpoint, f))) {
        throw new UserError(`engine.checkpoint: ${spec.checkpoint} has no ${f}`, { fix: 'pass an export dir written by the trainer (model.onnx, tokenizer.json, config.json)' });
      }
    }
    const { OnnxEngine } = await import('./onnx-engine.ts');
    return OnnxEngine.load(spec.checkpoint, { maxBatch: spec.maxBatch, threads: spec.threads });
  }
  const { OpenAIEngine } = await import('./openai-engine.ts');
  const { HfTokenizer } = await import('./hf-tokenizer.ts');
  if (spec.tokenizer && !fs.existsSync(spec.tokenizer)) throw new UserError(`engine.tokenizer: no such file ${spec.tokenizer}`);
  return new OpenAIEngine({
    baseUrls: spec.urls, model: spec.model, apiKey: spec.apiKey, totalTokens: spec.totalTokens, timeoutMs: spec.timeoutMs, retries: spec.retries,
    tokenizer: spec.tokenizer ? HfTokenizer.fromDir(path.dirname(spec.tokenizer)) : undefined,
  });
}

/** The embedded policy for training: the ONNX decoder on the trainer's export, reloaded after every update. */
export function embeddedPolicy(opts: { maxBatch?: number; threads?: number } = {}): PolicyEngineFactory {
  return async (dir) => {
    const { OnnxEngine } = await import('./onnx-engine.ts');
    return OnnxEngine.load(dir, { maxBatch: opts.maxBatch ?? 32, threads: opts.threads });
  };
}
