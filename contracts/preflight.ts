/**
 * Before a train job starts its trainer: does this worker have what the recipe needs? Every missing piece is
 * named (the model, the datasets, the GPUs, the nodes, the engines) so a run that cannot work fails at once with the list,
 * instead of starting and failing an hour later. Pure: the caller measures the worker (workers/handlers/train.ts); the
 * recipe designer runs the same checks with what the web server knows (server/recipes/preflight.ts: the models
 * folder, the stored datasets, the rollout servers; not the worker's GPUs) and offers each issue's fix.
 */
import type { Recipe } from './recipe.ts';

export interface WorkerResources {
  /** The directory of a registered model, or null when there is none of that name. */
  modelDir(name: string): string | null;
  /** Where models are registered (for the message). */
  modelsRoot: string;
  /** GPUs torch sees on this worker; null where they are not known (the web server), which skips their check. */
  gpus: number | null;
  /** The trainer's ranks are placed by a Ray cluster (this process runs inside the run's Ray job). */
  onRay?: boolean;
  /** The stored datasets (by name) that exist, of those the recipe names (storedDatasetNames). */
  datasets: ReadonlySet<string>;
  /**
   * The rollout servers this deployment lets a recipe name (TOOLSMITH_ROLLOUT_URLS): a recipe is a researcher's
   * input, and without the list its engine.urls would make the worker call any address it can reach.
   */
  rolloutServers: readonly string[];
  /** Names `model fetch` and `dataset add` know (their catalogues): a missing one is fetched, not imported. */
  catalogue?: { models: readonly string[]; datasets: readonly string[] };
}

/** What makes an issue go away from the workbench: fetching a catalogue model or adding a catalogue dataset. */
export type PreflightFix = { kind: 'fetch-model'; name: string } | { kind: 'add-dataset'; name: string };

export interface PreflightIssue {
  message: string;
  fix?: PreflightFix;
}

const bareUrl = (u: string) => u.trim().replace(/\/+$/, '');

/** Every stored dataset the recipe reads: SFT demonstrations' problems, RL prompts and evaluation sets. */
export function storedDatasetNames(recipe: Recipe): string[] {
  const names = new Set<string>();
  for (const s of recipe.stages) if (s.data.kind === 'stored') names.add(s.data.name);
  for (const d of recipe.eval?.datasets ?? []) if (d.kind === 'stored') names.add(d.name);
  return [...names];
}

/** Every missing piece as its message (what a worker refuses a run with). */
export function preflight(recipe: Recipe, w: WorkerResources): string[] {
  return preflightIssues(recipe, w).map((i) => i.message);
}

/** Every missing piece, with its fix where the workbench has one. */
export function preflightIssues(recipe: Recipe, w: WorkerResources): PreflightIssue[] {
  const issues: PreflightIssue[] = [];
  const problem = (message: string) => issues.push({ message });
  const t = recipe.trainer;
  if (recipe.model.kind === 'model' && w.modelDir(recipe.model.name) === null) {
    const name = recipe.model.name;
    issues.push(
      w.catalogue?.models.includes(name)
        ? {
            message: `model.name: no model "${name}" under ${w.modelsRoot} (fetch it: Models → Fetch, or npx toolsmith model fetch ${name})`,
            fix: { kind: 'fetch-model', name },
          }
        : {
            message: `model.name: no model "${name}" under ${w.modelsRoot} (register it: npx toolsmith model import DIR --name ${name})`,
          },
    );
  }
  for (const name of storedDatasetNames(recipe)) {
    if (w.datasets.has(name)) continue;
    issues.push(
      w.catalogue?.datasets.includes(name)
        ? {
            message: `dataset "${name}": not stored here (add it: Datasets → Add, or npx toolsmith dataset add ${name})`,
            fix: { kind: 'add-dataset', name },
          }
        : {
            message: `dataset "${name}": not stored here (import it: npx toolsmith dataset import FILE --name ${name})`,
          },
    );
  }
  if (t.device === 'cuda' && w.gpus !== null && w.gpus < t.ranks && !w.onRay) {
    problem(
      `trainer.ranks: ${t.ranks} rank${t.ranks > 1 ? 's' : ''} on cuda need ${t.ranks} GPU${t.ranks > 1 ? 's' : ''} on this worker; it has ${w.gpus}`,
    );
  }
  if (t.nodes > 1 && !w.onRay) {
    problem(
      `trainer.nodes: ${t.nodes} nodes × ${t.ranks} ranks needs a cluster to place them: launch the run on Ray (TOOLSMITH_RAY_ADDRESS; docs/scaling-out.md "Ray"), whose private network the ranks then meet on; a worker alone runs one node`,
    );
  }
  if (recipe.engine.kind === 'ray' && !w.onRay) {
    problem(
      'engine.kind: "ray" starts the rollout servers on the Ray cluster: launch the run on Ray (Launch run → Ray, or npx toolsmith train --cluster ray)',
    );
  }
  if (recipe.engine.kind === 'openai') {
    const allowed = new Set(w.rolloutServers.map(bareUrl));
    recipe.engine.urls.forEach((u, i) => {
      if (!allowed.has(bareUrl(u))) {
        problem(
          `engine.urls.${i}: ${u} is not one of this deployment's rollout servers (${allowed.size ? [...allowed].join(', ') : 'none configured'}); an admin lists them in TOOLSMITH_ROLLOUT_URLS`,
        );
      }
    });
    const ws = recipe.engine.weightSync;
    if (!ws) {
      problem(
        `engine.weightSync: rollouts on OpenAI-compatible servers (${recipe.engine.urls.join(', ')}) need the new weights pushed to them after every update: set engine.weightSync.mode ("sglang" for SGLang and toolsmith serve-model, "vllm", or "vllm-lora"; docs/scaling-out.md "Weight sync")`,
      );
    } else if (ws.mode === 'vllm-lora' && !t.lora) {
      problem(
        'engine.weightSync.mode: "vllm-lora" pushes LoRA adapters, so it needs trainer.lora; use "vllm" to push the whole model',
      );
    }
  }
  return issues;
}
