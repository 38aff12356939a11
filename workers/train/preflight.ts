/**
 * Before a train job starts its trainer: does this worker have what the recipe needs? Every missing piece is
 * named (the model, the datasets, the GPUs, the nodes, the engines) so a run that cannot work fails at once with the list,
 * instead of starting and failing an hour later. Pure: the caller measures the worker (workers/handlers/train.ts).
 */
import type { Recipe } from '../../contracts/recipe.ts';

export interface WorkerResources {
  /** The directory of a registered model, or null when there is none of that name. */
  modelDir(name: string): string | null;
  /** Where models are registered (for the message). */
  modelsRoot: string;
  /** GPUs torch sees on this worker. */
  gpus: number;
  /** The trainer's ranks are placed by a Ray cluster (this process runs inside the run's Ray job). */
  onRay?: boolean;
  /** The stored datasets (by name) that exist, of those the recipe names (storedDatasetNames). */
  datasets: ReadonlySet<string>;
  /**
   * The rollout servers this deployment lets a recipe name (TOOLSMITH_ROLLOUT_URLS): a recipe is a researcher's
   * input, and without the list its engine.urls would make the worker call any address it can reach.
   */
  rolloutServers: readonly string[];
}

const bareUrl = (u: string) => u.trim().replace(/\/+$/, '');

/** Every stored dataset the recipe reads: SFT demonstrations' problems, RL prompts and evaluation sets. */
export function storedDatasetNames(recipe: Recipe): string[] {
  const names = new Set<string>();
  for (const s of recipe.stages) if (s.data.kind === 'stored') names.add(s.data.name);
  for (const d of recipe.eval?.datasets ?? []) if (d.kind === 'stored') names.add(d.name);
  return [...names];
}

export function preflight(recipe: Recipe, w: WorkerResources): string[] {
  const problems: string[] = [];
  const t = recipe.trainer;
  if (recipe.model.kind === 'model' && w.modelDir(recipe.model.name) === null) {
    problems.push(
      `model.name: no model "${recipe.model.name}" under ${w.modelsRoot} (register it: npx toolsmith model import DIR --name ${recipe.model.name})`,
    );
  }
  for (const name of storedDatasetNames(recipe)) {
    if (!w.datasets.has(name))
      problems.push(`dataset "${name}": not stored here (import it: npx toolsmith dataset import FILE --name ${name})`);
  }
  if (t.device === 'cuda' && w.gpus < t.ranks && !w.onRay) {
    problems.push(
      `trainer.ranks: ${t.ranks} rank${t.ranks > 1 ? 's' : ''} on cuda need ${t.ranks} GPU${t.ranks > 1 ? 's' : ''} on this worker; it has ${w.gpus}`,
    );
  }
  if (t.nodes > 1 && !w.onRay) {
    problems.push(
      `trainer.nodes: ${t.nodes} nodes × ${t.ranks} ranks needs a cluster to place them: launch the run on Ray (TOOLSMITH_RAY_ADDRESS; docs/scaling-out.md "Ray"), whose private network the ranks then meet on; a worker alone runs one node`,
    );
  }
  if (recipe.engine.kind === 'ray' && !w.onRay) {
    problems.push(
      'engine.kind: "ray" starts the rollout servers on the Ray cluster: launch the run on Ray (Launch run → Ray, or npx toolsmith train --cluster ray)',
    );
  }
  if (recipe.engine.kind === 'openai') {
    const allowed = new Set(w.rolloutServers.map(bareUrl));
    recipe.engine.urls.forEach((u, i) => {
      if (!allowed.has(bareUrl(u))) {
        problems.push(
          `engine.urls.${i}: ${u} is not one of this deployment's rollout servers (${allowed.size ? [...allowed].join(', ') : 'none configured'}); an admin lists them in TOOLSMITH_ROLLOUT_URLS`,
        );
      }
    });
    const ws = recipe.engine.weightSync;
    if (!ws) {
      problems.push(
        `engine.weightSync: rollouts on OpenAI-compatible servers (${recipe.engine.urls.join(', ')}) need the new weights pushed to them after every update: set engine.weightSync.mode ("sglang" for SGLang and toolsmith serve-model, "vllm", or "vllm-lora"; docs/scaling-out.md "Weight sync")`,
      );
    } else if (ws.mode === 'vllm-lora' && !t.lora) {
      problems.push(
        'engine.weightSync.mode: "vllm-lora" pushes LoRA adapters, so it needs trainer.lora; use "vllm" to push the whole model',
      );
    }
  }
  return problems;
}
