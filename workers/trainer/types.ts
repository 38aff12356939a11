// The trainer as the orchestrator sees it: one interface (Trainer) and the shapes of its calls. Every transport
// behind it (client.ts: one local process, a local group of ranks on loopback, or ranks placed by a Ray cluster
// through ray_group.py) speaks the same JSON-lines protocol to the same trainer.py (its docstring is the reference).
import type { EngineWeights } from '../../contracts/engine.ts';
import type { TisMode } from '../../contracts/recipe.ts';
import type { ClipState } from '../../contracts/trajectory.ts';

/** The sizes of a model built from scratch (workers/trainer/hf_model.py make_config). */
export interface ModelSizes {
  arch?: 'qwen3' | 'qwen2' | 'llama';
  n_layer?: number;
  n_head?: number;
  n_kv_head?: number;
  n_embd?: number;
  block_size?: number;
  intermediate_size?: number;
  rope_theta?: number;
  init_std?: number;
  vocab_size?: number;
  /** Qwen3: the starting gain of the per-head query/key norms (hf_model.build). */
  qk_norm_gain?: number;
}
/** A model's shape as the trainer reports it (hf_model.summary). */
export interface ModelSummary {
  architecture: string;
  model_type: string;
  n_layer: number;
  n_embd: number;
  n_head: number;
  n_kv_head: number;
  head_dim: number;
  intermediate_size: number | null;
  vocab_size: number;
  block_size: number;
  tie_word_embeddings: boolean;
  params: number;
}
/** LoRA through peft (workers/trainer/lora.py). */
export interface LoraSettings {
  rank?: number;
  alpha?: number;
  dropout?: number;
  target_modules?: string[];
}
export interface OptimConfig {
  lr?: number;
  weight_decay?: number;
  betas?: [number, number];
  eps?: number;
  warmup_steps?: number;
  total_steps?: number | null;
  schedule?: 'constant' | 'cosine';
  min_lr_ratio?: number;
  grad_clip?: number | null;
}
export type TrainerDevice = 'auto' | 'cpu' | 'cuda';
interface ModelOptions {
  optim?: OptimConfig;
  device?: TrainerDevice;
  gradient_checkpointing?: boolean;
}
export interface InitParams extends ModelOptions {
  model: ModelSizes;
  vocab: string[];
  seed: number;
}
/** path: a model or checkpoint directory in HF format. */
export interface LoadParams extends ModelOptions {
  path: string;
  reset_optimizer?: boolean;
  lora?: LoraSettings | null;
  /** A model to start from: only its weights and tokenizer are read (step 0, new optimiser). */
  fresh?: boolean;
}
export interface TrainerInfo {
  device: string;
  torch_version: string;
  cuda: boolean;
  initialised: boolean;
  step: number;
  params: number;
  trainable_params: number;
  world_size: number;
  config: ModelSummary | null;
  optim: Required<OptimConfig> | null;
  lora: Required<LoraSettings> | null;
}
/** A token budget per forward/backward (rows × padded length) and/or a row count; gradients accumulate over them. */
interface MicroBatching {
  micro_batch?: number;
  micro_batch_tokens?: number;
}
export interface SftParams extends MicroBatching {
  sequences: number[][];
  loss_masks?: number[][];
}
export interface SftMetrics {
  loss: number;
  grad_norm: number;
  lr: number;
  tokens: number;
  masked_tokens: number;
  tokens_per_s: number;
  step: number;
}
export interface EvalMetrics {
  loss: number;
  tokens: number;
  masked_tokens: number;
  tokens_per_s: number;
}
/** Without response_start row i has one entry per token (entry 0 null); with it, one per token of s[response_start[i]:]. */
export interface LogprobsParams extends MicroBatching {
  sequences: number[][];
  response_start?: number[];
}
export interface PolicyParams extends MicroBatching {
  sequences: number[][];
  /** Index in each sequence where the response begins (>= 1). */
  response_start: number[];
  /** Response-aligned: 1 = model-generated token (trained on), 0 = tool/environment token. */
  response_mask: number[][];
  /** Response-aligned log-probs under the rollout policy; null allowed where the mask is 0. */
  old_logprobs: (number | null)[][];
  /** One per sequence, broadcast to its tokens. */
  advantages: number[];
  eps_low?: number;
  eps_high?: number;
  dual_clip?: number | null;
  /** Response-aligned log-probs of the rollout engine (π_rollout), null where it gave none: the TIS correction. */
  rollout_logprobs?: (number | null)[][];
  /** Truncated importance sampling (docs/method.md §5): default 'token' with cap 2. */
  tis_mode?: TisMode;
  tis_cap?: number;
}
export interface PolicyMetrics {
  loss: number;
  clip_frac_low: number;
  clip_frac_high: number;
  dual_clip_frac: number;
  approx_kl: number;
  entropy: number;
  grad_norm: number;
  lr: number;
  tokens: number;
  masked_tokens: number;
  tokens_per_s: number;
  step: number;
  /** True when every advantage was zero (or nothing was masked in): no optimiser step was taken. */
  skipped: boolean;
  /** False when TIS is off or no trained token had a rollout log-prob (the engine returned none): plain GRPO. */
  tis_applied: boolean;
  /** Trained tokens with a rollout log-prob: the ones the TIS metrics are over. */
  tis_tokens: number;
  /** k3 estimate of KL(π_rollout ‖ π_old): mean of (ρ − 1) − log ρ with ρ = π_old / π_rollout. */
  mismatch_kl: number;
  tis_mean_weight: number;
  /** Share of those tokens with ρ > C (token / sequence mode; per sequence in sequence mode). */
  tis_truncated_frac: number;
  /** Share of those tokens masked out, ρ ∉ [1/C, C] (mask mode). */
  tis_masked_frac: number;
  /** Per sequence, response-aligned: the TIS weight applied to each token (1 on tool tokens). */
  token_weights: number[][];
  /** Per sequence, response-aligned ClipState (contracts/trajectory.ts); PPO states win over TIS ones. */
  token_clip: ClipState[][];
}
export interface ExportResult {
  dir: string;
  files: string[];
  step: number;
  seconds: number;
}

