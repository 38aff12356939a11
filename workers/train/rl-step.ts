/**
 * One GRPO-RoC step (docs/method.md §5): 2G rollouts per prompt → rewards → penalties → group filtering and RoC
 * selection → advantages over the kept G → one policy update. Returns everything the orchestrator stores.
 */
import { bootstrapMean } from '../../contracts/intervals.ts';
import type { Tokenizer } from '../engines/tokenizer.ts';
import type { InferenceEngine } from '../engines/types.ts';
import type { Verifier } from '../reward/verifier.ts';
import type { TokenRecord, Verdict, Trajectory } from '../../contracts/trajectory.ts';
import type { PhaseSpan } from '../../contracts/timeline.ts';
import { runRollouts, type RolloutEvent } from '../rollout/agent.ts';
import { scoreTrajectory } from '../rollout/score.ts';
import type { TemplateSettings } from '../rollout/template.ts';
import { toolStats } from '../rollout/trajectory.ts';
import { trajectoryPenalties } from '../rl/penalties.ts';
import { selectStep, type GroupSelection, type RocOptions } from '../rl/grpo-roc.ts';
import { isMixed, surplusGroup, trainedGroups } from '../rl/dynamic-sampling.ts';
import type { PassTier } from '../rl/curriculum.ts';
import type { Rng } from '../rl/sampling.ts';
import type { TisMode, ToolFormat, ToolSession } from '../../contracts/recipe.ts';
import type { Sandbox } from '../sandbox/types.ts';
import type { PolicyMetrics, PolicyParams, Trainer } from '../trainer/types.ts';
import { policySample } from './policy-batch.ts';
import { tokenRecord, type TrainedTokens } from '../policy/token-record.ts';
import type { TaskProblem } from './data.ts';
import { type MetricKey, POLICY_METRICS, type StepMetrics } from '../../contracts/metrics.ts';

export interface RlStepConfig {
  rolloutsPerPrompt: number;
  keep: number;
  roc: Pick<RocOptions, 'roc' | 'positiveSelection' | 'minPerSign' | 'dropEqualReward'>;
  epsLow: number;
  epsHigh: number;
  dualClip: number | null;
  /** Truncated importance sampling against the engine–trainer mismatch (docs/method.md §5 "TIS"). */
  tis: { mode: TisMode; cap: number };
  temperature: number;
  maxResponseTokens: number;
  maxTurns: number;
  tool: { timeoutS: number; memoryMb: number; session: ToolSession; sessionTimeS?: number; seedCalls?: boolean };
  template: TemplateSettings;
  toolFormat: ToolFormat;
}

export interface RlStepDeps {
  engine: InferenceEngine;
  /** The weight version the rollouts must be generated with (the policy engine's, after the step's sync). */
  weightVersion?: number;
  tokenizer: Tokenizer;
  sandbox: Sandbox;
  verifier: Verifier;
  trainer: Trainer;
  signal?: AbortSignal;
  onEvent?: (e: RolloutEvent) => void;
}

export interface ScoredRollout {
  problem: TaskProblem;
  group: number;
  sample: number;
  trajectory: Trajectory;
  verdict: Verdict;
  reward: number;
  pErr: number;
  pFormat: number;
  /** The token-level record (ids, engine and trainer log-probs, TIS weights, clip states) for the token view. */
  tokens?: TokenRecord;
}

export interface RlStepResult {
  rollouts: ScoredRollout[];
  groups: GroupSelection[];
  policy: PolicyMetrics | null;
  metrics: Record<string, number>;
  timings: { rollout: number; reward: number; roc: number; train: number };
  /** When reward, RoC and training ran (epoch ms), for the step's timeline. */
  spans: PhaseSpan[];
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** A step's rollouts, scored: what the update needs (generateStep's result). */
export interface GeneratedStep {
  prompts: TaskProblem[];
  rollouts: ScoredRollout[];
  timings: { rollout: number; reward: number };
  /** When rewards were computed (epoch ms): one span per round of generation. */
  spans: PhaseSpan[];
  /** What dynamic sampling and the curriculum did (prompt-draw.ts); absent: one round, every group goes to RoC. */
  sampling?: StepSampling;
}

