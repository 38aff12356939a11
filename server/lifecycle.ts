/**
 * The run lifecycle, in one place for the tRPC routers and the CLI alike: launch (train, eval, diagnostics), pause,
 * resume (after a pause, a cancel, Ctrl-C or a crash) and cancel. Every state change goes through the stores, and
 * every rule that decides whether a change is allowed is written once, here.
 */
import { UserError, parseUserInput } from '../contracts/errors.ts';
import { EvalSpecSchema, type EvalSpecInput } from '../contracts/eval.ts';
import { parseRecipe, totalSteps, type Recipe } from '../contracts/recipe.ts';
import { CATALOGUE_RUN_KINDS, type CatalogueJobKind, type RunPlacement } from '../contracts/jobs.ts';
import { isFinished } from '../contracts/runs.ts';
import { DATASET_CATALOGUE } from './datasets/catalogue.ts';
import { MODEL_CATALOGUE } from './models/catalogue.ts';
import { config } from './config.ts';
import type { Database } from './db/client.ts';
import { cancel as cancelJob, enqueue, lastRunPayload, latestFinishedJob, unfinishedJobs } from './store/jobs.ts';
import { createRecipeVersion, getRecipe } from './store/recipes.ts';
import { appendEvent } from './store/events.ts';
import { createRun, getRunOrThrow, latestRunsNamed, requeueRun, setRunStatus } from './store/runs.ts';
import { getImportSource, setImportFollow } from './store/imports.ts';
import { FORMAT_FROM_LAYOUT } from '../contracts/foreign.ts';

export type RecipeRef = { name: string; version?: number } | { id: string } | { spec: unknown };

/** Training jobs retry a crashed worker up to this many times; each attempt resumes from the last checkpoint. */
const TRAIN_ATTEMPTS = 5;

/** Whether this deployment names a Ray cluster runs may be sent to. */
export const rayConfigured = () => Boolean(config().rayAddress);

const enqueueTraining = (db: Database, runId: string, recipe: Recipe, cluster: RunPlacement = 'local') =>
  enqueue(db, { kind: 'train', runId, payload: { recipe, cluster }, maxAttempts: TRAIN_ATTEMPTS });

/** Launch a training run: the recipe version is frozen into the run; the "train" job is what a worker picks up. */
export async function launchTraining(
  db: Database,
  ref: RecipeRef,
  opts: { name?: string; seed?: number; createdBy?: string | null; cluster?: RunPlacement } = {},
) {
  if (opts.cluster === 'ray' && !rayConfigured())
    throw new UserError(
      'cluster: "ray" needs a Ray cluster: an operator sets TOOLSMITH_RAY_ADDRESS (its dashboard URL) and TOOLSMITH_RAY_TOKEN_FILE on the workers and the web server (docs/scaling-out.md "Ray")',
      { field: 'cluster' },
    );
  let stored;
  if ('spec' in ref) {
    const spec = parseRecipe(ref.spec);
    stored = (await createRecipeVersion(db, spec.name, spec, { createdBy: opts.createdBy })).recipe;
  } else {
    stored = await getRecipe(db, ref);
    if (!stored)
      throw new UserError(
        'id' in ref
          ? `recipe ${ref.id} not found`
          : `no recipe named "${ref.name}"${ref.version ? ` with version ${ref.version}` : ''}`,
        { field: 'recipe' },
      );
  }
  const recipe = opts.seed === undefined ? stored.spec : parseRecipe({ ...stored.spec, seed: opts.seed });
  const run = await createRun(db, {
    name: opts.name ?? `${stored.name} v${stored.version}`,
    kind: 'train',
    recipeId: stored.id,
    recipeSpec: recipe,
    seed: recipe.seed,
    totalSteps: totalSteps(recipe),
    createdBy: opts.createdBy,
  });
  const jobId = await enqueueTraining(db, run.id, recipe, opts.cluster);
  return { runId: run.id, jobId, recipe };
}

