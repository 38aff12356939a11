/**
 * Which inference engine serves a policy: the embedded ONNX decoder (an export dir) or OpenAI-compatible servers
 * (vLLM, SGLang, `toolsmith serve-model`). workers/engines/create.ts builds one from this spec.
 */
import { z } from 'zod';

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
    /** The served model's tokenizer.json (HF format; its tokenizer_config.json beside it) for exact token counts; without one, counts are estimated. */
    tokenizer: z.string().optional(),
  }),
]);
export type EngineSpec = z.infer<typeof EngineSpecSchema>;
