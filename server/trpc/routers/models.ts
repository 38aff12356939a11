import { viewerProcedure, router } from '../init.ts';
import { listModels } from '../../models/registry.ts';

/** Models by name: the models folder (TOOLSMITH_MODELS_DIR) as the registry lists it; no database involved. */
export const modelsRouter = router({
  /** Every registered model, by name, with its shape, size and provenance. */
  list: viewerProcedure.query(() => listModels()),
});
