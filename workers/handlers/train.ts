import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { config } from '../../server/config.ts';
import { modelExists, modelPath, modelsDir } from '../../server/models/registry.ts';
import { PathEscapeError } from '../../server/models/under-root.ts';
import type { JobPayload } from '../../contracts/jobs.ts';
import { verifierFromSettings } from './verifier.ts';
import { publishLiveRollouts } from './live.ts';
import { createSandbox } from '../sandbox/index.ts';
import { type RayPlacement, TrainerClient, TrainerError } from '../trainer/client.ts';
import { trainOnRay } from './train-on-ray.ts';
import { startRaySandbox } from './ray-sandbox.ts';
import { rayPolicy } from './ray-rollout.ts';
import type { ClusterService } from '../../contracts/cluster.ts';
import { runTraining } from '../train/orchestrator.ts';
import { getDataset } from '../../server/store/datasets.ts';
import { preflight, storedDatasetNames } from '../../contracts/preflight.ts';
import { checkResources } from '../train/resources.ts';
import { modelSize } from '../train/model-size.ts';
import { trainerPython } from '../trainer/python.ts';
import { embeddedPolicy, remotePolicy } from '../engines/create.ts';
import type { PolicyEngine } from '../engines/types.ts';
import { observeEngines } from '../policy/policy-sync.ts';
import { runWeightSyncDir } from '../policy/weight-export.ts';
import { PermanentJobError, type JobHandler } from '../types.ts';

/**
 * "train" job: the payload is { recipe } (a parsed recipe, frozen in the run). A NaN loss or an out-of-memory in
 * the trainer fails the run with that reason (another attempt would hit it again); a crash of the trainer or the
 * worker is retried, and the next attempt resumes from the last checkpoint.
 */
export const train: JobHandler<JobPayload<'train'>> = async (ctx) => {
  if (!ctx.job.runId) throw new PermanentJobError('a train job needs a run');
  const cfg = config();
  // Launched for Ray: this worker submits the run to the cluster and follows it there (train-on-ray.ts); inside
  // that Ray job (TOOLSMITH_ON_RAY) the same handler runs the orchestrator, its trainer ranks placed by the cluster.
  if (ctx.payload.cluster === 'ray' && !cfg.onRay) return trainOnRay(ctx);
  const runId = ctx.job.runId;
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
  const gpuMemoryBytes = gpuMemory(recipe.trainer.device);
  const problems = preflight(recipe, {
    modelDir,
    modelsRoot,
    datasets,
    gpus: gpuMemoryBytes.length,
    rolloutServers: cfg.rolloutUrls,
    onRay: cfg.onRay,
  });
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
        trainerOnCluster: cfg.onRay,
      },
      await modelSize(recipe, name === null ? null : modelDir(name)),
    ),
  );
  if (problems.length) {
    for (const p of problems) await ctx.log(`cannot start: ${p}`, { level: 'error', type: 'trainer_error' });
    throw new PermanentJobError(`this worker cannot run the recipe: ${problems.join('; ')}`);
  }
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
  const trainer = await TrainerClient.start(
    cfg.onRay
      ? {
          ray: rayPlacement(recipe, runId, cfg.rayPlacementTimeoutS),
          startTimeoutMs: (cfg.rayPlacementTimeoutS + 180) * 1000,
        }
      : { ranks: recipe.trainer.ranks, startTimeoutMs: 180_000 },
  );
  if (trainer.placement) {
    const nodes = new Set(trainer.placement.map((r) => r.node)).size;
    await ctx.log(`trainer: ${trainer.placement.length} ranks placed by Ray on ${nodes} node${nodes > 1 ? 's' : ''}`, {
      type: 'cluster',
      data: { ...rayJobEvent(), ranks: trainer.placement },
    });
  }
  // On Ray without configured sandbox nodes: the run's own, as actors on the cluster's CPU nodes.
  const sandbox =
    cfg.onRay && !cfg.sandboxUrls ? await startRaySandbox(runId, logServices('sandbox nodes')) : await createSandbox();
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
};

/** The cluster event's header from inside the run's Ray job (Ray sets these for the entrypoint). */
const rayJobEvent = () => ({
  kind: 'ray' as const,
  cluster: process.env.RAY_ADDRESS ?? 'ray',
  rayJobId: process.env.RAY_JOB_SUBMISSION_ID ?? process.env.RAY_SUBMISSION_ID ?? process.env.RAY_JOB_ID ?? '',
  state: 'RUNNING',
});

/**
 * The trainer group on Ray: recipe.trainer's nodes × ranks, a GPU per rank on device "cuda" (none on "cpu"; "auto"
 * asks for none: name "cuda" to get GPU bundles), one CPU per rank; its actors in the run's namespace.
 */
function rayPlacement(recipe: JobPayload<'train'>['recipe'], runId: string, timeoutS: number): RayPlacement {
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
  if (e.kind !== 'openai') return embeddedPolicy({ threads: config().engineThreads, spin: config().engineSpin });
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

/**
 * The memory of each GPU the trainer's torch sees here ([] without one, or without the trainer's Python). Asked of
 * torch only when the recipe may use a GPU and the machine has a GPU driver (importing torch takes seconds).
 */
function gpuMemory(device: 'auto' | 'cpu' | 'cuda'): number[] {
  if (device === 'cpu') return [];
  if (device === 'auto' && !['/dev/nvidia0', '/dev/kfd', '/proc/driver/nvidia/gpus'].some((p) => fs.existsSync(p)))
    return [];
  try {
    const out = execFileSync(
      trainerPython(),
      [
        '-c',
        'import json, torch; print(json.dumps([torch.cuda.get_device_properties(i).total_memory for i in range(torch.cuda.device_count())]))',
      ],
      { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const list = JSON.parse(out.trim().split('\n').pop() ?? '[]') as unknown;
    return Array.isArray(list) ? list.map(Number).filter((n) => Number.isFinite(n) && n > 0) : [];
  } catch {
    return [];
  }
}
