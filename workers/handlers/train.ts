import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { config } from '../../server/config.ts';
import { modelExists, modelPath, modelsDir } from '../../server/models/registry.ts';
import { PathEscapeError } from '../../server/models/under-root.ts';
import type { JobPayload } from '../../contracts/jobs.ts';
import { verifierFromSettings } from './verifier.ts';
import { publishLiveRollouts } from './live.ts';
import { createSandbox } from '../sandbox/index.ts';
import { TrainerClient, TrainerError } from '../trainer/client.ts';
import { runTraining } from '../train/orchestrator.ts';
import { getDataset } from '../../server/store/datasets.ts';
import { preflight, storedDatasetNames } from '../train/preflight.ts';
import { trainerPython } from '../trainer/python.ts';
import { embeddedPolicy, remotePolicy } from '../engines/create.ts';
import type { PolicyEngine } from '../engines/types.ts';
import { observeEngines } from '../train/policy-sync.ts';
import { PermanentJobError, type JobHandler } from '../types.ts';


/**
 * "train" job: the payload is { recipe } (a parsed recipe, frozen in the run). A NaN loss or an out-of-memory in
 * the trainer fails the run with that reason (another attempt would hit it again); a crash of the trainer or the
 * worker is retried, and the next attempt resumes from the last checkpoint.
 */
export const train: JobHandler<JobPayload<'train'>> = async (ctx) => {
  if (!ctx.job.runId) throw new PermanentJobError('a train job needs a run');
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
  const problems = preflight(recipe, { modelDir, modelsRoot, datasets, gpus: recipe.trainer.device === 'cuda' ? gpuCount() : 0, rolloutServers: config().rolloutUrls });
  if (problems.length) {
    for (const p of problems) await ctx.log(`cannot start: ${p}`, { level: 'error', type: 'trainer_error' });
    throw new PermanentJobError(`this worker cannot run the recipe: ${problems.join('; ')}`);
  }
  const trainer = await TrainerClient.start({ ranks: recipe.trainer.ranks, startTimeoutMs: 180_000 });
  const sandbox = await createSandbox();
  const verifier = verifierFromSettings(recipe.verifier, sandbox);
  let engine: PolicyEngine | null = null; // the policy's engine, once the first sync built it (for the dashboard)
  const policyEngine = observeEngines(policyFactory(recipe, runId), (e) => { engine = e; });
  const live = publishLiveRollouts(ctx, { engineStats: () => engine?.stats?.() ?? [] });
  try {
    const info = await trainer.info();
    await ctx.log(`trainer: torch ${info.torch_version} on ${info.device}${info.world_size > 1 ? ` × ${info.world_size} ranks` : ''}`);
    return await runTraining({
      db: ctx.db, runId, trainer, sandbox, verifier, policyEngine, runDir: path.join(config().dataDir, 'runs', runId), signal: ctx.signal,
      modelDir: (name) => modelPath(name),
      log: (m, o) => ctx.log(m, o), metrics: ctx.metrics, progress: ctx.progress, onEvent: live.onEvent,
    }, recipe);
  } catch (e) {
    if (e instanceof TrainerError && (e.type === 'nan_loss' || e.type === 'oom' || e.type === 'bad_request')) {
      await ctx.log(`trainer: ${e.type}: ${e.message}`, { level: 'error', type: 'trainer_error' });
      throw new PermanentJobError(`trainer ${e.type === 'nan_loss' ? 'produced a NaN loss' : e.type === 'oom' ? 'ran out of memory' : 'rejected a request'}: ${e.message}`);
    }
    throw e;
  } finally {
    await live.stop();
    await trainer.close();
    await verifier.close();
    await sandbox.close();
  }
};

/**
 * The policy's engine: embedded, or the recipe's servers kept in sync through the shared weight-sync folder
 * (<TOOLSMITH_WEIGHT_SYNC_DIR>/<engine.weightSync.dir or the run id>; preflight has checked weightSync is set).
 */
function policyFactory(recipe: JobPayload<'train'>['recipe'], runId: string) {
  const e = recipe.engine;
  if (e.kind !== 'openai') return embeddedPolicy();
  const ws = e.weightSync!;
  return remotePolicy({ urls: e.urls, model: e.model, apiKey: config().engineApiKey, totalTokens: e.totalTokens, timeoutMs: e.timeoutMs, weightSync: ws }, path.join(config().weightSyncDir, ws.dir ?? runId));
}

/** GPUs the trainer's torch sees here (0 without one, or without the trainer's Python). */
function gpuCount(): number {
  try {
    return Number(execFileSync(trainerPython(), ['-c', 'import torch; print(torch.cuda.device_count())'], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim()) || 0;
  } catch {
    return 0;
  }
}
