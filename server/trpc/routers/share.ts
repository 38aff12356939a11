import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { researcherProcedure, shareProcedure, router } from '../init.ts';
import {
  createShareLink,
  listShareLinks,
  revokeShareLink,
  ShareLinkNotFound,
  sharedEvents,
  sharedProblemTrajectories,
  sharedTimeline,
  sharedMetrics,
  sharedTrajectories,
  sharedTrajectory,
  sharedTrajectoryTokens,
  sharedView,
  runsOf,
} from '../../share/links.ts';
import { createShareLinkInput, type ShareTarget } from '../../../contracts/share.ts';
import { assertOwnsLink, assertOwnsRun } from '../../auth/ownership.ts';
import { deleteShareLink, setShareLinkCreator, shareLinkIdsBy } from '../../store/share-links.ts';

export { assertReadOnlyToken } from '../../share/links.ts';

const id = z.string().min(1).max(100);
// Any string up to a sane length: a malformed token is answered like an unknown one (NOT_FOUND), not BAD_REQUEST.
const token = z.string().max(512);
const stepNumber = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);

/** Dead links and requests outside a link's scope are one indistinguishable NOT_FOUND. */
async function shared<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ShareLinkNotFound) throw new TRPCError({ code: 'NOT_FOUND', message: 'share link not found' });
    throw e;
  }
}

/**
 * What a share link opens: queries only, each taking the token and answering only about what the link names.
 * Nothing here writes, and nothing lists anything beyond the link's own run(s), step or trajectory.
 */
export const shareViewRouter = router({
  summary: shareProcedure
    .input(z.object({ token }))
    .query(({ ctx, input }) => shared(() => sharedView(ctx.db, input.token))),

  metrics: shareProcedure
    .input(z.object({ token, runId: id, keys: z.array(z.string().min(1).max(200)).max(100).optional() }))
    .query(({ ctx, input }) =>
      shared(() => sharedMetrics(ctx.db, input.token, { runId: input.runId, keys: input.keys })),
    ),

  trajectories: shareProcedure
    .input(
      z.object({
        token,
        runId: id,
        step: stepNumber,
        limit: z.number().int().min(1).max(500).default(50),
        cursor: z.number().int().min(0).optional(),
      }),
    )
    .query(({ ctx, input }) => shared(() => sharedTrajectories(ctx.db, input.token, input))),

  trajectory: shareProcedure
    .input(z.object({ token, trajectoryId: id }))
    .query(({ ctx, input }) => shared(() => sharedTrajectory(ctx.db, input.token, input.trajectoryId))),

  /** The trajectory's token record (the token view), under the same rules as `trajectory`. */
  trajectoryTokens: shareProcedure
    .input(z.object({ token, trajectoryId: id }))
    .query(({ ctx, input }) => shared(() => sharedTrajectoryTokens(ctx.db, input.token, input.trajectoryId))),

  /** A step's timeline: a run link's at any step, a step link's at its step. */
  timeline: shareProcedure
    .input(z.object({ token, runId: id, step: stepNumber }))
    .query(({ ctx, input }) => shared(() => sharedTimeline(ctx.db, input.token, input))),

  /** A trace-view link's columns: its problem's trajectories in each of its runs (open one with `trajectory`). */
  problemTrajectories: shareProcedure
    .input(z.object({ token }))
    .query(({ ctx, input }) => shared(() => sharedProblemTrajectories(ctx.db, input.token))),

  events: shareProcedure
    .input(
      z.object({
        token,
        afterSeq: z.number().int().min(0).optional(),
        limit: z.number().int().min(1).max(1000).default(500),
      }),
    )
    .query(({ ctx, input }) =>
      shared(() => sharedEvents(ctx.db, input.token, { afterSeq: input.afterSeq, limit: input.limit })),
    ),
});

/** Owner side (the workbench's own API): create, list and revoke links; plus `view`, what a link holder may call. */
export const shareRouter = router({
  /** Returns the token once (only its hash is stored) and the page path `/s/<token>`. */
  create: researcherProcedure.input(createShareLinkInput).mutation(async ({ ctx, input }) => {
    const link = await createShareLink(ctx.db, input);
    // A researcher shares only their own runs (a trajectory link's run is known once the link resolved it).
    try {
      for (const runId of runsOf({ scope: link.scope, target: link.target } as ShareTarget))
        await assertOwnsRun(ctx.db, ctx.principal, runId);
    } catch (e) {
      await deleteShareLink(ctx.db, link.id);
      throw e;
    }
    await setShareLinkCreator(ctx.db, link.id, ctx.principal.userId);
    return link;
  }),

  /** Takes the link id from `list`; a token is not an id and revokes nothing. */
  revoke: researcherProcedure.input(z.object({ id })).mutation(async ({ ctx, input }) => {
    await assertOwnsLink(ctx.db, ctx.principal, input.id);
    return revokeShareLink(ctx.db, input.id);
  }),

  /** Links, newest first, optionally only those naming a run. Never includes tokens or their hashes. */
  list: researcherProcedure
    .input(
      z.object({ runId: id.optional(), limit: z.number().int().min(1).max(500).default(100) }).default({ limit: 100 }),
    )
    .query(async ({ ctx, input }) => {
      const links = await listShareLinks(ctx.db, input);
      if (ctx.principal.role === 'admin') return links;
      const mine = await shareLinkIdsBy(ctx.db, ctx.principal.userId);
      return links.filter((l) => mine.has(l.id)); // researchers see their own links; admins every link
    }),

  view: shareViewRouter,
});
