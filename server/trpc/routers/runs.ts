import { tracked, TRPCError } from '@trpc/server';
import { z } from 'zod';
import { rewardWeights } from '../../../contracts/reward-weights.ts';
import { researcherProcedure, viewerProcedure, router } from '../init.ts';
import { lastEventSeq, readEvents } from '../../store/events.ts';
import { listMetricKeys, readSeries, readSeriesOfKeys } from '../../store/metrics.ts';
import { getRun, getRunsByIds, getRunWithoutSpec, listRuns } from '../../store/runs.ts';
import { assertRunExists } from '../guards.ts';
import { readStepTimeline } from '../../store/step-timeline.ts';
import { assertOwnsRun } from '../../auth/ownership.ts';
import { acquireStream } from '../stream-limits.ts';
import { principalStillValid } from '../../auth/principal.ts';
import { cancelRun, pauseTraining, resumeTraining, setImportFollowing } from '../../lifecycle.ts';
import { launchImport } from '../../imports/launch.ts';
import { importStates } from '../../store/imports.ts';
import type { Database } from '../../db/client.ts';
import { FOREIGN_FORMATS } from '../../../contracts/foreign.ts';
import { config } from '../../config.ts';
import { stageBoundaries } from '../../../contracts/recipe.ts';
import { diffSpecs, type SpecDiff } from '../../../contracts/recipe-diff.ts';

/** How often a live stream re-checks that its session or token still stands. */
export const STREAM_RECHECK_MS = 2000;
const runId = z.string().min(1).max(100);
// Steps are 32-bit INTEGER columns on PostgreSQL.
const stepNumber = z
  .number()
  .int()
  .min(-(2 ** 31))
  .max(2 ** 31 - 1);

/**
 * Rows with `follow` (whether an imported run is to be followed, for its status label) and `importFormat` (the
 * format its import job found from the layout, or named; FORMAT_FROM_LAYOUT before that), null for other runs.
 */
async function withImportFollow<R extends { id: string; kind: string }>(db: Database, rows: R[]) {
  const imports = await importStates(
    db,
    rows.filter((r) => r.kind === 'import').map((r) => r.id),
  );
  return rows.map((r) => ({
    ...r,
    follow: imports.get(r.id)?.follow ?? null,
    importFormat: imports.get(r.id)?.format ?? null,
  }));
}

