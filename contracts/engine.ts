/**
 * Which inference engine serves a policy: the embedded ONNX decoder (an export dir) or OpenAI-compatible servers
 * (vLLM, SGLang, `toolsmith serve-model`). workers/engines/create.ts builds one from this spec.
 */
import { z } from 'zod';
import { NAME_RE, NAME_RULE } from './names.ts';

/**
 * How the trainer's new weights reach OpenAI-compatible rollout servers after every update (docs/scaling-out.md "Weight sync").
 * The trainer writes each version into its own folder under the shared weight-sync root (TOOLSMITH_WEIGHT_SYNC_DIR)
 * and the engine client calls each server's reload API:
 *   sglang     POST /update_weights_from_disk {model_path, weight_version}; SGLang and `toolsmith serve-model`
 *   vllm       the folder becomes <dir>/current (start vLLM with --model <dir>/current), then POST /collective_rpc
 *              {"method": "reload_weights"} (VLLM_SERVER_DEV_MODE=1)
 *   vllm-lora  POST /v1/load_lora_adapter {lora_name, lora_path} (VLLM_ALLOW_RUNTIME_LORA_UPDATING=True); requests
 *              then name the new adapter. Needs trainer.lora.
 */
export const WEIGHT_SYNC_MODES = ['sglang', 'vllm', 'vllm-lora'] as const;
export type WeightSyncMode = (typeof WEIGHT_SYNC_MODES)[number];
export const WeightSyncSchema = z.object({
  mode: z.enum(WEIGHT_SYNC_MODES, { error: 'mode must be "sglang", "vllm" or "vllm-lora"' }),
  /** A subfolder of the run's own weight-sync folder (<root>/<run id>/<dir>; default: that folder itself); a name, never a path. */
  dir: z.string().regex(NAME_RE, NAME_RULE).optional(),
  /** Also write the ONNX export (<version>/onnx) beside the HF weights: what `toolsmith serve-model` loads. */
  onnx: z.boolean().default(false),
  /** Most milliseconds a reload may take on any one server before the step fails naming it. */
  timeoutMs: z.number().int().min(1000).default(600_000),
});
export type WeightSync = z.output<typeof WeightSyncSchema>;

/**
 * How an ONNX export stores the linear layers' weights (workers/trainer/onnx_weights.py): float32, or blockwise
 * int8/int4 (onnxruntime's MatMulNBits; the output projection at 8 bits in both). Quantized weights decode faster on
 * CPU (a batch-1 step reads every weight once) at the cost of a log-prob mismatch against the float32 trainer.
 */
export const ENGINE_WEIGHTS = ['float32', 'int8', 'int4'] as const;
export type EngineWeights = (typeof ENGINE_WEIGHTS)[number];
export const EngineWeightsSchema = z.enum(ENGINE_WEIGHTS, { error: 'weights must be "float32", "int8" or "int4"' });

/**
 * Where the embedded engine decodes: onnxruntime's CPU provider, or its CUDA provider on the worker's GPU (onnxruntime-node
 * ships that provider separately: `ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node` fetches it).
 */
export const ENGINE_DEVICES = ['cpu', 'cuda'] as const;
export type EngineDevice = (typeof ENGINE_DEVICES)[number];
export const EngineDeviceSchema = z.enum(ENGINE_DEVICES, { error: 'device must be "cpu" or "cuda"' });

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
    totalTokens: z
      .number()
      .int()
      .min(1)
      .default(1 << 20),
    timeoutMs: z.number().int().min(100).default(60_000),
    retries: z.number().int().min(0).max(10).default(2),
    /** The served model's tokenizer.json (HF format; its tokenizer_config.json beside it) for exact token counts; without one, counts are estimated. */
    tokenizer: z.string().optional(),
  }),
]);
export type EngineSpec = z.infer<typeof EngineSpecSchema>;
