// TypeScript side of the trainer RPC (workers/trainer/trainer.py; its docstring is the protocol reference).
// One long-lived `.venv/bin/python -u trainer.py` process speaking JSON lines over stdio; requests are answered in
// order, one at a time on the Python side, but several may be in flight here (each has its own id and timeout).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TisMode } from '../../contracts/recipe.ts';
import type { ClipState } from '../../contracts/trajectory.ts';
import { trainerPython } from './python.ts';

export const TRAINER_SCRIPT = path.join(import.meta.dirname, 'trainer.py');

/**
 * A failed trainer call. `type`: what trainer.py reports ('bad_request', 'nan_loss', 'oom', 'not_initialised',
 * 'internal'), or, from this client, 'exited' (the process died; `stderr` holds its last ~2 KB), 'timeout'
 * (no answer within timeoutMs; the process keeps running and a late answer is dropped), 'start' (it never came up).
 */
export class TrainerError extends Error {
  constructor(readonly type: string, message: string, readonly stderr?: string) {
    super(message);
    this.name = 'TrainerError';
  }
}

/** The sizes of a model built from scratch (workers/trainer/hf_model.py make_config). */
export interface ModelSizes {
  arch?: 'qwen3' | 'qwen2' | 'llama'; n_layer?: number; n_head?: number; n_kv_head?: number; n_embd?: number; block_size?: number;
  intermediate_size?: number; rope_theta?: number; init_std?: number; vocab_size?: number;
  /** Qwen3: the starting gain of the per-head query/key norms (hf_model.build). */
  qk_norm_gain?: number;
}
/** A model's shape as the trainer reports it (hf_model.summary). */
export interface ModelSummary {
  architecture: string; model_type: string; n_layer: number; n_embd: number; n_head: number; n_kv_head: number; head_dim: number;
  intermediate_size: number | null; vocab_size: number; block_size: number; tie_word_embeddings: boolean; params: number;
}
/** LoRA through peft (workers/trainer/lora.py). */
export interface LoraSettings { rank?: number; alpha?: number; dropout?: number; target_modules?: string[] }
export interface OptimConfig {
  lr?: number; weight_decay?: number; betas?: [number, number]; eps?: number; warmup_steps?: number; total_steps?: number | null;
  schedule?: 'constant' | 'cosine'; min_lr_ratio?: number; grad_clip?: number | null;
}
export type TrainerDevice = 'auto' | 'cpu' | 'cuda';
interface ModelOptions { optim?: OptimConfig; device?: TrainerDevice; gradient_checkpointing?: boolean }
export interface InitParams extends ModelOptions { model: ModelSizes; vocab: string[]; seed: number }
/** path: a model or checkpoint directory in HF format. */
export interface LoadParams extends ModelOptions {
  path: string; reset_optimizer?: boolean; lora?: LoraSettings | null;
  /** A model to start from: only its weights and tokenizer are read (step 0, new optimiser). */
  fresh?: boolean;
}
export interface TrainerInfo {
  device: string; torch_version: string; cuda: boolean; initialised: boolean; step: number; params: number; trainable_params: number;
  world_size: number; config: ModelSummary | null; optim: Required<OptimConfig> | null; lora: Required<LoraSettings> | null;
}
/** A token budget per forward/backward (rows × padded length) and/or a row count; gradients accumulate over them. */
interface MicroBatching { micro_batch?: number; micro_batch_tokens?: number }
export interface SftParams extends MicroBatching { sequences: number[][]; loss_masks?: number[][] }
export interface SftMetrics { loss: number; grad_norm: number; lr: number; tokens: number; masked_tokens: number; tokens_per_s: number; step: number }
export interface EvalMetrics { loss: number; tokens: number; masked_tokens: number; tokens_per_s: number }
/** Without response_start row i has one entry per token (entry 0 null); with it, one per token of s[response_start[i]:]. */
export interface LogprobsParams extends MicroBatching { sequences: number[][]; response_start?: number[] }
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
  eps_low?: number; eps_high?: number; dual_clip?: number | null;
  /** Response-aligned log-probs of the rollout engine (π_rollout), null where it gave none: the TIS correction. */
  rollout_logprobs?: (number | null)[][];
  /** Truncated importance sampling (docs/method.md §5): default 'token' with cap 2. */
  tis_mode?: TisMode; tis_cap?: number;
}
export interface PolicyMetrics {
  loss: number; clip_frac_low: number; clip_frac_high: number; dual_clip_frac: number; approx_kl: number; entropy: number;
  grad_norm: number; lr: number; tokens: number; masked_tokens: number; tokens_per_s: number; step: number;
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
export interface ExportResult { dir: string; files: string[]; step: number; seconds: number }

export interface TrainerStartOptions {
  python?: string;
  script?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** How long to wait for the ready line (importing torch takes a second or two). Default 60 s. */
  startTimeoutMs?: number;
  /** Ranks on this machine: > 1 runs `torchrun --standalone --nproc-per-node N` (FSDP2; gloo on CPU). Default 1. */
  ranks?: number;
}
export interface CallOptions { timeoutMs?: number }

interface Pending { resolve: (v: unknown) => void; reject: (e: TrainerError) => void; timer?: NodeJS.Timeout }

const STDERR_TAIL = 2048;

export class TrainerClient {
  private buf = '';
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private stderrBuf = '';
  private exitInfo: string | null = null;
  readonly exited: Promise<void>;
  /** What the ready line said: torch version and whether CUDA is visible. */
  ready: { torch_version: string; cuda: boolean; pid: number; world_size: number } | null = null;

