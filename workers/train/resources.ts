/**
 * Does the recipe fit the worker's host? A researcher's recipe, within the schema's bounds, can ask for a 40-billion
 * parameter embedded model, 64 trainer ranks and 64 GiB per sandbox call: each is checked here against what the
 * host has (memory, cores, GPUs) or an operator's maximum, and a run that does not fit is refused before anything
 * starts, naming the field, the figure and the limit. Pure: the caller measures the host and the model
 * (workers/handlers/train.ts, workers/train/model-size.ts).
 */
import { DEFAULT_CONSTANTS, embeddedParams, parseCluster, planRun } from '../../contracts/plan.ts';
import { type Recipe, type ToolSession, toolSessionMode } from '../../contracts/recipe.ts';
import { SESSIONS_PER_CORE } from '../sandbox/sessions.ts';

export interface HostResources {
  /** Host memory, bytes (os.totalmem). */
  memoryBytes: number;
  /** CPU cores (os.availableParallelism). */
  cpus: number;
  /** Memory of each GPU torch sees, bytes (empty: none). */
  gpuMemoryBytes: number[];
  /** Tool calls the local sandbox runs at once (its pool size); null when the sandbox is remote nodes, which cap calls themselves. */
  sandboxConcurrency: number | null;
  /** Operators' maxima (TOOLSMITH_MAX_TRAINER_RANKS, TOOLSMITH_MAX_TRAINER_MEMORY_MB, TOOLSMITH_MAX_SANDBOX_MEMORY_MB). */
  maxTrainerRanks?: number;
  maxTrainerMemoryMb?: number;
  maxSandboxMemoryMb?: number;
  /** The trainer's ranks run on a cluster that places them (Ray), not on this host: its limits do not apply. */
  trainerOnCluster?: boolean;
}

/** The model's size: parameters and the precision its weights are stored in. */
export interface ModelSize {
  params: number;
  dtype: string;
}

/**
 * Bytes per parameter while training: the trainer keeps fp32 master weights (4), fp32 gradients (4) and AdamW's two
 * fp32 moments (8), whatever precision the weights are stored in; with LoRA only the frozen fp32 weights (4) count
 * (the adapter is small). Activations come on top, so this is a lower bound.
 */
export const TRAIN_BYTES_PER_PARAM = { full: 16, lora: 4 } as const;
/** The embedded engine's ONNX copy of an embedded model, fp32, in the worker beside a CPU trainer. */
const ROLLOUT_BYTES_PER_PARAM = 4;

// The embedded model's parameter count is the planner's (the designer's Plan panel computes it in the browser).
export { embeddedParams };

const GiB = 2 ** 30;
const fmtBytes = (b: number) => (b >= GiB ? `${(b / GiB).toFixed(1)} GiB` : `${Math.round(b / 2 ** 20)} MiB`);
const fmt = (n: number) => n.toLocaleString('en-US');
const fmtParams = (n: number) =>
  n >= 1e9 ? `${(n / 1e9).toFixed(1)}B` : n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : fmt(n);

/**
 * The recipe's budget against its plan on this host (one node: its GPUs, or its cores), with the planner's stated
 * constants; GPUs of unknown make are taken at 989 dense bf16 TFLOP/s (H100/H200 class).
 */
function overBudget(recipe: Recipe, host: HostResources, model: ModelSize): string[] {
  const b = recipe.budget!;
  const gpus = host.gpuMemoryBytes.length;
  const cluster = parseCluster({
    name: 'this worker',
    nodes: 1,
    gpusPerNode: gpus,
    gpu: gpus ? { name: 'GPU', peakTflops: 989, memoryGb: Math.max(1, host.gpuMemoryBytes[0]! / 1e9) } : null,
    cpuCoresPerNode: Math.max(1, host.cpus),
  });
  const plan = planRun(recipe, model.params, cluster, DEFAULT_CONSTANTS);
  const out: string[] = [];
  const figures = `${plan.steps} RL steps of ${plan.stepSeconds.toFixed(1)} s on ${gpus ? `${gpus} GPU${gpus > 1 ? 's' : ''}` : `${host.cpus} CPU cores`} (npx toolsmith plan shows how)`;
  if (b.storageGB !== undefined && plan.storageBytes / 1e9 > b.storageGB)
    out.push(
      `budget.storageGB: the plan stores ${(plan.storageBytes / 1e9).toFixed(1)} GB of trajectories and token records, over the budget of ${b.storageGB} GB; ${figures}`,
    );
  if (b.gpuHours !== undefined && plan.gpuHours > b.gpuHours)
    out.push(
      `budget.gpuHours: the plan takes ${plan.gpuHours.toFixed(1)} GPU-hours, over the budget of ${b.gpuHours}; ${figures}`,
    );
  return out;
}