/** How a step's prompts were drawn (docs/method.md §5 "Dynamic sampling and the pass-rate curriculum"). */
export interface StepSampling {
  /** Groups with mixed rewards the step trains at most (dynamic sampling on), else null. */
  target: number | null;
  /** Rounds of generation. */
  rounds: number;
  /** Dynamic sampling stopped (cap or pool) with fewer mixed groups than its target. */
  short: boolean;
  /** Pool problems the curriculum set aside this step (solved always or never) and did not draw. */
  skipped: number;
  /** The pool by estimated pass rate (curriculum on), else null. */
  tiers: Record<PassTier, number> | null;
}

/** One GRPO-RoC step: generateStep then updateStep (the synchronous loop's step). */
export async function rlStep(
  deps: RlStepDeps,
  cfg: RlStepConfig,
  prompts: TaskProblem[],
  seedBase: number,
  rng: Rng,
): Promise<RlStepResult> {
  return updateStep(deps, cfg, await generateStep(deps, cfg, prompts, seedBase), rng);
}

/** The rollouts of a step (2G per prompt, seeded from seedBase) and their rewards and penalties. */
export async function generateStep(
  deps: Omit<RlStepDeps, 'trainer'>,
  cfg: RlStepConfig,
  prompts: TaskProblem[],
  seedBase: number,
  /** The step's groups drawn before these (dynamic sampling's later rounds): ids, seeds and groups continue. */
  groupOffset = 0,
): Promise<GeneratedStep> {
  const t0 = performance.now();
  const requests = prompts.flatMap((p, g) =>
    Array.from({ length: cfg.rolloutsPerPrompt }, (_, j) => ({
      id: `g${groupOffset + g}:${j}`,
      problem: p.question,
      seed: seedBase + (groupOffset + g) * cfg.rolloutsPerPrompt + j,
    })),
  );
  const trajectories = await runRollouts(requests, {
    engine: deps.engine,
    sandbox: deps.sandbox,
    template: cfg.template,
    toolFormat: cfg.toolFormat,
    limits: { maxResponseTokens: cfg.maxResponseTokens, maxTurns: cfg.maxTurns },
    temperature: cfg.temperature,
    tool: cfg.tool,
    onEvent: deps.onEvent,
    signal: deps.signal,
    weightVersion: deps.weightVersion,
  });
  if (deps.signal?.aborted) throw new Error('training stopped');
  const t1 = performance.now();
  const rewardStart = Date.now();
  const rollouts: ScoredRollout[] = [];
  for (let n = 0; n < trajectories.length; n++) {
    const g = Math.floor(n / cfg.rolloutsPerPrompt);
    const t = trajectories[n]!;
    const s = await scoreTrajectory(t, prompts[g]!.answer, deps.verifier, prompts[g]!.question);
    const pen = trajectoryPenalties(t, cfg.template);
    rollouts.push({
      problem: prompts[g]!,
      group: groupOffset + g,
      sample: n % cfg.rolloutsPerPrompt,
      trajectory: t,
      verdict: s.verdict,
      reward: s.reward,
      pErr: pen.pErr,
      pFormat: pen.pFormat,
    });
  }
  return {
    prompts,
    rollouts,
    timings: { rollout: (t1 - t0) / 1000, reward: (performance.now() - t1) / 1000 },
    spans: [{ name: 'reward', start: rewardStart, end: Date.now() }],
  };
}

