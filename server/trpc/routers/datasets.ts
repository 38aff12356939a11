import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { viewerProcedure, router } from '../init.ts';
import { datasetExists, getDataset, listDatasets, listProblems } from '../../store/datasets.ts';

const id = z.string().min(1).max(100);

export const datasetsRouter = router({
  /** Datasets, newest first; `latestOnly` keeps the newest version of each name. */
  list: viewerProcedure
    .input(
      z
        .object({
          name: z.string().max(100).optional(),
          latestOnly: z.boolean().default(false),
          limit: z.number().int().min(1).max(500).default(200),
        })
        .default({ latestOnly: false, limit: 200 }),
    )
    .query(({ ctx, input }) => listDatasets(ctx.db, input)),

  get: viewerProcedure.input(z.object({ id })).query(async ({ ctx, input }) => {
    const d = await getDataset(ctx.db, { id: input.id });
    if (!d) throw new TRPCError({ code: 'NOT_FOUND', message: `dataset ${input.id} not found` });
    return d;
  }),

  /** A page of problems in index order; pass `nextCursor` back as `cursor` for the next page. */
  problems: viewerProcedure
    .input(
      z.object({
        datasetId: id,
        split: z.enum(['train', 'test']).optional(),
        cursor: z
          .number()
          .int()
          .min(0)
          .max(2 ** 31 - 1)
          .nullish(),
        limit: z.number().int().min(1).max(500).default(50),
      }),
    )
    .query(async ({ ctx, input }) => {
      if (!(await datasetExists(ctx.db, input.datasetId)))
        throw new TRPCError({ code: 'NOT_FOUND', message: `dataset ${input.datasetId} not found` });
      return listProblems(ctx.db, {
        datasetId: input.datasetId,
        split: input.split,
        cursor: input.cursor ?? 0,
        limit: input.limit,
      });
    }),
});