/** Every way the recipe overruns the host, each naming the field, the figure and the limit. [] when it fits. */
export function checkResources(recipe: Recipe, host: HostResources, model: ModelSize | null): string[] {
  const out: string[] = [];
  const t = recipe.trainer;
  const onGpu = t.device === 'cuda' || (t.device === 'auto' && host.gpuMemoryBytes.length > 0);

  // Ranks: one per GPU, or one per core on the CPU (more only time-slice, each with its own copy of torch).
  const rankLimit = host.maxTrainerRanks ?? (onGpu ? host.gpuMemoryBytes.length : host.cpus);
  const rankWhy =
    host.maxTrainerRanks !== undefined ? 'TOOLSMITH_MAX_TRAINER_RANKS' : onGpu ? 'its GPUs' : 'its CPU cores';
  if (!host.trainerOnCluster && t.ranks > rankLimit && !(t.device === 'cuda' && host.maxTrainerRanks === undefined)) {
    // (device cuda without enough GPUs is preflight's own "need N GPUs" line)
    out.push(`trainer.ranks: ${t.ranks} ranks is over this worker's limit of ${rankLimit} (${rankWhy})`);
  }

  if (model && !host.trainerOnCluster) {
    const per = t.lora ? TRAIN_BYTES_PER_PARAM.lora : TRAIN_BYTES_PER_PARAM.full;
    const withEngine = !onGpu && recipe.engine.kind === 'embedded' ? ROLLOUT_BYTES_PER_PARAM : 0;
    const need = model.params * (per + withEngine);
    let limit: number;
    let why: string;
    if (host.maxTrainerMemoryMb !== undefined) {
      limit = host.maxTrainerMemoryMb * 2 ** 20;
      why = 'TOOLSMITH_MAX_TRAINER_MEMORY_MB';
    } else if (onGpu) {
      // FSDP shards the weights, gradients and moments over the ranks: the ranks' GPUs together.
      const gpus = host.gpuMemoryBytes.slice(0, Math.max(1, t.ranks));
      limit = gpus.reduce((a, b) => a + b, 0);
      why = `${gpus.length} GPU${gpus.length > 1 ? 's' : ''}' memory`;
    } else {
      limit = host.memoryBytes;
      why = 'its memory';
    }
    if (need > limit) {
      const field = recipe.model.kind === 'embedded' ? 'model.n_embd' : 'model.name';
      const how = `${fmtParams(model.params)} parameters (${model.dtype}) × ${per + withEngine} bytes (${t.lora ? 'frozen fp32 weights (LoRA)' : "fp32 weights, gradients and AdamW's two moments"}${withEngine ? ", and the embedded engine's fp32 copy" : ''})`;
      out.push(
        `${field}: training needs at least ${fmtBytes(need)}, ${how}, over this worker's limit of ${fmtBytes(limit)} (${why})`,
      );
    }
  }

  if (recipe.budget && model) out.push(...overBudget(recipe, host, model));

  out.push(...sessionProblems(recipe, host));
  if (host.sandboxConcurrency !== null) {
    const asks = [{ field: 'tool.memoryMb', mb: recipe.tool.memoryMb }];
    recipe.stages.forEach((s, i) => {
      if (s.type === 'rl' && s.tool) asks.push({ field: `stages.${i}.tool.memoryMb`, mb: s.tool.memoryMb });
    });
    const limitMb = host.maxSandboxMemoryMb ?? Math.floor(host.memoryBytes / 2 ** 20);
    const why = host.maxSandboxMemoryMb !== undefined ? 'TOOLSMITH_MAX_SANDBOX_MEMORY_MB' : 'its memory';
    for (const a of asks) {
      const total = a.mb * host.sandboxConcurrency;
      if (total > limitMb) {
        out.push(
          `${a.field}: ${fmt(a.mb)} MiB per call × ${host.sandboxConcurrency} calls at once = ${fmtBytes(total * 2 ** 20)}, over this worker's limit of ${fmtBytes(limitMb * 2 ** 20)} for the sandbox (${why})`,
        );
      }
    }
  }
  return out;
}

/**
 * tool.session "trajectory" (the recipe's, or a stage's) on the local pool: each open session may hold its memoryMb,
 * SESSIONS_PER_CORE per core at once, which must fit the sandbox's limit. Sandbox nodes (and Ray's) bound their own.
 */
function sessionProblems(recipe: Recipe, host: HostResources): string[] {
  const asks: { field: string; tool: { session: ToolSession; memoryMb: number } }[] = [
    { field: 'tool.session', tool: recipe.tool },
  ];
  recipe.stages.forEach((s, i) => {
    if (s.type === 'rl' && s.tool) asks.push({ field: `stages.${i}.tool.session`, tool: s.tool });
  });
  const wanted = asks.filter((a) => toolSessionMode(a.tool.session) === 'trajectory');
  if (host.sandboxConcurrency === null) return [];
  const limitMb = host.maxSandboxMemoryMb ?? Math.floor(host.memoryBytes / 2 ** 20);
  const open = SESSIONS_PER_CORE * host.sandboxConcurrency;
  return wanted
    .filter((a) => a.tool.memoryMb * open > limitMb)
    .map(
      (a) =>
        `${a.field}: "trajectory" sessions hold up to ${fmt(a.tool.memoryMb)} MiB each (tool.memoryMb), ${open} open at once = ${fmtBytes(a.tool.memoryMb * open * 2 ** 20)}, over this worker's limit of ${fmtBytes(limitMb * 2 ** 20)} for the sandbox: lower tool.memoryMb or set tool.session to "replay"`,
    );
}
