/**
 * An engine from a spec: the embedded ONNX decoder (an export dir) or OpenAI-compatible servers (vLLM, SGLang,
 * `toolsmith serve-model`). Callers then talk to the InferenceEngine interface only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../../server/errors.ts';
import type { InferenceEngine } from './types.ts';

export const EngineSpecSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('embedded'),
    /** Export dir (model.onnx, tokenizer.json, config.json) written by the trainer or export_onnx.py. */
    checkpoint: z.string().min(1, 'give the export dir of a checkpoint'),
    maxBatch: z.number().int().min(1).max(256).default(16),
    threads: z.number().int().min(1).optional(),
  }),
  z.object({
    kind: z.literal('openai'),
    urls: z.array(z.string().url('must be a URL such as http://host:8000')).min(1, 'give at least one base URL'),
    model: z.string().min(1, 'give the served model name'),
    apiKey: z.string().optional(),
    /** Tokens the servers hold at once (all URLs together); the scheduler admits against it. */
    totalTokens: z.number().int().min(1).default(1 << 20),
    timeoutMs: z.number().int().min(100).default(60_000),
    retries: z.number().int().min(0).max(10).default(2),
    /** A char tokenizer.json for exact token counts (a served embedded model); without one, counts are estimated. */
    tokenizer: z.string().optional(),
  }),
]);
export type EngineSpec = z.infer<typeof EngineSpecSchema>;

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
  const { CharTokenizer } = await import('./tokenizer.ts');
  if (spec.tokenizer && !fs.existsSync(spec.tokenizer)) throw new UserError(`engine.tokenizer: no such file ${spec.tokenizer}`);
  return new OpenAIEngine({
    baseUrls: spec.urls, model: spec.model, apiKey: spec.apiKey, totalTokens: spec.totalTokens, timeoutMs: spec.timeoutMs, retries: spec.retries,
    tokenizer: spec.tokenizer ? CharTokenizer.fromFile(spec.tokenizer) : undefined,
  });
}
