/**
 * Plan before launch: what one RL step and the whole run of a recipe cost on a cluster, from a handful of
 * constants that are either calibrated on measured runs (contracts/plan-calibration.ts) or stated defaults, every one shown with its
 * source. Pure: the CLI (`npx toolsmith plan`) and the workbench call it with the model's parameter count.
 *
 * Per RL step of a stage (docs/method.md §5–§7):
 * - rollout: tokens generated = prompts × 2G × (mean response tokens), at an engine throughput per GPU on the
 *   engine's GPUs (on a CPU-only cluster: the measured tokens/s of this machine's engine);
 * - tool calls = prompts × 2G × calls per trajectory; the sandbox cores that keep the mean tool latency under a
 *   target from the CPU seconds a call takes, by an M/M/c queue (Erlang C);
 * - training: (6 + 2)·N FLOPs per trained token (the update, and the forward that recomputes the old logprobs) over
 *   GPUs × peak dense bf16 × MFU; on CPUs, the calibrated trained tokens/s;
 * - weight sync: 2 bytes per parameter over the sync bandwidth, plus a fixed cost;
 * - storage: every trajectory's text and token record; database rows: trajectories, tool calls, metric points.
 * A synchronous step is rollout + train + sync; an async one (k ≥ 1) max(rollout, train + sync). The phase with the
 * largest share bounds it.
 * Around the RL steps: each SFT stage (6·N FLOPs per demonstration token) and each evaluation (after every stage,
 * every `eval.everySteps` RL steps and, with `atStart`, before the first: problems × k responses generated).
 * On a CPU machine the engine and the trainer reach a measured share of the machine's FLOPs on a real model and a
 * ceiling on a tiny one (per-token overhead), so their rates depend on the model's size.
 */
import { z } from 'zod';
import { coresForLatency, meanLatency } from './plan-queueing.ts';
import { type Recipe, type RlStage, type SftStage, type ToolSession, toolSessionMode } from './recipe.ts';

// ---- The cluster ------------------------------------------------------------------------------------------------

export const GpuSchema = z.object({
  name: z.string().min(1).max(60),
  /** Peak dense bf16 TFLOP/s per GPU (datasheet). */
  peakTflops: z.number().positive().max(1e5),
  memoryGb: z.number().positive().max(1e4),
});

export const ClusterSchema = z.object({
  name: z.string().min(1).max(60).default('custom'),
  nodes: z.number().int().min(1).max(100_000),
  gpusPerNode: z.number().int().min(0).max(64),
  gpu: GpuSchema.nullable().default(null),
  cpuCoresPerNode: z.number().int().min(1).max(100_000),
  /** Nodes that run only sandboxes (0: the sandboxes use the training nodes' cores). */
  sandboxNodes: z.number().int().min(0).max(100_000).default(0),
  sandboxCoresPerNode: z.number().int().min(1).max(100_000).optional(),
  /** Share of the GPUs that serve rollouts; the rest train (default: all of them do both, in turn). */
  engineGpuShare: z.number().gt(0).max(1).default(1),
});
export type Cluster = z.output<typeof ClusterSchema>;
export type ClusterInput = z.input<typeof ClusterSchema>;

export const CLUSTER_PRESETS: Record<'local' | 'h200' | 'report', ClusterInput> = {
  /** This machine: CPUs only; the engine and the trainer share its cores. */
  local: { name: 'local', nodes: 1, gpusPerNode: 0, gpu: null, cpuCoresPerNode: 2 },
  /** One 8 × H200 node (989 dense bf16 TFLOP/s, 141 GB each; 2 × 56-core CPUs). */
  h200: {
    name: 'h200',
    nodes: 1,
    gpusPerNode: 8,
    gpu: { name: 'H200', peakTflops: 989, memoryGb: 141 },
    cpuCoresPerNode: 112,
  },
  /** The report's: 8 nodes × 8 MI300X (1,307 dense bf16 TFLOP/s, 192 GB each), the code service on their CPUs. */
  report: {
    name: 'report',
    nodes: 8,
    gpusPerNode: 8,
    gpu: { name: 'MI300X', peakTflops: 1307, memoryGb: 192 },
    cpuCoresPerNode: 128,
  },
};