/** Start an evaluation: validate the spec (errors name the field), create its run and the job a worker picks up. */
export async function launchEval(db: Database, input: EvalSpecInput, name?: string, createdBy?: string | null) {
  const spec = parseUserInput(EvalSpecSchema, input, 'eval spec');
  const what =
    spec.engine.kind === 'embedded' ? spec.engine.checkpoint.split('/').filter(Boolean).pop() : spec.engine.model;
  const run = await createRun(db, {
    name: name ?? `eval ${what} on ${spec.datasets.join(', ')}`,
    kind: 'eval',
    recipeSpec: spec,
    seed: spec.seed,
    createdBy,
  });
  const jobId = await enqueue(db, { kind: 'eval', runId: run.id, payload: spec, maxAttempts: 3 });
  return { runId: run.id, jobId, spec };
}

/** Start a diagnostics run: a Run (so it has an event log and a chart) and the job a worker will pick up. */
export async function launchDiagnostics(db: Database) {
  const run = await createRun(db, {
    name: `diagnostics ${new Date().toISOString().slice(0, 19).replace('T', ' ')}`,
    kind: 'diagnostics',
    seed: 0,
  });
  const jobId = await enqueue(db, { kind: 'diagnostics', runId: run.id, maxAttempts: 1 });
  return { runId: run.id, jobId };
}

/**
 * Fetch a catalogue model or add a catalogue dataset as a job (the Models and Datasets pages, the designer's fix):
 * a run of its own with the job's log. One at a time per name: while one is queued or running, it is returned
 * instead of a second.
 */
export async function launchCatalogueJob(db: Database, kind: CatalogueJobKind, name: string) {
  const known = kind === 'model.fetch' ? MODEL_CATALOGUE.map((m) => m.name) : DATASET_CATALOGUE.map((d) => d.name);
  if (!known.includes(name))
    throw new UserError(
      `name: no ${kind === 'model.fetch' ? 'model' : 'dataset'} named "${name}" in the catalogue (one of: ${known.join(', ')})`,
      { field: 'name' },
    );
  const runKind = CATALOGUE_RUN_KINDS[kind];
  const runName = `${kind === 'model.fetch' ? 'fetch' : 'add'} ${name}`;
  const active = await activeCatalogueRun(db, runKind, runName);
  if (active) return { runId: active.id, started: false };
  const run = await createRun(db, { name: runName, kind: runKind, seed: 0 });
  await enqueue(db, { kind, runId: run.id, payload: { name }, maxAttempts: 2 });
  return { runId: run.id, started: true };
}

/** The queued or running catalogue run of that name, if any. */
export async function activeCatalogueRun(db: Database, kind: string, name: string) {
  return (await latestRunsNamed(db, kind, name, 5)).find((r) => !isFinished(r.status)) ?? null;
}

/** The most recent finished diagnostics report, with the run it came from. */
export async function latestDiagnostics(db: Database) {
  const job = await latestFinishedJob(db, 'diagnostics');
  if (!job) return null;
  return {
    jobId: job.id,
    runId: job.runId,
    status: job.status,
    finishedAt: job.finishedAt,
    error: job.error,
    report: job.result ? JSON.parse(job.result) : null,
  };
}

/**
 * Cancel a run: its queued jobs are cancelled now; a running job is flagged and its worker stops it at the
 * next heartbeat (the run turns "cancelled" then).
 */
export async function cancelRun(db: Database, runId: string): Promise<{ status: string }> {
  const run = await getRunOrThrow(db, runId);
  if (isFinished(run.status)) return { status: run.status };
  let running = false;
  for (const j of await unfinishedJobs(db, runId)) if ((await cancelJob(db, j.id)) === 'cancelling') running = true;
  if (running) {
    await appendEvent(db, runId, {
      type: 'log',
      level: 'warn',
      message: 'cancel requested; the worker stops at its next heartbeat',
    });
    return { status: 'cancelling' };
  }
  await setRunStatus(db, runId, 'cancelled', { message: 'run cancelled before a worker took it' });
  return { status: 'cancelled' };
}

