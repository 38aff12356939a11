import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { viewerProcedure, router } from '../init.ts';
import type { Database } from '../../db/client.ts';
import { assertRunExists } from '../guards.ts';
import {
  getTrajectoryRun,
  getTrajectoryWithToolCalls,
  listStepStats,
  listTrajectoriesOfProblem,
  listTrajectoryPage,
  readTrajectoryTokens,
} from '../../store/trajectories.ts';
import {
  TRAJECTORY_SORTS,
  TRAJECTORY_SPLITS,
  TrajectoryFilterSchema,
  type TrajectorySort,
} from '../../../contracts/trajectory-query.ts';
import { tokenRecordToWire } from '../../store/token-codec.ts';
import { listProblemAcrossRuns, listProblemsAcrossRuns } from '../../store/problem-across-runs.ts';
import { ofProblemAcrossRunsInput, problemsAcrossRunsInput, type RunProblemColumn } from '../../../contracts/traces.ts';

const id = z.string().min(1).max(100);
const stepNumber = z
  .number()
  .int()
  .min(-(2 ** 31))
  .max(2 ** 31 - 1);
const split = z.enum(['train', 'eval']);

const trajectorySort = z.enum(TRAJECTORY_SORTS);

export const listInput = z.object({
  runId: id,
  step: stepNumber.optional(),
  /** 'train' (default), 'eval', or 'all' splits. */
  split: z.enum(TRAJECTORY_SPLITS).default('train'),
  filter: TrajectoryFilterSchema.optional(),
  sort: trajectorySort.default('index'),
  limit: z.number().int().min(1).max(500).default(100),
  offset: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(0),
});

/** A page of a run's trajectories; NOT_FOUND when the run does not exist. */
async function listTrajectories(db: Database, input: z.output<typeof listInput>) {
  await assertRunExists(db, input.runId);
  return listTrajectoryPage(db, input);
}

export const trajectoriesRouter = router({
  /** One entry per stored step of the split, in step order: the step slider's stops. accuracy = mean reward. */
  steps: viewerProcedure.input(z.object({ runId: id, split: split.default('train') })).query(async ({ ctx, input }) => {
    await assertRunExists(ctx.db, input.runId);
    return listStepStats(ctx.db, input.runId, input.split);
  }),

  /** A page of trajectories (no content) with the total matching the filter. */
  list: viewerProcedure.input(listInput).query(({ ctx, input }) => listTrajectories(ctx.db, input)),

  /** The k best or worst of one step by reward or response length (the list, sorted, first page). */
  topK: viewerProcedure
    .input(
      z.object({
        runId: id,
        step: stepNumber,
        k: z.number().int().min(1).max(500),
        by: z.enum(['reward', 'length']),
        order: z.enum(['top', 'bottom']),
        split: z.enum(TRAJECTORY_SPLITS).default('train'),
      }),
    )
    .query(async ({ ctx, input }) => {
      const sort: TrajectorySort = `${input.by}_${input.order === 'top' ? 'desc' : 'asc'}`;
      const r = await listTrajectories(ctx.db, {
        runId: input.runId,
        step: input.step,
        split: input.split,
        sort,
        limit: input.k,
        offset: 0,
      });
      return r.items;
    }),

  /** One trajectory: its row, its parsed content (prompt, turns, verdict) and its tool calls in turn order. */
  get: viewerProcedure.input(z.object({ id })).query(async ({ ctx, input }) => {
    const t = await getTrajectoryWithToolCalls(ctx.db, input.id);
    if (!t) throw new TRPCError({ code: 'NOT_FOUND', message: `trajectory ${input.id} not found` });
    return t;
  }),

  /**
   * A trajectory's token-level record (the token view): plain arrays, null for "no value" in the float arrays;
   * `record` is null when none was stored. NOT_FOUND when there is no such trajectory.
   */
  tokens: viewerProcedure.input(z.object({ id })).query(async ({ ctx, input }) => {
    if (!(await getTrajectoryRun(ctx.db, input.id)))
      throw new TRPCError({ code: 'NOT_FOUND', message: `trajectory ${input.id} not found` });
    const r = await readTrajectoryTokens(ctx.db, input.id);
    return { record: r ? tokenRecordToWire(r) : null };
  }),

  /** Every trajectory of one problem in a run (no content), by step then sample: how answers to it evolved. */
  samePrompt: viewerProcedure
    .input(
      z.object({
        runId: id,
        problemId: z.string().min(1).max(500),
        split: z.enum(TRAJECTORY_SPLITS).default('all'),
        limit: z.number().int().min(1).max(5000).default(1000),
      }),
    )
    .query(async ({ ctx, input }) => {
      await assertRunExists(ctx.db, input.runId);
      return listTrajectoriesOfProblem(ctx.db, input);
    }),

  /** Several runs in one trace view: the problems 2–4 runs hold, most shared first, with counts per run. */
  problemsAcrossRuns: viewerProcedure.input(problemsAcrossRunsInput).query(async ({ ctx, input }) => {
    for (const runId of input.runIds) await assertRunExists(ctx.db, runId);
    return listProblemsAcrossRuns(ctx.db, input);
  }),

  /** One problem in each of 2–4 runs: a column per run (in the order given) with its trajectories of it, no content. */
  ofProblemAcrossRuns: viewerProcedure.input(ofProblemAcrossRunsInput).query(async ({ ctx, input }) => {
    const columns = await listProblemAcrossRuns(ctx.db, input);
    const missing = columns.indexOf(null);
    if (missing >= 0) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${input.runIds[missing]} not found` });
    return columns as RunProblemColumn[];
  }),
});
