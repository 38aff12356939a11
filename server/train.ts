import type { Database } from './db/client.ts';
import { UserError } from '../contracts/errors.ts';
import { cancel as cancelJob, enqueue } from './jobs/queue.ts';
import { parseRecipe, totalSteps } from '../contracts/recipe.ts';
import { createRecipeVersion, getRecipe } from './recipes/store.ts';
import { appendEvent } from './store/events.ts';
import { createRun, setRunStatus } from './store/runs.ts';

export type RecipeRef = { name: string; version?: number } | { id: string } | { spec: unknown };

/** Launch a training run: the recipe version is frozen into the run; the "train" job is what a worker picks up. */
export async function launchTraining(db: Database, ref: RecipeRef, opts: { name?: string; seed?: number } = {}) {
  let stored;
  if ('spec' in ref) {
    const spec = parseRecipe(ref.spec);
    stored = (await createRecipeVersion(db, spec.name, spec)).recipe;
  } else {
    stored = await getRecipe(db, ref);
    if (!stored) throw new UserError('id' in ref ? `recipe ${ref.id} not found` : `no recipe named "${ref.name}"${ref.version ? ` with version ${ref.version}` : ''}`, { field: 'recipe' });
  }
  const recipe = opts.seed === undefined ? stored.spec : parseRecipe({ ...stored.spec, seed: opts.seed });
  const run = await createRun(db, {
    name: opts.name ?? `${stored.name} v${stored.version}`, kind: 'train', recipeId: stored.id, recipeSpec: recipe, seed: recipe.seed, totalSteps: totalSteps(recipe),
  });
  const jobId = await enqueue(db, { kind: 'train', runId: run.id, payload: { recipe }, maxAttempts: 5 });
  return { runId: run.id, jobId, recipe };
}

/** Pause: the worker stops at its next heartbeat, keeping every checkpoint; resumeTraining continues from the last. */
export async function pauseTraining(db: Database, runId: string) {
  const run = await db.prisma.run.findUnique({ where: { id: runId } });
  if (!run) throw new UserError(`run ${runId} not found`, { field: 'runId' });
  if (run.kind !== 'train') throw new UserError(`run ${runId} is a ${run.kind} run; only training runs pause`, { field: 'runId' });
  if (!['queued', 'running'].includes(run.status)) throw new UserError(`run ${runId} is ${run.status}; only a queued or running run can pause`, { field: 'runId' });
  await setRunStatus(db, runId, 'paused', { message: 'pause requested; the worker stops at its next heartbeat and keeps the checkpoints' });
  // Queued jobs are cancelled now, a leased one at its worker's next heartbeat; the worker keeps the run "paused".
  const jobs = await db.prisma.job.findMany({ where: { runId, status: { in: ['queued', 'leased'] } }, select: { id: true } });
  for (const j of jobs) await cancelJob(db, j.id);
  return { status: 'paused' as const };
}

export async function resumeTraining(db: Database, runId: string) {
  const run = await db.prisma.run.findUnique({ where: { id: runId } });
  if (!run) throw new UserError(`run ${runId} not found`, { field: 'runId' });
  if (run.status !== 'paused') throw new UserError(`run ${runId} is ${run.status}; only a paused run resumes`, { field: 'runId' });
  const active = await db.prisma.job.count({ where: { runId, status: 'leased' } });
  if (active) throw new UserError(`run ${runId} is still stopping; try again in a few seconds`, { field: 'runId' });
  const jobId = await enqueue(db, { kind: 'train', runId, payload: { recipe: JSON.parse(run.recipeSpec) }, maxAttempts: 5 });
  await setRunStatus(db, runId, 'queued', { message: 'resumed; continues from the last checkpoint' });
  await appendEvent(db, runId, { type: 'resume', message: 'resume requested' });
  return { status: 'queued' as const, jobId };
}