/** Pause: the worker stops at its next heartbeat, keeping every checkpoint; resumeTraining continues from the last. */
export async function pauseTraining(db: Database, runId: string) {
  const run = await getRunOrThrow(db, runId);
  if (run.kind !== 'train')
    throw new UserError(`run ${runId} is a ${run.kind} run; only training runs pause`, { field: 'runId' });
  if (!['queued', 'running'].includes(run.status))
    throw new UserError(`run ${runId} is ${run.status}; only a queued or running run can pause`, { field: 'runId' });
  await setRunStatus(db, runId, 'paused', {
    message: 'pause requested; the worker stops at its next heartbeat and keeps the checkpoints',
  });
  // Queued jobs are cancelled now, a leased one at its worker's next heartbeat; the worker keeps the run "paused".
  for (const j of await unfinishedJobs(db, runId)) await cancelJob(db, j.id);
  return { status: 'paused' as const };
}

/**
 * Resume a training run from its last checkpoint. The rules (the Resume button and `toolsmith train --resume`):
 * - only training runs resume, and not one that succeeded or failed;
 * - a paused or cancelled run gets a new "train" job (once its last job has stopped: "still stopping" until then);
 * - a run whose job is still queued or leased (Ctrl-C in the CLI released it; a crashed worker's lease runs out)
 *   already continues on its own: `attach` returns that job for a caller that runs it in-process (the CLI);
 *   without `attach` it is an error, so a second click never starts a second job.
 */
export async function resumeTraining(
  db: Database,
  runId: string,
  opts: { attach?: boolean } = {},
): Promise<{ status: 'queued'; jobId: string; attached: boolean }> {
  const run = await getRunOrThrow(db, runId);
  if (run.kind !== 'train')
    throw new UserError(`run ${runId} is a ${run.kind} run; only training runs resume`, { field: 'runId' });
  if (run.status === 'succeeded' || run.status === 'failed')
    throw new UserError(
      `run ${runId} already ${run.status}; only a paused run resumes (or a cancelled or interrupted one)`,
      { field: 'runId' },
    );
  const [job] = await unfinishedJobs(db, runId);
  const stopped = run.status === 'paused' || run.status === 'cancelled';
  if (job && stopped)
    throw new UserError(`run ${runId} is still stopping; try again in a few seconds`, { field: 'runId' });
  if (job && !opts.attach)
    throw new UserError(
      `run ${runId} is ${run.status} (its job is ${job.status}); only a paused run resumes (or a cancelled one)`,
      { field: 'runId' },
    );
  // A run resumes where it was launched (on the worker or on the Ray cluster).
  const last = (await lastRunPayload(db, runId, 'train')) as { cluster?: RunPlacement } | null;
  const jobId = job ? job.id : await enqueueTraining(db, runId, JSON.parse(run.recipeSpec) as Recipe, last?.cluster);
  await requeueRun(db, runId, 'resumed; continues from the last checkpoint');
  if (!job) await appendEvent(db, runId, { type: 'resume', message: 'resume requested' });
  return { status: 'queued', jobId, attached: Boolean(job) };
}

/**
 * Follow an imported run again, or stop following it. Following enqueues the job that tails the folder from the
 * stored offsets, with the reward weights of the run's earlier import job; stopping cancels that job (what was read
 * stays).
 */
export async function setImportFollowing(db: Database, runId: string, follow: boolean) {
  const source = await getImportSource(db, runId);
  if (!source) throw new UserError(`run ${runId} is not an imported run`, { field: 'runId' });
  const jobs = await unfinishedJobs(db, runId);
  await setImportFollow(db, runId, follow);
  if (!follow) {
    for (const j of jobs) await cancelJob(db, j.id);
    return { following: false };
  }
  if (jobs.length === 0) {
    await setRunStatus(db, runId, 'queued', {
      message: `waiting for a worker's import slot to follow ${source.format === FORMAT_FROM_LAYOUT ? '' : `${source.format} `}rollouts in ${source.path} again`,
    });
    // The reward weights the import was started with (TRL's reward_weights) hold for every later read of it.
    const last = (await lastRunPayload(db, runId, 'import')) as { weights?: Record<string, number> } | null;
    const weights = last?.weights ? { weights: last.weights } : {};
    await enqueue(db, { kind: 'import', runId, payload: { follow: true, ...weights }, maxAttempts: 3 });
  }
  return { following: true };
}
