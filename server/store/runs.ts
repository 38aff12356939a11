import { isFinished, type RunKind, type RunStatus } from '../../contracts/runs.ts';
import type { Database } from '../db/client.ts';
import { UserError } from '../../contracts/errors.ts';
import { newId } from '../ids.ts';
import { appendEvent, isUniqueViolation } from './events.ts';
import { inTransaction } from '../db/batch.ts';
import { codeVersion } from '../version.ts';

export interface NewRun {
  name: string;
  kind: RunKind;
  recipeId?: string | null;
  recipeSpec?: unknown;
  seed?: number;
  totalSteps?: number | null;
  createdBy?: string | null;
}

export async function createRun(db: Database, input: NewRun) {
  return db.prisma.run.create({
    data: {
      id: newId('run_'),
      name: input.name,
      kind: input.kind,
      recipeId: input.recipeId ?? null,
      recipeSpec: JSON.stringify(input.recipeSpec ?? {}),
      createdBy: input.createdBy ?? null,
      seed: input.seed ?? Math.floor(Math.random() * 2 ** 31),
      codeVersion: codeVersion(),
      status: 'queued',
      totalSteps: input.totalSteps ?? null,
    },
  });
}

/**
 * Move a run to a new status and write the change to its event stream, in one transaction: whoever sees the new
 * status also sees its event, and a process that dies between the two leaves neither.
 */
export async function setRunStatus(
  db: Database,
  runId: string,
  status: RunStatus,
  opts: { error?: string | null; message?: string } = {},
) {
  const now = new Date();
  const event = {
    type: 'status' as const,
    level: status === 'failed' ? ('error' as const) : ('info' as const),
    message: opts.message ?? (opts.error ? `run ${status}: ${opts.error}` : `run ${status}`),
    data: { status, error: opts.error ?? null },
  };
  for (let attempt = 0; ; attempt++) {
    try {
      await inTransaction(db, async (tx) => {
        await tx.run.update({
          where: { id: runId },
          data: {
            status,
            updatedAt: now,
            ...(status === 'running' ? { startedAt: now, finishedAt: null, error: null } : {}),
            ...(isFinished(status) ? { finishedAt: now } : {}),
            ...(opts.error !== undefined ? { error: opts.error } : {}),
          },
        });
        await appendEvent(db, runId, event, tx);
      });
      return;
    } catch (e) {
      // Another writer took the event's seq first (PostgreSQL; SQLite's write lock serialises): the whole change again.
      if (!isUniqueViolation(e) || attempt >= 50) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 5 * (attempt + 1)));
    }
  }
}

export async function setRunProgress(
  db: Database,
  runId: string,
  progress: { stage?: number; stageName?: string; step?: number; totalSteps?: number },
) {
  await db.prisma.run.update({ where: { id: runId }, data: { ...progress, updatedAt: new Date() } });
}

/** A run's step (null when there is no such run). */
export function getRunProgress(db: Database, runId: string) {
  return db.prisma.run.findUnique({ where: { id: runId }, select: { step: true } });
}

/** A run by id (null when there is none). */
export function getRun(db: Database, runId: string) {
  return db.prisma.run.findUnique({ where: { id: runId } });
}

/** The newest `take` runs of a kind and name (a catalogue fetch or add in progress is one of them). */
export function latestRunsNamed(db: Database, kind: string, name: string, take: number) {
  return db.prisma.run.findMany({ where: { kind, name }, orderBy: { createdAt: 'desc' }, take });
}

/** A run by id; a UserError naming the field when there is none. */
export async function getRunOrThrow(db: Database, runId: string) {
  const run = await getRun(db, runId);
  if (!run) throw new UserError(`run ${runId} not found`, { field: 'runId' });
  return run;
}

/** Whether a run with this id exists (reads the primary key only). */
export async function runExists(db: Database, runId: string): Promise<boolean> {
  return (await db.prisma.run.findUnique({ where: { id: runId }, select: { id: true } })) !== null;
}

/** A run's status, or null when there is none. */
export async function getRunStatus(db: Database, runId: string): Promise<string | null> {
  const run = await db.prisma.run.findUnique({ where: { id: runId }, select: { status: true } });
  return run?.status ?? null;
}

/** Runs, newest first, optionally of one kind, without their (large) recipe spec. */
export function listRuns(db: Database, opts: { kind?: string; limit: number }) {
  return db.prisma.run.findMany({
    where: opts.kind ? { kind: opts.kind } : {},
    orderBy: { createdAt: 'desc' },
    take: opts.limit,
    omit: { recipeSpec: true },
  });
}

/** A run by id without its recipe spec (null when there is none). */
export function getRunWithoutSpec(db: Database, runId: string) {
  return db.prisma.run.findUnique({ where: { id: runId }, omit: { recipeSpec: true } });
}

/** The runs with these ids, in no particular order (missing ids are absent). */
export function getRunsByIds(db: Database, runIds: string[]) {
  return db.prisma.run.findMany({ where: { id: { in: runIds } } });
}

/** What a share link shows of a run: every field but recipeId and updatedAt; null when there is none. */
export function getRunPublicSummary(db: Database, runId: string) {
  return db.prisma.run.findUnique({
    where: { id: runId },
    select: {
      id: true,
      name: true,
      kind: true,
      status: true,
      stage: true,
      stageName: true,
      step: true,
      totalSteps: true,
      seed: true,
      codeVersion: true,
      recipeSpec: true,
      error: true,
      createdAt: true,
      startedAt: true,
      finishedAt: true,
    },
  });
}

/** Back to the queue (a resumed run): no longer finished. */
export async function requeueRun(db: Database, runId: string, message: string) {
  await db.prisma.run.update({ where: { id: runId }, data: { finishedAt: null } });
  await setRunStatus(db, runId, 'queued', { message });
}

/** Who launched a run (null: a system run or one from before sign-in); undefined when there is no such run. */
export async function getRunCreator(db: Database, runId: string): Promise<string | null | undefined> {
  const r = await db.prisma.run.findUnique({ where: { id: runId }, select: { createdBy: true } });
  return r ? r.createdBy : undefined;
}
