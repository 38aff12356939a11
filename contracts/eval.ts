/** What an evaluation job is (docs/method.md §8): an engine × datasets × k samples, with the report's defaults. */
import { z } from 'zod';
import { EngineSpecSchema } from './engine.ts';
import { PickField, TEMPLATE_VARIANTS } from './recipe.ts';
import type { Interval, ProblemScore } from './intervals.ts';

export const EvalSpecSchema = z.object({
  engine: EngineSpecSchema,
  /** Dataset names, each optionally `name@version` (latest version otherwise). */
  datasets: z.array(z.string().min(1)).min(1, 'give at least one dataset'),
  /** Which problems: a dataset's test split, train split, or all of it. */
  split: z.enum(['all', 'train', 'test']).default('all'),
  /** Samples per problem; pass@1 is averaged over them (report: 16). */
  k: z.number().int().min(1).max(1024).default(16),
  temperature: z.number().min(0).max(5).default(0.6),
  topP: z.number().gt(0).max(1).default(1),
  /** Response budget per trajectory, tool tokens included (report: 30K; the embedded model is capped by its context). */
  maxTokens: z.number().int().min(1).default(30_000),
  maxTurns: z.number().int().min(1).max(1000).default(30),
  /** At most this many problems per dataset: the first ones in index order, or spread evenly over it (`pick`). */
  limit: z.number().int().min(1).optional(),
  /** With `limit`: "first" (the default) or "spread" (every (size/limit)-th problem). */
  pick: PickField,
  /** Prompt template variant (as a recipe's template.variant): the paper's `full` text, `compact`, or the embedded
   *  model's `minimal` one (default: by engine kind). */
  template: z.enum(TEMPLATE_VARIANTS).optional(),
  toolFormat: z.enum(['paper', 'released']).default('paper'),
  toolTimeoutS: z.number().gt(0).max(600).default(4),
  seed: z.number().int().min(0).default(0),
  /** The training step the checkpoint came from (0 for a standalone evaluation). */
  step: z.number().int().min(0).default(0),
});
export type EvalSpec = z.infer<typeof EvalSpecSchema>;
export type EvalSpecInput = z.input<typeof EvalSpecSchema>;

/** One benchmark's result of an evaluation (workers/eval/metrics.ts summarise; an EvalResult row). */
export interface BenchmarkSummary {
  problems: number;
  samples: number;
  k: number;
  pass1: number;
  passK: number;
  /** 95% intervals of pass@1 and pass@k, bootstrap over problems (contracts/intervals.ts); absent in results
   *  stored before they were computed. */
  pass1Ci?: Interval;
  passKCi?: Interval;
  /** Each problem's correct samples, for paired comparisons of two evaluations on the same problems. */
  perProblem?: ProblemScore[];
  meanLength: number;
  toolCallsPerTrajectory: number;
  /** Failed calls / all calls, pooled over trajectories (0 when there were no calls). */
  toolErrorRate: number;
  /** The same inside correct trajectories (the report's measure of code quality: RoC lowers it) and the share of
   *  samples that never called the tool; absent in results stored before they were computed. */
  toolErrorRateCorrect?: number;
  noToolCallRate?: number;
  finishReasons: Record<string, number>;
}
export interface EvalRow extends BenchmarkSummary {
  benchmark: string;
  datasetId: string;
}
