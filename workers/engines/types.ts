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
}

export interface EngineCapacity {
  /** Tokens the engine can hold at once (KV cache), prompt and generated together. */
  totalTokens: number;
  freeTokens: number;
  inFlight: number;
}

export interface InferenceEngine {
  readonly id: string;
  generate(req: GenerateRequest, onChunk?: (c: GenerateChunk) => void): Promise<GenerateResult>;
  capacity(): EngineCapacity;
  countTokens(text: string): number;
  close(): Promise<void>;
}

/** An engine whose weights are replaced in place after every update (on-policy RL: the trainer's new weights). */
export interface PolicyEngine extends InferenceEngine {
  /** Load the weights the trainer exported to `weightsDir`; resolves once they serve. */
  reload(weightsDir: string): Promise<void>;
  /** Milliseconds spent inside the model so far (the engine-busy metric, docs/method.md §6). */
  readonly computeMs: number;
}

/** Builds the policy's engine on the trainer's first weight export; the job handler chooses which engine. */
export type PolicyEngineFactory = (weightsDir: string) => Promise<PolicyEngine>;
