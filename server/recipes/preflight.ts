/**
 * The worker's preflight (contracts/preflight.ts) as the recipe designer runs it: with what the web server knows —
 * the models folder, the stored datasets, this deployment's rollout servers and the catalogues — and not the
 * worker's GPUs (checked again by the worker that takes the run). A missing catalogue model or dataset comes with
 * its fix (fetch or add it as a job), which the designer offers beside the issue.
 */
import { type PreflightIssue, preflightIssues, storedDatasetNames } from '../../contracts/preflight.ts';
import { parseRecipe } from '../../contracts/recipe.ts';
import { config } from '../config.ts';
import type { Database } from '../db/client.ts';
import { DATASET_CATALOGUE } from '../datasets/catalogue.ts';
import { MODEL_CATALOGUE } from '../models/catalogue.ts';
import { modelExists, modelPath, modelsDir } from '../models/registry.ts';
import { getDataset } from '../store/datasets.ts';

/** The issues of `spec` (none while it does not validate: the designer shows its field errors instead). */
export async function designerPreflight(db: Database, spec: unknown): Promise<PreflightIssue[]> {
  let recipe: ReturnType<typeof parseRecipe>;
  try {
    recipe = parseRecipe(spec);
  } catch {
    return [];
  }
  const datasets = new Set<string>();
  for (const name of storedDatasetNames(recipe)) if (await getDataset(db, { name })) datasets.add(name);
  return preflightIssues(recipe, {
    // A name that escapes the models folder is no model here (the worker refuses it naming why).
    modelDir: (name) => {
      try {
        return modelExists(name) ? modelPath(name) : null;
      } catch {
        return null;
      }
    },
    modelsRoot: modelsDir(),
    gpus: null,
    datasets,
    rolloutServers: config().rolloutUrls,
    catalogue: { models: MODEL_CATALOGUE.map((m) => m.name), datasets: DATASET_CATALOGUE.map((d) => d.name) },
  });
}
