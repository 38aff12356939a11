/**
 * Where a training run's orchestrator runs, and everything that decides: on the worker that leased its job (local),
 * or inside the run's Ray job (ray: `npx toolsmith ray-entry`, submitted by train-on-ray.ts). Both the worker's train
 * handler and ray-entry build the run's trainer and sandbox here, once, from the placement they were given; nothing
 * else asks which one it is.
 */
import type { RunPlacement } from '../../contracts/jobs.ts';
import type { Recipe } from '../../contracts/recipe.ts';
import type { ClusterService } from '../../contracts/cluster.ts';
import { config } from '../../server/config.ts';
import { createSandbox } from '../sandbox/index.ts';
import type { Sandbox } from '../sandbox/types.ts';
import { type RayPlacement, TrainerClient } from '../trainer/client.ts';
import { startRaySandbox } from './ray-sandbox.ts';

export interface Placement {
  kind: RunPlacement;
  /** The trainer's ranks (and, through preflight, the rollout engines) are the cluster's, not this host's. */
  onCluster: boolean;
  startTrainer(recipe: Recipe, runId: string): Promise<TrainerClient>;
  /** `onNodes`: told each time the run's own sandbox nodes change (started, restarted). */
  startSandbox(runId: string, onNodes: (services: ClusterService[]) => void): Promise<Sandbox>;
}

/** On this worker: the trainer's ranks as local processes, the configured sandbox (local pool or nodes). */
export const LOCAL_PLACEMENT: Placement = {
  kind: 'local',
  onCluster: false,
  startTrainer: (recipe) => TrainerClient.start({ ranks: recipe.trainer.ranks, startTimeoutMs: 180_000 }),
  startSandbox: () => createSandbox(),
};

/**
 * Inside the run's Ray job: the trainer's ranks placed by Ray, and the sandbox the configured nodes or, without them,
 * the run's own sandbox nodes as actors on the cluster's CPU nodes.
 */
export const RAY_PLACEMENT: Placement = {
  kind: 'ray',
  onCluster: true,
  startTrainer: (recipe, runId) => {
    const timeoutS = config().rayPlacementTimeoutS;
    return TrainerClient.start({
      ray: rayPlacement(recipe, runId, timeoutS),
      startTimeoutMs: (timeoutS + 180) * 1000,
    });
  },
  startSandbox: (runId, onNodes) => (config().sandboxUrls ? createSandbox() : startRaySandbox(runId, onNodes)),
};

/**
 * The trainer group on Ray: recipe.trainer's nodes × ranks, a GPU per rank on device "cuda" (none on "cpu"; "auto"
 * asks for none: name "cuda" to get GPU bundles), one CPU per rank; its actors in the run's namespace.
 */
function rayPlacement(recipe: Recipe, runId: string, timeoutS: number): RayPlacement {
  const t = recipe.trainer;
  return {
    nodes: t.nodes,
    ranks: t.ranks,
    cpus: 1,
    gpus: t.device === 'cuda' ? 1 : 0,
    timeoutS,
    namespace: `toolsmith-${runId}`,
  };
}