export const runsRouter = router({
  list: viewerProcedure
    .input(
      z
        .object({ kind: z.string().optional(), limit: z.number().int().min(1).max(500).default(50) })
        .default({ limit: 50 }),
    )
    .query(async ({ ctx, input }) => withImportFollow(ctx.db, await listRuns(ctx.db, input))),

  get: viewerProcedure.input(z.object({ runId })).query(async ({ ctx, input }) => {
    const run = await getRunWithoutSpec(ctx.db, input.runId);
    if (!run) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${input.runId} not found` });
    return (await withImportFollow(ctx.db, [run]))[0]!;
  }),

  /**
   * Everything a run page needs to draw, as of one event seq: the run, its recent log, its metrics. The page
   * then subscribes to `events` from `lastSeq`, so nothing between this read and the stream is missed.
   */
  snapshot: viewerProcedure
    .input(z.object({ runId, logTail: z.number().int().min(0).max(5000).default(1000) }))
    .query(async ({ ctx, input }) => {
      // The seq before the run row: an event written between the two reads (a status change, say) is then after
      // lastSeq and streamed, never both missed by the row and skipped by the stream.
      const lastSeq = await lastEventSeq(ctx.db, input.runId);
      const run = await getRun(ctx.db, input.runId);
      if (!run) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${input.runId} not found` });
      const events = (
        await readEvents(ctx.db, input.runId, Math.max(0, lastSeq - input.logTail), input.logTail)
      ).filter((e) => e.seq <= lastSeq);
      const keys = await listMetricKeys(ctx.db, input.runId);
      const metrics: Record<string, { step: number; value: number; time: number }[]> = {};
      for (const key of keys) metrics[key] = await readSeries(ctx.db, input.runId, key);
      return { run: { ...run, recipeSpec: JSON.parse(run.recipeSpec) as unknown }, lastSeq, events, metrics };
    }),

  series: viewerProcedure
    .input(z.object({ runId, key: z.string().min(1), fromStep: stepNumber.optional(), toStep: stepNumber.optional() }))
    .query(({ ctx, input }) => readSeries(ctx.db, input.runId, input.key, input.fromStep, input.toStep)),

  /** The names of a run's metrics, sorted, without reading their points. */
  metricKeys: viewerProcedure.input(z.object({ runId })).query(async ({ ctx, input }) => {
    await assertRunExists(ctx.db, input.runId);
    return listMetricKeys(ctx.db, input.runId);
  }),

  /** One step's timeline: a lane per training trajectory (turns and tool calls), then the step's phases. */
  timeline: viewerProcedure.input(z.object({ runId, step: stepNumber })).query(async ({ ctx, input }) => {
    await assertRunExists(ctx.db, input.runId);
    return readStepTimeline(ctx.db, input.runId, input.step);
  }),

  /**
   * Live event stream from `cursor` (exclusive). Each event carries its seq as the SSE id, so a client that
   * reconnects resumes at `lastEventId`. Events are read from the database: the worker that wrote them may be
   * another process on another machine.
   */
  events: viewerProcedure
    .input(z.object({ runId, cursor: z.number().int().min(0).optional(), lastEventId: z.string().nullish() }))
    .subscription(async function* ({ ctx, input, signal }) {
      let cursor = input.lastEventId ? Number(input.lastEventId) : (input.cursor ?? 0);
      if (!Number.isInteger(cursor) || cursor < 0)
        throw new TRPCError({
          code: 'BAD_REQUEST',
          message: `lastEventId: "${input.lastEventId}" is not an event seq`,
        });
      // Checked before the first event and before the stream counts: an unknown run opens nothing.
      await assertRunExists(ctx.db, input.runId);
      const release = acquireStream(`user:${ctx.principal.userId}`, config().maxStreamsPerUser);
      try {
        const pollMs = Math.min(config().pollMs, 250);
        let checkedAt = Date.now();
        while (!signal?.aborted) {
          // A stream outlives the request that opened it: a disable, a role change or a sign-out ends it too.
          if (Date.now() - checkedAt >= STREAM_RECHECK_MS) {
            checkedAt = Date.now();
            if (!(await principalStillValid(ctx.db, ctx.principal)))
              throw new TRPCError({ code: 'UNAUTHORIZED', message: 'your session or token has ended: sign in again' });
          }
          const batch = await readEvents(ctx.db, input.runId, cursor, 500);
          for (const e of batch) {
            cursor = e.seq;
            yield tracked(String(e.seq), e);
          }
          if (batch.length < 500) await sleep(pollMs, signal);
        }
      } finally {
        release();
      }
    }),

  cancel: researcherProcedure.input(z.object({ runId })).mutation(async ({ ctx, input }) => {
    await assertOwnsRun(ctx.db, ctx.principal, input.runId);
    return cancelRun(ctx.db, input.runId);
  }),

  /** Where runs trained elsewhere may be imported from (TOOLSMITH_IMPORT_ROOTS), for the Import dialog. */
  importRoots: viewerProcedure.query(() => ({ roots: config().importRoots, formats: [...FOREIGN_FORMATS] })),

  /**
   * Open a run trained elsewhere: a folder under an import root (checked after symlinks; never any other
   * path from the browser), read once or followed by a worker.
   */
  importFolder: researcherProcedure
    .input(
      z.object({
        path: z.string().min(1).max(4096),
        format: z.enum(FOREIGN_FORMATS).optional(),
        name: z.string().max(200).optional(),
        follow: z.boolean().default(false),
        /** TRL's reward_weights (contracts/reward-weights.ts). */
        weights: rewardWeights.optional(),
        frameworkVersion: z.string().min(1).max(100).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const r = await launchImport(
        ctx.db,
        { ...input, createdBy: ctx.principal.userId },
        { roots: config().importRoots, enqueue: true },
      );
      // The folder is walked by the import job, not here: the format is null until it finds one from the layout.
      return { runId: r.runId, format: r.format };
    }),

  /** Follow an imported run again, or stop following it (the Follow switch). */
  followImport: researcherProcedure.input(z.object({ runId, follow: z.boolean() })).mutation(async ({ ctx, input }) => {
    await assertOwnsRun(ctx.db, ctx.principal, input.runId);
    return setImportFollowing(ctx.db, input.runId, input.follow);
  }),

  /** Pause a queued or running training run (the worker stops at its next heartbeat and keeps the checkpoints). */
  pause: researcherProcedure.input(z.object({ runId })).mutation(async ({ ctx, input }) => {
    await assertOwnsRun(ctx.db, ctx.principal, input.runId);
    return pauseTraining(ctx.db, input.runId);
  }),

  /** Resume a paused training run from its last checkpoint (queues a new "train" job). */
  resume: researcherProcedure.input(z.object({ runId })).mutation(async ({ ctx, input }) => {
    await assertOwnsRun(ctx.db, ctx.principal, input.runId);
    return resumeTraining(ctx.db, input.runId);
  }),

  /**
   * Several runs side by side: each run with its recipe and stage boundaries, the metric series by run and key
   * (`keys`, or every key any of the runs has), and the recipe differences of each other run from the first.
   */
  compare: viewerProcedure
    .input(
      z.object({
        runIds: z
          .array(runId)
          .min(2)
          .max(8)
          .refine((ids) => new Set(ids).size === ids.length, { message: 'each run may appear once' }),
        keys: z.array(z.string().min(1).max(200)).max(100).optional(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const rows = await getRunsByIds(ctx.db, input.runIds);
      const byId = new Map(rows.map((r) => [r.id, r]));
      const missing = input.runIds.filter((id) => !byId.has(id));
      if (missing.length) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${missing.join(', ')} not found` });
      const runs = input.runIds.map((id) => {
        const r = byId.get(id)!;
        const recipeSpec = JSON.parse(r.recipeSpec) as unknown;
        return {
          id: r.id,
          name: r.name,
          kind: r.kind,
          status: r.status,
          step: r.step,
          totalSteps: r.totalSteps,
          recipeSpec,
          stageBoundaries: stageBoundaries(recipeSpec),
        };
      });
      const keys =
        input.keys ??
        [...new Set((await Promise.all(input.runIds.map((id) => listMetricKeys(ctx.db, id)))).flat())].sort();
      const series: Record<string, Record<string, { step: number; value: number; time: number }[]>> = {};
      for (const id of input.runIds) series[id] = await readSeriesOfKeys(ctx.db, id, keys);
      const base = runs[0]!.recipeSpec;
      const recipeDiff: { runId: string; diff: SpecDiff[] }[] = runs
        .slice(1)
        .map((r) => ({ runId: r.id, diff: diffSpecs(base, r.recipeSpec) }));
      return { runs, series, recipeDiff };
    }),
});

/** Wait `ms`, or less if `signal` aborts. Removes its abort listener either way: a stream polls for hours. */
function sleep(ms: number, signal?: AbortSignal) {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