/** The ONNX export's weight format (contracts/engine.ts; default float32) with the call's options. */
export type ExportOnnxOptions = CallOptions & { weights?: EngineWeights };

export interface CallOptions {
  timeoutMs?: number;
}

/** One rank as the cluster placed it (Ray transport only). */
export interface RankPlacement {
  rank: number;
  /** Ray's node id. */
  node: string;
  /** The node's address in the cluster. */
  address: string;
  /** The rank actor's process id on that node. */
  pid: number;
  resources: Record<string, number>;
}

/** What the orchestrator calls: load or build the policy, train it, read it, save and export it, close it. */
export interface Trainer {
  /** What the ready line said: torch version, whether CUDA is visible, rank 0's pid, the group's size. */
  readonly ready: { torch_version: string; cuda: boolean; pid: number; world_size: number } | null;
  /** Where each rank runs, when a cluster placed them (null for ranks on this machine). */
  readonly placement: RankPlacement[] | null;
  readonly alive: boolean;
  /** The last ~2 KB the ranks wrote to stderr (logs, tracebacks). */
  readonly stderrTail: string;
  init(p: InitParams, o?: CallOptions): Promise<TrainerInfo>;
  load(p: LoadParams, o?: CallOptions): Promise<TrainerInfo>;
  save(dir: string, o?: CallOptions): Promise<{ path: string; bytes: number; step: number }>;
  tokenizerFiles(o?: CallOptions): Promise<Record<string, string>>;
  resetOptimizer(o?: CallOptions): Promise<{ step: number }>;
  setThreads(threads: number | null, o?: CallOptions): Promise<{ threads: number | null }>;
  setOptim(
    optim: OptimConfig,
    reset?: boolean,
    o?: CallOptions,
  ): Promise<{ step: number; optim: Required<OptimConfig> }>;
  sftStep(p: SftParams, o?: CallOptions): Promise<SftMetrics>;
  evalLoss(p: SftParams, o?: CallOptions): Promise<EvalMetrics>;
  logprobs(p: LogprobsParams, o?: CallOptions): Promise<(number | null)[][]>;
  policyStep(p: PolicyParams, o?: CallOptions): Promise<PolicyMetrics>;
  exportOnnx(dir: string, o?: ExportOnnxOptions): Promise<ExportResult>;
  exportHf(dir: string, o?: CallOptions): Promise<ExportResult>;
  info(o?: CallOptions): Promise<TrainerInfo>;
  digest(o?: CallOptions): Promise<{ model: string; step: number }>;
  /** Ask it to shut down; kill it if it has not after graceMs. */
  close(graceMs?: number): Promise<void>;
}
