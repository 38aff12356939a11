/**
 * Several runs in one trace view: the same prompt's trajectories from 2–4 runs side by side. "The same prompt" is
 * the trajectory's problem id: a dataset's problem id for native runs, the prompt text's hash for imported ones
 * (server/imports/to-store.ts), so runs over one dataset, or imports of one benchmark, meet on it. One shape for the
 * viewer's procedures, the share link that names such a view and the page (components/traces/).
 */
import { z } from 'zod';

export const MIN_TRACE_RUNS = 2;
export const MAX_TRACE_RUNS = 4;
/** The most trajectories of one problem listed per run (every step and sample of it). */
export const MAX_PROBLEM_TRAJECTORIES = 500;

const id = z.string().min(1).max(100);

export const traceRunIds = z
  .array(id)
  .min(MIN_TRACE_RUNS)
  .max(MAX_TRACE_RUNS)
  .refine((ids) => new Set(ids).size === ids.length, { message: 'run ids must be distinct' });

export const problemIdSchema = z.string().min(1).max(500);

/** `trajectories.problemsAcrossRuns`: which problems the runs have trajectories of, optionally only ids containing `search`. */
export const problemsAcrossRunsInput = z.object({
  runIds: traceRunIds,
  search: z.string().trim().max(200).optional(),
  limit: z.number().int().min(1).max(1000).default(200),
});

/** One problem and how many trajectories of it each run holds (runs without any are absent from `counts`). */
export interface ProblemAcrossRuns {
  problemId: string;
  /** How many of the runs hold it. */
  runs: number;
  counts: Record<string, number>;
}

/** `trajectories.ofProblemAcrossRuns` (and the share view's `problemTrajectories`): one problem in each run. */
export const ofProblemAcrossRunsInput = z.object({ runIds: traceRunIds, problemId: problemIdSchema });

/** One run's column: its name and status, and its trajectories of the problem (no content), by step then sample. */
export interface RunProblemColumn {
  run: { id: string; name: string; kind: string; status: string };
  items: ProblemTrajectoryRow[];
  /** More than MAX_PROBLEM_TRAJECTORIES are stored: the latest steps' are listed. */
  truncated: boolean;
}

export interface ProblemTrajectoryRow {
  id: string;
  runId: string;
  step: number;
  split: string;
  groupId: string;
  sampleIndex: number;
  reward: number;
  correct: boolean | null;
  turns: number;
  toolCalls: number;
  toolErrors: number;
  finishReason: string;
}
