/**
 * A training run's stage-by-stage report (docs/recipes-and-training.md "The default recipe"; `npx toolsmith train --report RUN`): each
 * stage's steps, wall time (the stage and the evaluation that ends it) and that evaluation's figures with their
 * intervals, then the paired difference from the first evaluation (the SFT checkpoint) to the last one on the same
 * problems. The run's commit (`codeVersion`) and seed come with it, so a table can say what produced it.
 */
import type { Database } from '../db/client.ts';
import type { BenchmarkSummary } from '../../contracts/eval.ts';
import type { RunEvent } from '../../contracts/events.ts';
import type { StageEventData } from '../../contracts/runs.ts';
import { compareEvalRows, rowsAtStep, type BenchmarkComparison, type EvalRowLike } from './eval-compare.ts';
import { readEventsOfTypes } from './events.ts';
import { listEvalResults } from './evals.ts';
import { readSeriesOfKeys } from './metrics.ts';
import { getRunOrThrow } from './runs.ts';

export interface StageEval extends BenchmarkSummary {
  benchmark: string;
  step: number;
}
export interface StageReport {
  stage: number;
  name: string;
  type: string;
  startStep: number;
  endStep: number | null;
  /** From the stage's first start to the end of the evaluation after it (null while it has not ended). */
  wallS: number | null;
  /** Times the stage was started (more than 1: it was resumed after a crash or pause, and wallS spans the gaps). */
  starts: number;
  evals: StageEval[];
  /** An RL stage's groups summed over its steps (docs/method.md §5 "Dynamic sampling and the pass-rate curriculum"); absent without points. */
  groups?: StageGroups;
}
/** Summed over a stage's RL steps: groups drawn, with mixed rewards, kept after RoC, prompts the curriculum skipped. */
export interface StageGroups {
  steps: number;
  drawn: number;
  mixed: number;
  kept: number;
  skipped: number;
  /** Steps that dynamic sampling ended short of their groups (cap or pool). */
  short: number;
}

/** The metric keys stageGroups sums, by field. */
export const GROUP_KEYS = {
  drawn: 'sampling/groups_drawn',
  mixed: 'sampling/groups_mixed',
  kept: 'roc/groups_kept',
  skipped: 'curriculum/skipped',
  short: 'sampling/short',
} as const;

/**
 * Each RL stage's groups: the points of GROUP_KEYS at its steps (after its start step, up to the next stage's), summed.
 * Pure. A stage with no `sampling/groups_drawn` point (an older run, an SFT stage) gets none.
 */
export function stageGroups(
  stages: Pick<StageReport, 'type' | 'startStep'>[],
  series: Record<string, { step: number; value: number }[]>,
): (StageGroups | undefined)[] {
  return stages.map((s, i) => {
    if (s.type !== 'rl') return undefined;
    const end = stages[i + 1]?.startStep ?? Number.POSITIVE_INFINITY;
    const inStage = (k: string) => (series[k] ?? []).filter((p) => p.step > s.startStep && p.step <= end);
    const drawn = inStage(GROUP_KEYS.drawn);
    if (drawn.length === 0) return undefined;
    const sum = (k: string) => inStage(k).reduce((a, p) => a + p.value, 0);
    return {
      steps: drawn.length,
      drawn: sum(GROUP_KEYS.drawn),
      mixed: sum(GROUP_KEYS.mixed),
      kept: sum(GROUP_KEYS.kept),
      skipped: sum(GROUP_KEYS.skipped),
      short: sum(GROUP_KEYS.short),
    };
  });
}
export interface RunReport {
  runId: string;
  name: string;
  status: string;
  seed: number;
  codeVersion: string;
  /** Worker start to the last stage's end (null while running). */
  wallS: number | null;
  /** Worker start to the first stage (trainer start-up, data, model). */
  setupS: number | null;
  stages: StageReport[];
  /** Last evaluation minus the first, per benchmark, on the problems both scored. */
  paired: BenchmarkComparison[];
  firstEvalStep: number | null;
  lastEvalStep: number | null;
}

