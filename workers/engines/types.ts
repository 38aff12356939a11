/**
 * The one interface every inference engine implements: the embedded ONNX decoder, OpenAI-compatible servers
 * (vLLM, SGLang, `toolsmith serve-model`), and the scheduler that spreads requests over several of them.
 */
export interface GenerateRequest {
  prompt: string;
  /** Prompt length in the engine's tokens, when the caller already knows it (saves a tokenisation). */
  promptTokens?: number;
  maxTokens: number;
  temperature: number;
  topP: number;
  seed?: number;
  /** Generation stops after any of these strings; the result says which. */
  stop: string[];
  signal?: AbortSignal;
  /**
   * Serve this request only with these weights (PolicyEngine.weightVersion after the last reload): an engine on
   * another version answers finishReason 'error' with `stale: true` instead of generating, and the caller retries
   * once the engine serves it. Omitted: whatever the engine serves.
   */
  weightVersion?: number;
  /** A caller's handle on a conversation (a trajectory): engines with a prefix cache look its earlier turns up first. */
  sessionId?: string;
  /**
   * Other requests will send this same prompt (as a GRPO group's rollouts do on their first turn): an engine with a prefix
   * cache prefills all of its tokens but the last once, as one piece, keeps that for the others, and each request
   * prefills only the last token itself. Every such request takes the same path, whichever comes first.
   */
  sharedPrompt?: boolean;
}

export interface GenerateChunk {
  text: string;
  tokenIds: number[];
  /** Log-probability of each sampled token, when the engine reports them. */
  logprobs: number[] | null;
}

export type GenerateFinish = 'stop' | 'length' | 'aborted' | 'error';

export interface GenerateResult {
  text: string;
  tokenIds: number[];
  logprobs: number[] | null;
  finishReason: GenerateFinish;
  /** The stop string that ended generation (included in `text`), if one did. */
  stopString: string | null;
  promptTokens: number;
  error?: string;
  /** Entropy (nats) of the engine's raw distribution at each sampled token, when the engine computes it. */
  entropies?: number[] | null;
  /** The weight version every token of this result was generated with (null: the engine does not say). */
  weightVersion: number | null;
  /** Refused because the engine serves another weight version than req.weightVersion (retry later). */
  stale?: boolean;
}

export type { EngineStats } from '../../contracts/live.ts';
import type { EngineStats } from '../../contracts/live.ts';
import type { WeightSyncMode } from '../../contracts/engine.ts';

export interface EngineCapacity {
  /** Tokens the engine can hold at once (KV cache), prompt and generated together. */
  totalTokens: number;
  freeTokens: number;
  inFlight: number;
}

/** An engine's batches so far: batched decode steps, the rows they decoded (mean batch = rows / steps), and the ms
 *  spent prefilling (prompts and tool results, one request at a time; part of computeMs). */
export interface BatchCounters {
  decodeSteps: number;
  decodeRows: number;
  prefillMs: number;
}

export interface InferenceEngine {
  readonly id: string;
  generate(req: GenerateRequest, onChunk?: (c: GenerateChunk) => void): Promise<GenerateResult>;
  capacity(): EngineCapacity;
  countTokens(text: string): number;
  /** Per-engine state for the dashboard (the scheduler: one row per engine behind it). */
  stats?(): EngineStats[];
  close(): Promise<void>;
}

/** An engine whose weights are replaced in place after every update (on-policy RL: the trainer's new weights). */
export interface PolicyEngine extends InferenceEngine {
  /** Load the weights the trainer exported to `weightsDir`; resolves once they serve. */
  reload(weightsDir: string): Promise<void>;
  /**
   * Version of the weights being served: 0 for the first load, +1 per completed reload. Requests running when a
   * reload arrives finish on the old weights first; nothing generated after it mixes versions.
   */
  readonly weightVersion: number;
  /** Milliseconds spent inside the model so far (the engine-busy metric, docs/method.md §6). */
  readonly computeMs: number;
  /** Where the engine runs its own batches (a served engine cannot see the server's and leaves this out): its
   *  counters so far, read before and after a phase. */
  readonly batchCounters?: BatchCounters;
}

/**
 * Where the trainer writes each weight version for a factory's engines: numbered folders under `root`
 * (workers/policy/weight-export.ts VersionedExport), the HF model (with `onnx`, the ONNX export beside it) or, in
 * vllm-lora mode, the trainer's checkpoint of the LoRA run.
 */
export interface WeightVersions {
  root: string;
  mode: WeightSyncMode;
  onnx: boolean;
}

/** Builds the policy's engine on the trainer's first weight export; the job handler chooses which engine. */
export interface PolicyEngineFactory {
  (weightsDir: string): Promise<PolicyEngine>;
  /**
   * Where the trainer's weights go for these engines (remote servers: engines/create.ts remotePolicy); absent, the
   * ONNX export in the run's export dir, which the embedded engine loads (workers/policy/policy-sync.ts).
   */
  readonly versions?: WeightVersions;
}
