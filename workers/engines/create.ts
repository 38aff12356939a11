/**
 * An engine from a spec: the embedded ONNX decoder (an export dir) or OpenAI-compatible servers (vLLM, SGLang,
 * `toolsmith serve-model`). Callers then talk to the InferenceEngine interface only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';
import { config } from '../../server/config.ts';
import type { EngineDevice, EngineSpec, WeightSync } from '../../contracts/engine.ts';
import type { InferenceEngine, PolicyEngine, PolicyEngineFactory } from './types.ts';

export async function createEngine(spec: EngineSpec): Promise<InferenceEngine> {
  if (spec.kind === 'embedded') {
    for (const f of ['model.onnx', 'tokenizer.json', 'config.json']) {
      if (!fs.existsSync(path.join(spec.checkpoint, f))) {
        throw new UserError(`engine.checkpoint: ${spec.checkpoint} has no ${f}`, {
          fix: 'pass an export dir written by the trainer (model.onnx, tokenizer.json, config.json)',
        });
      }
    }
    const { OnnxEngine } = await import('./onnx-engine.ts');
    return OnnxEngine.load(spec.checkpoint, { maxBatch: spec.maxBatch, threads: spec.threads });
  }
  const { OpenAIEngine } = await import('./openai-engine.ts');
  const { HfTokenizer } = await import('./hf-tokenizer.ts');
  if (spec.tokenizer && !fs.existsSync(spec.tokenizer))
    throw new UserError(`engine.tokenizer: no such file ${spec.tokenizer}`);
  return new OpenAIEngine({
    // The key comes from the environment (TOOLSMITH_ENGINE_API_KEY), never a command line or a stored spec.
    baseUrls: spec.urls,
    model: spec.model,
    apiKey: spec.apiKey ?? config().engineApiKey,
    totalTokens: spec.totalTokens,
    timeoutMs: spec.timeoutMs,
    retries: spec.retries,
    tokenizer: spec.tokenizer ? HfTokenizer.fromDir(path.dirname(spec.tokenizer)) : undefined,
  });
}

/** The embedded policy for training: the ONNX decoder on the trainer's export, reloaded after every update. */
export function embeddedPolicy(
  opts: { maxBatch?: number; threads?: number; spin?: boolean; device?: EngineDevice } = {},
): PolicyEngineFactory {
  return async (dir) => {
    const { OnnxEngine } = await import('./onnx-engine.ts');
    // Sleeping idle threads (spin false, the default here) cost the engine nothing measurable alone and leave a
    // trainer beside it its cores (bench:async: same synchronous speed, async RL from 0.97× to 1.04× on 2 cores).
    return OnnxEngine.load(dir, {
      maxBatch: opts.maxBatch ?? 32,
      threads: opts.threads,
      spin: opts.spin ?? false,
      device: opts.device,
    });
  };
}

export interface RemotePolicySpec {
  urls: string[];
  /** The served model id; default: the first one the first server's /v1/models lists. */
  model?: string;
  apiKey?: string;
  totalTokens: number;
  timeoutMs: number;
  weightSync: WeightSync;
}

/**
 * The policy on OpenAI-compatible servers (SGLang, vLLM, serve-model), kept on the trainer's weights: every sync
 * writes a new version under `root` (the factory's `versions`, which PolicySync writes with
 * workers/policy/weight-export.ts) and pushes it to every server (OpenAIEngine.load/reload).
 * `root` is the run's folder under the configured weight-sync root, never a path from the recipe.
 */
export function remotePolicy(spec: RemotePolicySpec, root: string): PolicyEngineFactory {
  const create = async (dir: string): Promise<PolicyEngine> => {
    const { OpenAIEngine } = await import('./openai-engine.ts');
    const model = spec.model ?? (await servedModel(spec.urls[0]!, spec.apiKey));
    const engine = new OpenAIEngine({
      baseUrls: spec.urls,
      model,
      apiKey: spec.apiKey,
      totalTokens: spec.totalTokens,
      timeoutMs: spec.timeoutMs,
      retries: 2,
      weightSync: { mode: spec.weightSync.mode, timeoutMs: spec.weightSync.timeoutMs },
    });
    await engine.load(dir);
    return engine;
  };
  return Object.assign(create, { versions: { root, mode: spec.weightSync.mode, onnx: spec.weightSync.onnx } });
}

async function servedModel(url: string, apiKey?: string): Promise<string> {
  const base = url.replace(/\/+$/, '').replace(/\/v1$/, '');
  let res: Response;
  try {
    res = await fetch(`${base}/v1/models`, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(30_000),
    });
  } catch (e) {
    throw new UserError(
      `engine.urls: ${url} does not answer (${(e as Error).message}); give engine.model or start the server`,
    );
  }
  const id = res.ok ? ((await res.json()) as { data?: { id?: string }[] }).data?.[0]?.id : undefined;
  if (!id)
    throw new UserError(
      `engine.model: ${base}/v1/models answered HTTP ${res.status} without a model; give engine.model`,
    );
  return id;
}