/** Group filtering and RoC selection, advantages over the kept G, one policy update, the step's metrics. */
export async function updateStep(
  deps: Pick<RlStepDeps, 'trainer' | 'tokenizer'>,
  cfg: RlStepConfig,
  generated: GeneratedStep,
  rng: Rng,
): Promise<RlStepResult> {
  const { prompts, rollouts } = generated;
  const t2 = performance.now();
  const rocStart = Date.now();
  const byGroup = prompts.map((_, g) => rollouts.filter((r) => r.group === g));
  const roc = byGroup.map((rs) => rs.map((r) => ({ reward: r.reward, pErr: r.pErr, pFormat: r.pFormat })));
  // Dynamic sampling trains the first `target` mixed groups; any mixed group past them is stored, not trained.
  const mixed = roc.map((rs) => isMixed(rs.map((r) => r.reward)));
  const trains = trainedGroups(mixed, generated.sampling?.target ?? null);
  const chosen = selectStep(
    roc.filter((_, g) => trains[g]),
    { ...cfg.roc, keep: cfg.keep },
    rng,
  );
  const summary = chosen.summary;
  let next = 0;
  const groups = roc.map((rs, g) => (trains[g] ? chosen.groups[next++]! : surplusGroup(rs)));
  const t3 = performance.now();
  const trainStart = Date.now();

  // The policy update over the kept rollouts; old logprobs recomputed by the trainer (as verl does), so the ratio is
  // exactly 1 at the first micro-step whatever the engine's numerics; the engine-vs-trainer gap is corrected by TIS
  // (π_old / π_rollout from the engine's logprobs) and measured (train/logprob_gap, train/mismatch_kl).
  const kept: Kept = [];
  groups.forEach((gs, g) =>
    gs.samples.forEach((s, i) => {
      if (s.selected && s.advantage !== null) kept.push({ r: byGroup[g]![i]!, advantage: s.advantage });
    }),
  );
  const { policy, logprobGap, update } = await policyUpdate(deps, cfg, kept);
  const t4 = performance.now();
  const trainEnd = Date.now();
  attachTokenRecords(rollouts, deps.tokenizer, update); // outside time/train: it is bookkeeping, not the update

  const metrics = stepMetrics(generated, byGroup, mixed, kept, summary, logprobGap, policy);
  return {
    rollouts,
    groups,
    policy,
    metrics,
    timings: { ...generated.timings, roc: (t3 - t2) / 1000, train: (t4 - t3) / 1000 },
    spans: [
      ...generated.spans,
      { name: 'roc', start: rocStart, end: trainStart },
      { name: 'train', start: trainStart, end: trainEnd },
    ],
  };
}

type Kept = { r: ScoredRollout; advantage: number }[];

/** One policy update over the kept rollouts (nothing without any), with the engine-vs-trainer logprob gap. */
async function policyUpdate(deps: Pick<RlStepDeps, 'trainer' | 'tokenizer'>, cfg: RlStepConfig, kept: Kept) {
  let policy: PolicyMetrics | null = null;
  let logprobGap = 0;
  let update: Parameters<typeof attachTokenRecords>[2] = null;
  if (kept.length > 0) {
    const samples = kept.map((k) => policySample(k.r.trajectory, deps.tokenizer));
    const old = await deps.trainer.logprobs({
      sequences: samples.map((s) => s.ids),
      response_start: samples.map((s) => s.responseStart),
    });
    const gaps: number[] = [];
    samples.forEach((s, i) =>
      s.engineLogprobs.forEach((lp, j) => {
        if (lp !== null && s.responseMask[j] && old[i]![j] != null) gaps.push(Math.abs(lp - old[i]![j]!));
      }),
    );
    logprobGap = mean(gaps);
    policy = await deps.trainer.policyStep({
      sequences: samples.map((s) => s.ids),
      response_start: samples.map((s) => s.responseStart),
      response_mask: samples.map((s) => s.responseMask),
      old_logprobs: old,
      advantages: kept.map((k) => k.advantage),
      eps_low: cfg.epsLow,
      eps_high: cfg.epsHigh,
      dual_clip: cfg.dualClip,
      ...tisParams(
        samples.map((s) => s.engineLogprobs),
        cfg.tis,
      ),
    });
    update = { kept, old, policy };
  }
  return { policy, logprobGap, update };
}