/** The stages and their timings from a run's stage/eval/status events, its EvalResult rows and its current step. Pure. */
export function stageReports(
  events: RunEvent[],
  evals: Pick<EvalRowLike, 'step' | 'benchmark' | 'details'>[],
  runStep: number,
): { stages: StageReport[]; setupS: number | null; wallS: number | null } {
  const stages = new Map<number, StageReport & { t0: number }>();
  let started: number | null = null;
  let lastEnd: number | null = null;
  let current: (StageReport & { t0: number }) | null = null;
  for (const e of events) {
    const status = e.type === 'status' ? (e.data as { status?: string } | null)?.status : undefined;
    if (status === 'running' && started === null) started = e.time;
    // A stage without an evaluation after it ends where the next one starts, or where the run succeeds.
    const closes =
      (e.type === 'stage' && (e.data as StageEventData).stage !== current?.stage) || status === 'succeeded';
    if (closes && current && current.wallS === null) {
      current.wallS = (e.time - current.t0) / 1000;
      lastEnd = e.time;
    }
    if (e.type === 'stage') {
      const d = e.data as StageEventData;
      const s = stages.get(d.stage) ?? {
        stage: d.stage,
        name: d.name,
        type: d.type,
        startStep: d.startStep,
        endStep: null,
        wallS: null,
        starts: 0,
        evals: [],
        t0: e.time,
      };
      s.starts++;
      stages.set(d.stage, s);
      current = s;
    }
    if (e.type === 'eval' && current) {
      // The evaluation after a stage ends it (its step is the stage's last).
      current.wallS = (e.time - current.t0) / 1000;
      lastEnd = e.time;
    }
  }
  const byStep = new Map<number, StageEval[]>();
  for (const r of evals) {
    const d = (r.details ? JSON.parse(r.details) : {}) as BenchmarkSummary;
    byStep.set(r.step, [...(byStep.get(r.step) ?? []), { ...d, benchmark: r.benchmark, step: r.step }]);
  }
  const list = [...stages.values()].sort((a, b) => a.stage - b.stage);
  list.forEach((s, i) => {
    const next = list[i + 1];
    const end = next ? next.startStep : runStep;
    if (s.wallS !== null) {
      s.endStep = end;
      s.evals = byStep.get(end) ?? [];
    }
  });
  const first = list[0];
  return {
    stages: list.map(({ t0: _t0, ...s }) => s),
    setupS: started !== null && first ? (first.t0 - started) / 1000 : null,
    wallS:
      started !== null && lastEnd !== null && list.every((s) => s.wallS !== null) ? (lastEnd - started) / 1000 : null,
  };
}

export async function runReport(db: Database, runId: string): Promise<RunReport> {
  const run = await getRunOrThrow(db, runId);
  const [events, evals, series] = await Promise.all([
    readEventsOfTypes(db, runId, ['stage', 'eval', 'status']),
    listEvalResults(db, runId),
    readSeriesOfKeys(db, runId, Object.values(GROUP_KEYS)),
  ]);
  const { stages: plain, setupS, wallS } = stageReports(events, evals, run.step);
  const groups = stageGroups(plain, series);
  const stages = plain.map((s, i) => (groups[i] ? { ...s, groups: groups[i] } : s));
  const steps = [...new Set(evals.map((r) => r.step))].sort((a, b) => a - b);
  const firstEvalStep = steps[0] ?? null;
  const lastEvalStep = steps[steps.length - 1] ?? null;
  // The rows are read once: the comparison pairs the first evaluated step's with the last one's.
  const paired =
    firstEvalStep !== null && lastEvalStep !== null && firstEvalStep !== lastEvalStep
      ? compareEvalRows(rowsAtStep(evals, firstEvalStep).at, rowsAtStep(evals, lastEvalStep).at)
      : [];
  return {
    runId,
    name: run.name,
    status: run.status,
    seed: run.seed,
    codeVersion: run.codeVersion,
    wallS,
    setupS,
    stages,
    paired,
    firstEvalStep,
    lastEvalStep,
  };
}