export function parseCluster(value: unknown): Cluster {
  const r = ClusterSchema.safeParse(value);
  if (!r.success)
    throw new Error(
      `cluster: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  return r.data;
}

/** The vocabulary of the embedded character tokenizer, rounded up (workers/engines/tokenizer.ts). */
const EMBEDDED_VOCAB_SIZE = 128;

/** Parameters of an embedded model from its recipe sizes (workers/trainer/hf_model.py make_config: tied embeddings, 4× MLP). */
export function embeddedParams(m: { n_layer: number; n_embd: number; n_head: number; n_kv_head?: number }): number {
  const d = m.n_embd;
  const kv = (m.n_kv_head ?? m.n_head) * Math.floor(d / m.n_head);
  const perLayer = 2 * d * d + 2 * d * kv + 3 * d * 4 * d + 2 * d;
  return EMBEDDED_VOCAB_SIZE * d + m.n_layer * perLayer + d;
}

// ---- The constants ----------------------------------------------------------------------------------------------

/** Where a constant comes from: a measured run (named), the report, or a stated default. */
export interface Source {
  kind: 'measured' | 'report' | 'default';
  /** The run it was measured on, or the report's section, or why the default is what it is. */
  detail: string;
}

export interface Constant {
  value: number;
  source: Source;
}

/** Everything the planner assumes that a recipe and a cluster do not say. */
export interface PlanConstants {
  /** Mean response tokens as a share of the stage's maxResponseTokens. */
  responseShare: Constant;
  /** Tool calls per trajectory. */
  callsPerTrajectory: Constant;
  /** Prompt tokens per trajectory. */
  promptTokens: Constant;
  /** GPU clusters: decode throughput per engine GPU, as a share of peak FLOPs spent at 2·N per token. */
  engineDecodeEfficiency: Constant;
  /** CPU clusters: the engine's generated tokens per second on the whole machine for a tiny model (its ceiling). */
  engineTokensPerS: Constant;
  /** CPU clusters: the engine's decode FLOP/s (2·N per token) on a real model; the rate is the lower of the two. */
  cpuEngineFlops: Constant;
  /** GPU clusters: model FLOPs utilisation of training. */
  mfu: Constant;
  /** CPU clusters: trained tokens per second for a tiny model (the update and the old-logprob recompute together). */
  trainTokensPerS: Constant;
  /** CPU clusters: the trainer's FLOP/s (8·N per RL token, 6·N per SFT token) on a real model; the lower rate holds. */
  cpuTrainFlops: Constant;
  /** Tokens of an SFT demonstration as a share of the stage's maxLength. */
  sftLengthShare: Constant;
  /** Seconds of fixed work per step outside the phases (reward, RoC, storage, bookkeeping). */
  overheadS: Constant;
  /** Weight sync: a fixed cost per sync, and bytes per second for 2 bytes per parameter. */
  syncFixedS: Constant;
  syncBytesPerS: Constant;
  /** CPU seconds one tool call takes in the sandbox. */
  cpuPerCallS: Constant;
  /** The mean tool latency (queue + run) the sandbox fleet is sized for. */
  targetToolLatencyS: Constant;
  /** Memory of one `trajectory` session's interpreter (recipe tool.session): a zygote of its own, numpy, sympy and
   *  scipy loaded, before the session's own data. */
  sessionBytes: Constant;
  /** Stored bytes per response token (text, token record) and per trajectory. */
  bytesPerToken: Constant;
  bytesPerTrajectory: Constant;
  /** Metric points per step. */
  metricsPerStep: Constant;
}

const def = (value: number, detail: string): Constant => ({ value, source: { kind: 'default', detail } });

export const DEFAULT_CONSTANTS: PlanConstants = {
  responseShare: def(0.5, 'half the response budget (calibrate on a run of the recipe)'),
  callsPerTrajectory: def(2.75, 'the report: ~45K calls over 512 × 32 trajectories per step (§1)'),
  promptTokens: def(200, 'a math problem and the template'),
  engineDecodeEfficiency: def(0.04, 'batched decode reaches a few % of peak FLOPs (memory-bound)'),
  engineTokensPerS: def(3000, "this machine's embedded engine, batched (bench:engine)"),
  cpuEngineFlops: def(
    5.5e10,
    "SmolLM2-135M's 205 tokens/s at batch 16 on this machine's 2 cores (bench:engine, float32, 2026-12-07) × 2 × 134.5M",
  ),
  mfu: def(0.3, 'FSDP2 bf16 training of a 14B model'),
  trainTokensPerS: def(4000, "this machine's trainer on the embedded model (bench:trainer)"),
  cpuTrainFlops: def(
    1.9e11,
    "SmolLM2-135M full fine-tuning in float32, 4 × 256 tokens: 241 tokens/s on this machine's 2 cores × 6·N (2026-12-06)",
  ),
  sftLengthShare: def(0.5, 'half of maxLength (a worked solution with a tool call; calibrate on a run)'),
  overheadS: def(0.05, 'reward, RoC and storage of a small step'),
  syncFixedS: def(0.3, 'export and reload of the embedded model (docs/benchmarks.md "Step-time breakdown")'),
  syncBytesPerS: def(5e9, 'weights over the cluster network and into the engines'),
  cpuPerCallS: def(0.05, 'a sympy or numpy snippet in the pool (bench:sandbox); print(1+1) takes ~5 ms'),
  targetToolLatencyS: def(0.3, "the report's mean tool latency (§3)"),
  sessionBytes: def(
    100e6,
    "a session's zygote, its two OOM reserves and its process with numpy, sympy and scipy loaded: 100 MB PSS on this machine (2026-12-07)",
  ),
  bytesPerToken: def(20, 'text (~4 B) and token record (ids, two logprobs, weight, clip: ~16 B)'),
  bytesPerTrajectory: def(1500, 'the row, its turns and tool-call rows (bench:db)'),
  metricsPerStep: def(60, 'the RL step metrics'),
};

// ---- The plan ---------------------------------------------------------------------------------------------------

export type Phase = 'rollout' | 'train' | 'sync' | 'overhead';

export interface StagePlan {
  name: string;
  steps: number;
  trajectories: number;
  generatedTokens: number;
  trainedTokens: number;
  toolCalls: number;
  rolloutS: number;
  trainS: number;
  syncS: number;
  overheadS: number;
  stepS: number;
  boundBy: Phase;
  sandboxCores: number;
  toolLatencyS: number;
  /** tool.session "trajectory": the interpreters held at once (one per trajectory of the step, all in flight) and
   *  their memory; 0 when calls run fresh. */
  sessions: number;
  sessionMemoryBytes: number;
  storageBytes: number;
  dbRows: number;
}

/** An SFT stage: its optimiser steps and the demonstration tokens it trains on. */
export interface SftPlan {
  name: string;
  steps: number;
  demos: number;
  trainedTokens: number;
  seconds: number;
}

/** The run's evaluations: how many, what each generates, and what they take together. */
export interface EvalPlan {
  evaluations: number;
  /** Problems per evaluation (the recipe's generated sets and the stored ones of known size). */
  problems: number;
  samples: number;
  generatedTokens: number;
  secondsEach: number;
  seconds: number;
  /** Stored datasets whose size is not known here: not counted (the plan says so). */
  unsized: string[];
}

/** Where the run's time goes: the SFT stages, the RL steps, the evaluations. */
export type RunPhase = 'sft' | 'rl' | 'eval';

export interface Plan {
  cluster: Cluster;
  params: number;
  stages: StagePlan[];
  sft: SftPlan[];
  evaluation: EvalPlan | null;
  /** Seconds of each part of the run; runSeconds is their sum. */
  phaseSeconds: Record<RunPhase, number>;
  /** Step-weighted over the RL stages. */
  stepSeconds: number;
  toolCallsPerStep: number;
  sandboxCores: number;
  storageBytesPerStep: number;
  boundBy: Phase;
  steps: number;
  /** SFT, RL and evaluation together. */
  runSeconds: number;
  gpuHours: number;
  storageBytes: number;
  dbRows: number;
  /** Training memory per GPU (bf16 weights and grads, fp32 AdamW moments and master weights: 16 B/parameter, sharded). */
  trainMemoryGbPerGpu: number | null;
  constants: PlanConstants;
}

/** What the planner cannot read from a recipe: the stored datasets' problems per split (name → split → count). */
export interface PlanContext {
  datasetSplits?: Record<string, Record<string, number>>;
}

/** The plan of `recipe` (its SFT stages, RL stages and evaluations) for a model of `params` parameters on `cluster`. */
export function planRun(
  recipe: Recipe,
  params: number,
  cluster: Cluster,
  constants: PlanConstants = DEFAULT_CONSTANTS,
  context: PlanContext = {},
): Plan {
  const stages = recipe.stages
    .filter((s): s is RlStage => s.type === 'rl')
    .map((s) => planStage(s, params, cluster, constants, s.tool ?? recipe.tool));
  const sft = recipe.stages
    .filter((s): s is SftStage => s.type === 'sft')
    .map((s) => planSft(s, params, cluster, constants));
  const evaluation = planEval(recipe, params, cluster, constants, context);
  const steps = stages.reduce((a, s) => a + s.steps, 0);
  const weighted = (f: (s: StagePlan) => number) =>
    steps === 0 ? 0 : stages.reduce((a, s) => a + f(s) * s.steps, 0) / steps;
  const phaseSeconds: Record<RunPhase, number> = {
    sft: sft.reduce((a, s) => a + s.seconds, 0),
    rl: stages.reduce((a, s) => a + s.stepS * s.steps, 0),
    eval: evaluation?.seconds ?? 0,
  };
  const runSeconds = phaseSeconds.sft + phaseSeconds.rl + phaseSeconds.eval;
  const gpus = cluster.nodes * cluster.gpusPerNode;
  const phaseTotals: Record<Phase, number> = { rollout: 0, train: 0, sync: 0, overhead: 0 };
  for (const s of stages) {
    phaseTotals.rollout += s.rolloutS * s.steps;
    phaseTotals.train += s.trainS * s.steps;
    phaseTotals.sync += s.syncS * s.steps;
    phaseTotals.overhead += s.overheadS * s.steps;
  }
  return {
    cluster,
    params,
    stages,
    sft,
    evaluation,
    phaseSeconds,
    stepSeconds: weighted((s) => s.stepS),
    toolCallsPerStep: weighted((s) => s.toolCalls),
    sandboxCores: Math.max(0, ...stages.map((s) => s.sandboxCores)),
    storageBytesPerStep: weighted((s) => s.storageBytes),
    boundBy: argmax(phaseTotals),
    steps,
    runSeconds,
    gpuHours: (gpus * runSeconds) / 3600,
    storageBytes: stages.reduce((a, s) => a + s.storageBytes * s.steps, 0),
    dbRows: stages.reduce((a, s) => a + s.dbRows * s.steps, 0),
    trainMemoryGbPerGpu: gpus > 0 ? (16 * params) / gpus / 1e9 : null,
    constants,
  };
}

/** Generated tokens per second of the engines: a share of peak FLOPs per engine GPU, or the CPU machine's rate. */
export function engineRate(params: number, cluster: Cluster, c: PlanConstants): number {
  const gpus = cluster.nodes * cluster.gpusPerNode;
  if (gpus > 0 && cluster.gpu) {
    const engineGpus = Math.max(1, Math.round(gpus * cluster.engineGpuShare));
    return ((c.engineDecodeEfficiency.value * cluster.gpu.peakTflops * 1e12) / (2 * params)) * engineGpus;
  }
  return Math.min(c.engineTokensPerS.value, c.cpuEngineFlops.value / (2 * params));
}

/** Seconds to train on `tokens` at `flopsPerToken`·N FLOPs each (8 for an RL update, 6 for SFT). */
export function trainSeconds(
  tokens: number,
  flopsPerToken: number,
  params: number,
  cluster: Cluster,
  c: PlanConstants,
): number {
  const gpus = cluster.nodes * cluster.gpusPerNode;
  if (gpus > 0 && cluster.gpu)
    return (flopsPerToken * params * tokens) / (gpus * cluster.gpu.peakTflops * 1e12 * c.mfu.value);
  // trainTokensPerS is an RL token's rate (8·N); an SFT token costs 6/8 of it.
  const rate = Math.min(c.trainTokensPerS.value, c.cpuTrainFlops.value / (8 * params)) * (8 / flopsPerToken);
  return tokens / rate;
}

function planSft(s: SftStage, params: number, cluster: Cluster, c: PlanConstants): SftPlan {
  const byEpochs = Math.ceil((s.data.n * s.epochs) / s.batch);
  const steps = s.maxSteps !== undefined ? Math.min(s.maxSteps, byEpochs) : byEpochs;
  const demos = Math.min(s.data.n * s.epochs, steps * s.batch);
  const trainedTokens = demos * c.sftLengthShare.value * s.maxLength;
  return { name: s.name, steps, demos, trainedTokens, seconds: trainSeconds(trainedTokens, 6, params, cluster, c) };
}

function planEval(
  recipe: Recipe,
  params: number,
  cluster: Cluster,
  c: PlanConstants,
  context: PlanContext,
): EvalPlan | null {
  const e = recipe.eval;
  if (!e) return null;
  // As workers/train/orchestrator.ts and rl-stage.ts run them: after every stage, every `everySteps` RL steps of a
  // stage but its last, and the starting model's baseline with `atStart`.
  const every = e.everySteps;
  const evaluations =
    recipe.stages.length +
    (e.atStart ? 1 : 0) +
    recipe.stages.reduce((a, s) => a + (s.type === 'rl' && every ? Math.floor((s.steps - 1) / every) : 0), 0);
  let problems = 0;
  const unsized: string[] = [];
  for (const d of e.datasets) {
    if (d.kind === 'generated') problems += d.n;
    else {
      const splits = context.datasetSplits?.[d.name];
      if (splits === undefined) {
        unsized.push(d.name);
        continue;
      }
      const size = d.split === 'all' ? Object.values(splits).reduce((a, b) => a + b, 0) : (splits[d.split] ?? 0);
      problems += d.limit !== undefined ? Math.min(d.limit, size) : size;
    }
  }
  const samples = problems * e.k;
  const generatedTokens = samples * c.responseShare.value * e.maxTokens;
  const secondsEach = generatedTokens / engineRate(params, cluster, c);
  return { evaluations, problems, samples, generatedTokens, secondsEach, seconds: evaluations * secondsEach, unsized };
}

function planStage(
  s: RlStage,
  params: number,
  cluster: Cluster,
  c: PlanConstants,
  tool: { session: ToolSession },
): StagePlan {
  const trajectories = s.promptsPerStep * s.rolloutsPerPrompt;
  const response = c.responseShare.value * s.maxResponseTokens;
  const generatedTokens = trajectories * response;
  const trainedTokens = s.promptsPerStep * s.keep * (response + c.promptTokens.value);
  const rolloutS = generatedTokens / engineRate(params, cluster, c);
  const trainS = trainSeconds(trainedTokens, 8, params, cluster, c);
  const syncS = c.syncFixedS.value + (2 * params) / c.syncBytesPerS.value;
  const overheadS = c.overheadS.value;
  const asyncOn = s.async.enabled && s.async.maxStaleness > 0;
  const phases: Record<Phase, number> = { rollout: rolloutS, train: trainS, sync: syncS, overhead: overheadS };
  const stepS = asyncOn ? Math.max(rolloutS, trainS + syncS) + overheadS : rolloutS + trainS + syncS + overheadS;
  const toolCalls = trajectories * c.callsPerTrajectory.value;
  const sandboxCoresAvailable =
    cluster.sandboxNodes > 0
      ? cluster.sandboxNodes * (cluster.sandboxCoresPerNode ?? cluster.cpuCoresPerNode)
      : cluster.nodes * cluster.cpuCoresPerNode;
  // Calls arrive over the rollout phase; each takes cpuPerCallS of one core.
  const rate = rolloutS > 0 ? toolCalls / rolloutS : 0;
  const sandboxCores = coresForLatency(rate, c.cpuPerCallS.value, c.targetToolLatencyS.value);
  const toolLatencyS = meanLatency(
    rate,
    c.cpuPerCallS.value,
    Math.min(sandboxCoresAvailable, Math.max(sandboxCores, 1)),
  );
  const sessions = toolSessionMode(tool.session) === 'trajectory' ? trajectories : 0;
  const storageBytes = trajectories * (c.bytesPerTrajectory.value + response * c.bytesPerToken.value);
  const dbRows = trajectories + toolCalls + c.metricsPerStep.value;
  return {
    name: s.name,
    steps: s.steps,
    trajectories,
    generatedTokens,
    trainedTokens,
    toolCalls,
    rolloutS,
    trainS,
    syncS,
    overheadS,
    stepS,
    boundBy: asyncOn ? (rolloutS >= trainS + syncS ? 'rollout' : trainS >= syncS ? 'train' : 'sync') : argmax(phases),
    sandboxCores,
    toolLatencyS,
    sessions,
    sessionMemoryBytes: sessions * c.sessionBytes.value,
    storageBytes,
    dbRows,
  };
}

/** What `trajectory` sessions cost a stage, or null when its calls run fresh (the CLI and the Plan panel show it). */
export function sessionLine(s: StagePlan): string | null {
  if (s.sessions === 0) return null;
  return `${s.name}: tool.session "trajectory" holds ${Math.round(s.sessions).toLocaleString('en-US')} interpreters at once (one per trajectory in flight), ${formatBytes(s.sessionMemoryBytes)} of sandbox memory before their own data; a local pool opens at most 4 per core and the other trajectories wait at their first call for one to end`;
}

function argmax(x: Record<Phase, number>): Phase {
  return (Object.entries(x) as [Phase, number][]).reduce((a, b) => (b[1] > a[1] ? b : a))[0];
}

// ---- Display --------------------------------------------------------------------------------------------------

/** Seconds as the CLI and the Plan panel show them: s, min or h. */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '∞';
  if (s >= 3600) return `${(s / 3600).toFixed(1)} h`;
  return s >= 60 ? `${(s / 60).toFixed(1)} min` : `${s.toFixed(2)} s`;
}

/**
 * The sentence that says why a stage's bound phase bounds its step: the phase's seconds against the step's and the
 * other phases', and what the phase is made of (the CLI and the Plan panel print it).
 */
export function whyBound(s: StagePlan): string {
  const phases: Record<Phase, number> = { rollout: s.rolloutS, train: s.trainS, sync: s.syncS, overhead: s.overheadS };
  const what: Record<Phase, string> = {
    rollout: `generating ${Math.round(s.generatedTokens).toLocaleString('en-US')} tokens and running ${Math.round(s.toolCalls).toLocaleString('en-US')} tool calls`,
    train: `training on ${Math.round(s.trainedTokens).toLocaleString('en-US')} tokens`,
    sync: 'sending the new weights to the engines',
    overhead: 'the fixed per-step overhead',
  };
  const others = (Object.keys(phases) as Phase[])
    .filter((p) => p !== s.boundBy)
    .map((p) => `${p} ${formatSeconds(phases[p])}`)
    .join(', ');
  return `${s.name}: ${s.boundBy} bounds the step — ${what[s.boundBy]} takes ${formatSeconds(phases[s.boundBy])} of its ${formatSeconds(s.stepS)} (${others})`;
}

/** Where the run's time goes: each SFT stage, the RL steps, the evaluations (the Plan panel shows the same). */
export function runPhaseLines(p: Plan): string[] {
  const lines = [
    `run ${formatSeconds(p.runSeconds)}: SFT ${formatSeconds(p.phaseSeconds.sft)}, RL ${formatSeconds(p.phaseSeconds.rl)}, evaluation ${formatSeconds(p.phaseSeconds.eval)}`,
  ];
  for (const s of p.sft)
    lines.push(
      `  ${s.name}: ${count(s.steps)} SFT steps, ${count(s.demos)} demonstrations, ${count(s.trainedTokens)} tokens trained: ${formatSeconds(s.seconds)}`,
    );
  const e = p.evaluation;
  if (e)
    lines.push(
      `  evaluation: ${e.evaluations} × ${count(e.problems)} problems × k = ${count(e.samples)} responses, ${count(e.generatedTokens)} tokens: ${formatSeconds(e.secondsEach)} each, ${formatSeconds(e.seconds)} in all${e.unsized.length ? `; not counted, size unknown here: ${e.unsized.join(', ')}` : ''}`,
    );
  return lines;
}

const count = (x: number) => Math.round(x).toLocaleString('en-US');

/** Bytes in decimal units (MB, GB, TB), as storage is sold. */
export function formatBytes(b: number): string {
  if (b >= 1e12) return `${(b / 1e12).toFixed(1)} TB`;
  return b >= 1e9 ? `${(b / 1e9).toFixed(1)} GB` : `${(b / 1e6).toFixed(1)} MB`;
}
