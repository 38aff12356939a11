import os from 'node:os';
import path from 'node:path';
import { config } from '../../server/config.ts';
import { modelExists, modelPath, modelsDir } from '../../server/models/registry.ts';
import { PathEscapeError } from '../../server/models/under-root.ts';
import type { JobPayload } from '../../contracts/jobs.ts';
import { verifierFromSettings } from './verifier.ts';
import { publishLiveRollouts } from './live.ts';
import { TrainerError } from '../trainer/client.ts';
import { trainOnRay } from './train-on-ray.ts';
import { LOCAL_PLACEMENT, type Placement } from './placement.ts';
import { rayPolicy } from './ray-rollout.ts';
import type { ClusterService } from '../../contracts/cluster.ts';
import { runTraining } from '../train/orchestrator.ts';
import { getDataset } from '../../server/store/datasets.ts';
import { preflight, storedDatasetNames } from '../../contracts/preflight.ts';
import { checkResources } from '../train/resources.ts';
import { modelSize } from '../train/model-size.ts';
import { gpuMemory } from './gpu-memory.ts';
import { engineDeviceProblem } from '../engines/engine-device.ts';
import { embeddedPolicy, remotePolicy } from '../engines/create.ts';
import type { PolicyEngine } from '../engines/types.ts';
import { observeEngines } from '../policy/policy-sync.ts';
import { runWeightSyncDir } from '../policy/weight-export.ts';
import { type JobContext, PermanentJobError, type JobHandler } from '../types.ts';

/**
 * "train" job: the payload is { recipe } (a parsed recipe, frozen in the run). A run placed on this worker runs
 * here; one placed on Ray is submitted to the cluster and followed there (train-on-ray.ts), where ray-entry runs it
 * with the Ray placement (runPlaced).
 */
export const train: JobHandler<JobPayload<'train'>> = (ctx) =>
  ctx.payload.cluster === 'ray' ? trainOnRay(ctx) : runPlaced(ctx, LOCAL_PLACEMENT);

/**
 * Run the training job where `placement` says (placement.ts builds its trainer and sandbox). A NaN loss or an
 * out-of-memory in the trainer fails the run with that reason (another attempt would hit it again); a crash of the
 * trainer or the worker is retried, and the next attempt resumes from the last checkpoint.
 */
export async function runPlaced(ctx: JobContext<JobPayload<'train'>>, placement: Placement): Promise<unknown> {
  if (!ctx.job.runId) throw new PermanentJobError('a train job needs a run');
  const runId = ctx.job.runId;
  const recipe = ctx.payload.recipe;
  await refuseUnfit(ctx, placement);
  // Each time the run's services on Ray change (started, restarted), the run page's Cluster panel learns it.
  const logServices = (what: string) => (services: ClusterService[]) =>
    void ctx
      .log(
        `${what} on Ray: ${services.map((s) => `${s.url}${s.restarts ? ` (restarted ${s.restarts}×)` : ''}`).join(', ')}`,
        {
          type: 'cluster',
          data: { ...rayJobEvent(), services },
        },
      )
      .catch(() => {});
  // Before any process starts: it refuses a weight-sync folder outside the run's own.
  const policy = policyFactory(recipe, runId, logServices('rollout servers'));
  const trainer = await placement.startTrainer(recipe, runId);
  if (trainer.placement) {
    const nodes = new Set(trainer.placement.map((r) => r.node)).size;
    await ctx.log(`trainer: ${trainer.placement.length} ranks placed by Ray on ${nodes} node${nodes > 1 ? 's' : ''}`, {
      type: 'cluster',
      data: { ...rayJobEvent(), ranks: trainer.placement },
    });
  }
  const sandbox = await placement.startSandbox(runId, logServices('sandbox nodes'));
  const verifier = verifierFromSettings(recipe.verifier, sandbox);
  let engine: PolicyEngine | null = null; // the policy's engine, once the first sync built it (for the dashboard)
  const policyEngine = observeEngines(policy, (e) => {
    engine = e;
  });
  const live = publishLiveRollouts(ctx, { engineStats: () => engine?.stats?.() ?? [] });
  try {
    const info = await trainer.info();
    await ctx.log(
      `trainer: torch ${info.torch_version} on ${info.device}${info.world_size > 1 ? ` × ${info.world_size} ranks` : ''}`,
    );
    return await runTraining(
      {
        db: ctx.db,
        runId,
        trainer,
        sandbox,
        verifier,
        policyEngine,
        runDir: path.join(config().dataDir, 'runs', runId),
        signal: ctx.signal,
        modelDir: (name) => modelPath(name),
        log: (m, o) => ctx.log(m, o),
        metrics: ctx.metrics,
        progress: ctx.progress,
        onEvent: live.onEvent,
      },
      recipe,
    );
  } catch (e) {
    if (e instanceof TrainerError && (e.type === 'nan_loss' || e.type === 'oom' || e.type === 'bad_request')) {
      await ctx.log(`trainer: ${e.type}: ${e.message}`, { level: 'error', type: 'trainer_error' });
      throw new PermanentJobError(
        `trainer ${e.type === 'nan_loss' ? 'produced a NaN loss' : e.type === 'oom' ? 'ran out of memory' : 'rejected a request'}: ${e.message}`,
      );
    }
    throw e;
  } finally {
    await live.stop();
    await trainer.close();
    await verifier.close();
    await sandbox.close();
  }
}

