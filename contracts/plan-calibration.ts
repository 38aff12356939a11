/**
 * Calibrating the planner on a recorded run (pure): the run's measured RL steps in place of the plan's assumed
 * rates, so a second plan of the same machine predicts from what was measured (`npx toolsmith plan --calibrate RUN`,
 * the run page's plan against measured).
 */
import type { MetricKey, StepMetrics } from './metrics.ts';
import { type Constant, DEFAULT_CONSTANTS, type PlanConstants } from './plan.ts';
import type { Recipe, RlStage } from './recipe.ts';

/** One measured RL step: the run's metrics at that step (time/*, rollout/*, train/*) and its stage's settings. */
export interface MeasuredStep {
  metrics: StepMetrics;
  stage: Pick<RlStage, 'promptsPerStep' | 'rolloutsPerPrompt' | 'keep' | 'maxResponseTokens'>;
}

const median = (xs: number[]) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : Number.NaN;
};

/**
 * Constants fitted on the measured steps of a CPU run (this machine's engine and trainer; the GPU constants keep
 * their defaults): medians over the steps, so one slow step does not move them. `run` names it in each source;
 * `params`, the run's model size, turns the measured rates into the FLOP/s that give them for that size.
 */
export function calibrate(
  steps: MeasuredStep[],
  run: string,
  base: PlanConstants = DEFAULT_CONSTANTS,
  params?: number,
): PlanConstants {
  if (steps.length === 0) return base;
  const m = (detail: string, xs: number[], fallback: Constant): Constant => {
    const v = median(xs);
    return Number.isFinite(v) && v > 0
      ? { value: v, source: { kind: 'measured', detail: `${detail} (${run}, ${steps.length} steps)` } }
      : fallback;
  };
  const length = (x: MeasuredStep) => x.metrics['rollout/response_length'] ?? Number.NaN;
  const trajectories = (x: MeasuredStep) => x.stage.promptsPerStep * x.stage.rolloutsPerPrompt;
  const engineTokensPerS = m(
    'generated tokens ÷ time/rollout',
    steps.map((x) => (trajectories(x) * length(x)) / (x.metrics['time/rollout'] ?? Number.NaN)),
    base.engineTokensPerS,
  );
  const trainTokensPerS = m(
    'trained tokens ÷ time/train',
    steps.map(
      (x) =>
        (x.stage.promptsPerStep * x.stage.keep * (length(x) + base.promptTokens.value)) /
        (x.metrics['time/train'] ?? Number.NaN),
    ),
    base.trainTokensPerS,
  );
  // The measured rates are the rates of this model: with its size, the FLOP/s that give them, so neither bound of
  // the CPU rate (the lower of the two) undercuts what was measured.
  const asFlops = (rate: Constant, perToken: number, fallback: Constant): Constant =>
    params && rate.source.kind === 'measured'
      ? {
          value: rate.value * perToken * params,
          source: { kind: 'measured', detail: `${rate.source.detail} × ${perToken}·N` },
        }
      : fallback;
  return {
    ...base,
    engineTokensPerS,
    cpuEngineFlops: asFlops(engineTokensPerS, 2, base.cpuEngineFlops),
    trainTokensPerS,
    cpuTrainFlops: asFlops(trainTokensPerS, 8, base.cpuTrainFlops),
    responseShare: m(
      'mean response length ÷ budget',
      steps.map((x) => length(x) / x.stage.maxResponseTokens),
      base.responseShare,
    ),
    callsPerTrajectory: m(
      'rollout/tool_calls',
      steps.map((x) => x.metrics['rollout/tool_calls'] ?? Number.NaN),
      base.callsPerTrajectory,
    ),
    syncFixedS: m(
      'time/sync',
      steps.map((x) => x.metrics['time/sync'] ?? Number.NaN),
      base.syncFixedS,
    ),
    overheadS: m(
      'time/reward + time/roc + time/storage',
      steps.map(
        (x) => (x.metrics['time/reward'] ?? 0) + (x.metrics['time/roc'] ?? 0) + (x.metrics['time/storage'] ?? 0),
      ),
      base.overheadS,
    ),
  };
}

/** The median of measured RL steps' `time/step`: what the CLI and the run page set the plan against. */
export function medianStepSeconds(steps: MeasuredStep[]): number {
  return median(steps.map((s) => s.metrics['time/step'] ?? Number.NaN));
}

/** The metrics calibrate reads. */
export const CALIBRATION_KEYS = [
  'time/rollout',
  'time/reward',
  'time/roc',
  'time/train',
  'time/sync',
  'time/storage',
  'time/step',
  'rollout/response_length',
  'rollout/tool_calls',
] as const satisfies readonly MetricKey[];

/**
 * A run's RL steps as calibrate takes them: its metric series by key and its frozen recipe. The RL steps are those
 * with a rollout time, in step order; they belong to the recipe's RL stages in turn (stage 1's `steps` first).
 */
export function measuredSteps(
  recipe: Recipe,
  series: Record<string, { step: number; value: number }[]>,
): MeasuredStep[] {
  const byStep = new Map<number, StepMetrics>();
  for (const [key, points] of Object.entries(series))
    for (const p of points) {
      const row = byStep.get(p.step) ?? {};
      (row as Record<string, number>)[key] = p.value;
      byStep.set(p.step, row);
    }
  const rlSteps = [...byStep.entries()].filter(([, m]) => m['time/rollout'] !== undefined).sort((a, b) => a[0] - b[0]);
  const stages = recipe.stages.filter((s): s is RlStage => s.type === 'rl');
  const out: MeasuredStep[] = [];
  let k = 0;
  for (const stage of stages)
    for (let n = 0; n < stage.steps && k < rlSteps.length; n++, k++) out.push({ metrics: rlSteps[k]![1], stage });
  return out;
}