/** The step's metrics: the rollouts', RoC's and sampling's numbers, then the update's. */
function stepMetrics(
  generated: GeneratedStep,
  byGroup: ScoredRollout[][],
  mixed: boolean[],
  kept: Kept,
  summary: ReturnType<typeof selectStep>['summary'],
  logprobGap: number,
  policy: PolicyMetrics | null,
): Record<string, number> {
  const { prompts, rollouts } = generated;
  const stats = rollouts.map((r) => ({ ...toolStats(r.trajectory), r }));
  const correct = stats.filter((s) => s.r.reward > 0);
  const errRate = (xs: typeof stats) => {
    const c = xs.reduce((a, s) => a + s.calls, 0);
    return c ? xs.reduce((a, s) => a + s.errors, 0) / c : 0;
  };
  const selected = new Set(kept.map((k) => k.r));
  // The step's accuracy band: 95% bootstrap over its prompts (a prompt's rollouts are not independent draws).
  const band = bootstrapMean(byGroup.map((g) => mean(g.map((r) => r.reward))));
  const metrics: Record<string, number> = {
    'rollout/accuracy': mean(rollouts.map((r) => r.reward)),
    'rollout/accuracy_lo': band.lo,
    'rollout/accuracy_hi': band.hi,
    'rollout/tool_error_rate': errRate(stats),
    'rollout/tool_error_rate_correct': errRate(correct),
    'rollout/tool_error_rate_kept_correct': errRate(correct.filter((s) => selected.has(s.r))),
    'rollout/response_length': mean(rollouts.map((r) => r.trajectory.modelTokens + r.trajectory.toolTokens)),
    'rollout/response_length_correct': mean(correct.map((s) => s.r.trajectory.modelTokens + s.r.trajectory.toolTokens)),
    'rollout/turns': mean(rollouts.map((r) => r.trajectory.turns.length)),
    'rollout/tool_calls': mean(stats.map((s) => s.calls)),
    'rollout/no_tool_call_rate': mean(stats.map((s) => (s.calls === 0 ? 1 : 0))),
    'rollout/finish_length_rate': mean(
      rollouts.map((r) =>
        r.trajectory.finishReason === 'length' || r.trajectory.finishReason === 'tool_overflow' ? 1 : 0,
      ),
    ),
    'roc/groups_dropped': summary.droppedAllPositive + summary.droppedAllNegative,
    'roc/groups_kept': summary.keptGroups,
    // Groups that carry a signal (docs/method.md §5): drawn, with mixed rewards, and the curriculum's skips.
    'sampling/groups_drawn': prompts.length,
    'sampling/groups_mixed': mixed.filter(Boolean).length,
    'sampling/gen_batches': generated.sampling?.rounds ?? 1,
    'sampling/short': generated.sampling?.short ? 1 : 0,
    'curriculum/skipped': generated.sampling?.skipped ?? 0,
    ...(generated.sampling?.tiers
      ? {
          'curriculum/sometimes': generated.sampling.tiers.sometimes,
          'curriculum/unknown': generated.sampling.tiers.unknown,
        }
      : {}),
    'roc/kept': kept.length,
    'roc/p_err_positives': summary.meanPErrPositives ?? 0,
    'roc/p_err_kept_positives': summary.meanPErrKeptPositives ?? 0,
    'train/logprob_gap': logprobGap,
    'sandbox/latency_ms': median(
      rollouts
        .flatMap((r) => r.trajectory.turns.map((t) => t.tool?.durationMs ?? null))
        .filter((x): x is number => x !== null),
    ),
  } satisfies StepMetrics;
  if (policy) {
    Object.assign(metrics, policyMetrics(policy));
  }
  return metrics;
}

/**
 * The TIS params of policy_step: the engine's logprobs (omitted when no token has one, e.g. an engine that returns
 * none: the trainer then reports tis_applied false and runs the plain step) and the recipe's mode and cap.
 */
export function tisParams(
  engineLogprobs: (number | null)[][],
  tis: RlStepConfig['tis'],
): Pick<PolicyParams, 'rollout_logprobs' | 'tis_mode' | 'tis_cap'> {
  const any = engineLogprobs.some((row) => row.some((x) => x !== null));
  return { ...(any ? { rollout_logprobs: engineLogprobs } : {}), tis_mode: tis.mode, tis_cap: tis.cap };
}

/**
 * Each rollout's TokenRecord: the kept ones (in policy_step's order) with what the update did to each token — the
 * trainer's old logprobs, the TIS weights, the clip states and the advantage — and the rest without.
 */
export function attachTokenRecords(
  rollouts: ScoredRollout[],
  tok: Tokenizer,
  update: {
    kept: { r: ScoredRollout; advantage: number }[];
    old: (number | null)[][];
    policy: Pick<PolicyMetrics, 'token_weights' | 'token_clip'>;
  } | null,
): void {
  const trained = new Map<ScoredRollout, TrainedTokens>();
  update?.kept.forEach((k, i) =>
    trained.set(k.r, {
      trainerLogprobs: update.old[i]!,
      weights: update.policy.token_weights[i]!,
      clip: update.policy.token_clip[i]!,
      advantage: k.advantage,
    }),
  );
  for (const r of rollouts) r.tokens = tokenRecord(r.trajectory, tok, trained.get(r) ?? null);
}

/** The policy update's numbers under train/ (booleans as 0/1). */
export function policyMetrics(p: PolicyMetrics): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of POLICY_METRICS) out[`train/${k}` satisfies MetricKey] = p[k];
  out['train/tis_applied'] = p.tis_applied ? 1 : 0;
  // Share of the trained tokens that had an engine logprob to correct with (0: the engine returned none).
  out['train/tis_coverage'] = p.masked_tokens ? p.tis_tokens / p.masked_tokens : 0;
  return out;
}

function median(xs: number[]): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