/**
 * Fails the job for good, each reason logged, when the recipe cannot run here: preflight (models, datasets, GPUs,
 * rollout servers) and what the host has (or the operator allows).
 */
async function refuseUnfit(ctx: JobContext<JobPayload<'train'>>, placement: Placement): Promise<void> {
  const cfg = config();
  const recipe = ctx.payload.recipe;
  const modelsRoot = modelsDir();
  // A name whose folder escapes the models folder (a planted symlink) fails the run for good, naming the field.
  const modelDir = (name: string) => {
    try {
      return modelExists(name) ? modelPath(name) : null;
    } catch (e) {
      if (e instanceof PathEscapeError) throw new PermanentJobError(`model.${e.message}`);
      throw e;
    }
  };
  const datasets = new Set<string>();
  for (const name of storedDatasetNames(recipe)) if (await getDataset(ctx.db, { name })) datasets.add(name);
  const engineDevice = recipe.engine.kind === 'embedded' ? recipe.engine.device : 'cpu';
  // The engine on a GPU asks torch for them even when the trainer stays on the CPU.
  const gpuMemoryBytes = await gpuMemory(engineDevice === 'cuda' ? 'cuda' : recipe.trainer.device);
  const problems = preflight(recipe, {
    modelDir,
    modelsRoot,
    datasets,
    gpus: gpuMemoryBytes.length,
    rolloutServers: cfg.rolloutUrls,
    onRay: placement.onCluster,
  });
  const engineProblem = engineDeviceProblem(engineDevice, gpuMemoryBytes.length);
  if (engineProblem) problems.push(engineProblem);
  // What the host has (or the operator allows): a recipe within the schema's bounds can still overrun it.
  const name = recipe.model.kind === 'model' ? recipe.model.name : null;
  problems.push(
    ...checkResources(
      recipe,
      {
        memoryBytes: os.totalmem(),
        cpus: os.availableParallelism(),
        gpuMemoryBytes,
        sandboxConcurrency: cfg.sandboxUrls ? null : os.availableParallelism(), // the local pool's size (workers/sandbox/pool.ts)
        maxTrainerRanks: cfg.maxTrainerRanks,
        maxTrainerMemoryMb: cfg.maxTrainerMemoryMb,
        maxSandboxMemoryMb: cfg.maxSandboxMemoryMb,
        trainerOnCluster: placement.onCluster,
      },
      await modelSize(recipe, name === null ? null : modelDir(name)),
    ),
  );
  if (problems.length) {
    for (const p of problems) await ctx.log(`cannot start: ${p}`, { level: 'error', type: 'trainer_error' });
    throw new PermanentJobError(`this worker cannot run the recipe: ${problems.join('; ')}`);
  }
}

/** The cluster event's header from inside the run's Ray job (Ray sets these for the entrypoint). */
const rayJobEvent = () => ({
  kind: 'ray' as const,
  cluster: process.env.RAY_ADDRESS ?? 'ray',
  rayJobId: process.env.RAY_JOB_SUBMISSION_ID ?? process.env.RAY_SUBMISSION_ID ?? process.env.RAY_JOB_ID ?? '',
  state: 'RUNNING',
});

/**
 * The policy's engine: embedded, or the recipe's servers kept in sync through the shared weight-sync folder
 * (<TOOLSMITH_WEIGHT_SYNC_DIR>/<run id>[/<engine.weightSync.dir>]; preflight has checked weightSync is set).
 */
function policyFactory(
  recipe: JobPayload<'train'>['recipe'],
  runId: string,
  onServices?: (services: ClusterService[]) => void,
) {
  const e = recipe.engine;
  if (e.kind === 'ray') return rayPolicy(e, runWeightSyncDir(config().weightSyncDir, runId), runId, onServices);
  if (e.kind !== 'openai')
    return embeddedPolicy({ threads: config().engineThreads, spin: config().engineSpin, device: e.device });
  const ws = e.weightSync!;
  return remotePolicy(
    {
      urls: e.urls,
      model: e.model,
      apiKey: config().engineApiKey,
      totalTokens: e.totalTokens,
      timeoutMs: e.timeoutMs,
      weightSync: ws,
    },
    runWeightSyncDir(config().weightSyncDir, runId, ws.dir),
  );
}