  private constructor(private readonly proc: ChildProcessWithoutNullStreams, private readonly group = false) {
    let markExited!: () => void;
    this.exited = new Promise<void>((r) => { markExited = r; });
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (d: string) => {
      this.buf += d;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) !== -1) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        this.onLine(line);
      }
    });
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (d: string) => { this.stderrBuf = (this.stderrBuf + d).slice(-STDERR_TAIL); });
    proc.stdin.on('error', () => {});
    proc.on('error', (e) => this.die(`could not run the trainer: ${e.message}`));
    proc.on('exit', (code, signal) => { this.die(`the trainer exited (${signal ?? `code ${code}`})`); markExited(); });
  }

  /** Spawn the trainer and wait until it has imported torch and is ready for requests. */
  static async start(opts: TrainerStartOptions = {}): Promise<TrainerClient> {
    const python = opts.python ?? trainerPython();
    if (!fs.existsSync(python)) throw new TrainerError('start', `no trainer interpreter at ${python}: run node scripts/setup.mjs (it builds the trainer's virtual environment), or set TOOLSMITH_TRAINER_PYTHON`);
    const ranks = opts.ranks ?? 1;
    const script = opts.script ?? TRAINER_SCRIPT;
    // torchrun as `python -m torch.distributed.run`: the venv's interpreter, no reliance on its bin/ scripts.
    const args = ranks > 1
      ? ['-u', '-m', 'torch.distributed.run', '--standalone', `--nproc-per-node=${ranks}`, script]
      : ['-u', script];
    const proc = spawn(python, args, {
      stdio: ['pipe', 'pipe', 'pipe'], cwd: opts.cwd, detached: ranks > 1,
      // glibc returns big freed blocks to the OS at once (mmap/trim), so every step's activations page-fault anew:
      // ~30% of a step in the kernel. Keeping them in the heap removes that.
      env: { MALLOC_MMAP_THRESHOLD_: '33554432', MALLOC_TRIM_THRESHOLD_: '4294967296', ...(opts.env ?? process.env), PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' },
    });
    const c = new TrainerClient(proc, ranks > 1);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new TrainerError('start', 'the trainer did not become ready in time', c.stderrTail)); c.kill(); },
        opts.startTimeoutMs ?? 60_000);
      c.onReady = () => { clearTimeout(timer); resolve(); };
      c.onDeath = (why) => { clearTimeout(timer); reject(new TrainerError('start', `${why} during start-up`, c.stderrTail)); };
    });
    c.onReady = c.onDeath = undefined;
    return c;
  }

  private onReady?: () => void;
  private onDeath?: (why: string) => void;

  get pid(): number | undefined { return this.proc.pid; }
  get alive(): boolean { return this.exitInfo === null; }
  /** The last ~2 KB the trainer wrote to stderr (logs, tracebacks). */
  get stderrTail(): string { return this.stderrBuf; }

  private onLine(line: string) {
    let msg: { id?: number; result?: unknown; error?: { type: string; message: string }; ready?: boolean; torch_version?: string; cuda?: boolean; pid?: number; world_size?: number };
    try { msg = JSON.parse(line); } catch { return; }
    if (msg.ready) {
      this.ready = { torch_version: msg.torch_version ?? '', cuda: !!msg.cuda, pid: msg.pid ?? 0, world_size: msg.world_size ?? 1 };
      this.onReady?.();
      return;
    }
    const p = typeof msg.id === 'number' ? this.pending.get(msg.id) : undefined;
    if (!p) return; // an answer to a call that already timed out
    this.pending.delete(msg.id!);
    if (p.timer) clearTimeout(p.timer);
    if (msg.error) p.reject(new TrainerError(msg.error.type, msg.error.message));
    else p.resolve(msg.result);
  }

  private die(why: string) {
    if (this.exitInfo !== null) return;
    this.exitInfo = why;
    this.onDeath?.(why);
    for (const p of this.pending.values()) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new TrainerError('exited', `${why}; stderr: ${this.stderrBuf.trim() || '(none)'}`, this.stderrBuf));
    }
    this.pending.clear();
  }

  /** One request. Rejects with a TrainerError (see its `type`). */
  call<T>(method: string, params: object = {}, opts: CallOptions = {}): Promise<T> {
    if (this.exitInfo !== null) return Promise.reject(new TrainerError('exited', `${this.exitInfo}; stderr: ${this.stderrBuf.trim() || '(none)'}`, this.stderrBuf));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const p: Pending = { resolve: resolve as (v: unknown) => void, reject };
      if (opts.timeoutMs !== undefined) {
        p.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new TrainerError('timeout', `${method} got no answer within ${opts.timeoutMs} ms`));
        }, opts.timeoutMs);
      }
      this.pending.set(id, p);
      this.proc.stdin.write(JSON.stringify({ id, method, params }) + '\n');
    });
  }

  init(p: InitParams, o?: CallOptions) { return this.call<TrainerInfo>('init', p, o); }
  load(p: LoadParams, o?: CallOptions) { return this.call<TrainerInfo>('load', p, o); }
  /** A checkpoint directory (HF weights + optimiser through DCP + trainer state), swapped in whole. */
  save(dir: string, o?: CallOptions) { return this.call<{ path: string; bytes: number; step: number }>('save', { path: dir }, o); }
  /** The model's tokenizer files (tokenizer.json, tokenizer_config.json, ...) as text. */
  async tokenizerFiles(o?: CallOptions) { return (await this.call<{ files: Record<string, string> }>('tokenizer', {}, o)).files; }
  resetOptimizer(o?: CallOptions) { return this.call<{ step: number }>('reset_optimizer', {}, o); }
  /** A stage's optimiser settings; the schedule restarts at the current step; `reset` also clears AdamW's moments. */
  setOptim(optim: OptimConfig, reset = false, o?: CallOptions) { return this.call<{ step: number; optim: Required<OptimConfig> }>('set_optim', { optim, reset }, o); }
  sftStep(p: SftParams, o?: CallOptions) { return this.call<SftMetrics>('sft_step', p, o); }
  evalLoss(p: SftParams, o?: CallOptions) { return this.call<EvalMetrics>('eval_loss', p, o); }
  async logprobs(p: LogprobsParams, o?: CallOptions) { return (await this.call<{ logprobs: (number | null)[][] }>('logprobs', p, o)).logprobs; }
  policyStep(p: PolicyParams, o?: CallOptions) { return this.call<PolicyMetrics>('policy_step', p, o); }
  exportOnnx(dir: string, o?: CallOptions) { return this.call<ExportResult>('export_onnx', { dir }, o); }
  /** The weights as a plain HF model directory (LoRA merged in): what from_pretrained, vLLM and SGLang load. */
  exportHf(dir: string, o?: CallOptions) { return this.call<ExportResult>('export_hf', { dir }, o); }
  info(o?: CallOptions) { return this.call<TrainerInfo>('info', {}, o); }
  /** sha256 over the model's state_dict (weights bit-identical ⇔ equal digests). */
  digest(o?: CallOptions) { return this.call<{ model: string; step: number }>('digest', {}, o); }

  private kill() {
    if (this.exitInfo !== null) return;
    // torchrun's ranks share its process group (spawned detached): take them all down, not just the launcher.
    try { if (this.group && this.proc.pid) process.kill(-this.proc.pid, 'SIGKILL'); else this.proc.kill('SIGKILL'); } catch { this.proc.kill('SIGKILL'); }
  }

  /** Ask the trainer to shut down; SIGKILL it if it has not exited after graceMs. */
  async close(graceMs = 3000): Promise<void> {
    if (this.exitInfo !== null) return;
    this.call('shutdown').catch(() => {});
    this.proc.stdin.end();
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
