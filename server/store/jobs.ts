import { JOB_PAYLOADS, isJobKind, type JobKind, type JobPayloadInput } from '../../contracts/jobs.ts';
import { parseUserInput } from '../../contracts/errors.ts';
import type { Database } from '../db/client.ts';
import { newId } from '../ids.ts';

/**
 * Durable job queue in the database. A worker leases a job for `leaseMs`, renews the lease by heartbeat, then
 * completes or fails it. Every state change after the lease is fenced on (id, leaseOwner), so a worker that
 * lost its lease (it stalled, or died and came back) cannot overwrite the job's new owner.
 */
export type JobStatus = 'queued' | 'leased' | 'succeeded' | 'failed' | 'cancelled';

export interface Job {
  id: string;
  kind: string;
  runId: string | null;
  payload: unknown;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  cancelRequested: boolean;
}

interface EnqueueOptions {
  runId?: string | null;
  priority?: number;
  maxAttempts?: number;
  delayMs?: number;
}
/**
 * A known kind's payload is typed and checked by its schema (contracts/jobs.ts) before it is stored; other kinds
 * (the queue's own tests) pass through untouched.
 */
export type EnqueueInput<K extends string = string> = EnqueueOptions &
  (K extends JobKind
    ? { kind: K } & ({} extends JobPayloadInput<K> ? { payload?: JobPayloadInput<K> } : { payload: JobPayloadInput<K> })
    : { kind: K; payload?: unknown });

export async function enqueue<K extends string>(db: Database, input: EnqueueInput<K>): Promise<string> {
  const now = Date.now();
  if (isJobKind(input.kind))
    parseUserInput<unknown>(JOB_PAYLOADS[input.kind], input.payload ?? {}, `${input.kind} job payload`);
  const job = await db.prisma.job.create({
    data: {
      id: newId('job_'),
      kind: input.kind,
      runId: input.runId ?? null,
      payload: JSON.stringify(input.payload ?? {}),
      status: 'queued',
      priority: input.priority ?? 0,
      maxAttempts: input.maxAttempts ?? 3,
      runAfter: now + (input.delayMs ?? 0),
      createdAt: now,
    },
  });
  return job.id;
}

/** Jobs whose lease ran out on their last allowed attempt: the worker died every time. They fail here. */
export async function reapExhausted(
  db: Database,
  now = Date.now(),
): Promise<{ id: string; runId: string | null; attempts: number }[]> {
  const rows = await db.query<{ id: string; runId: string | null; attempts: number }>(
    `UPDATE "Job" SET "status" = 'failed', "leaseOwner" = NULL, "finishedAt" = ?,
       "error" = 'lease expired on attempt ' || CAST("attempts" AS TEXT) || ' of ' || CAST("maxAttempts" AS TEXT) || ' (the worker stopped heartbeating)'
     WHERE "status" = 'leased' AND "leaseExpiresAt" < ? AND "attempts" >= "maxAttempts"
     RETURNING "id", "runId", "attempts"`,
    [now, now],
  );
  return rows.map((r) => ({ ...r, attempts: Number(r.attempts) }));
}

/**
 * Take the next runnable job: queued and due, or leased with an expired lease (its worker died). On PostgreSQL
 * FOR UPDATE SKIP LOCKED lets many workers pull at once without blocking or taking the same row; on SQLite the
 * single UPDATE is atomic under the database's write lock.
 */
export async function lease(
  db: Database,
  owner: string,
  leaseMs: number,
  kinds?: string[],
  ids?: string[],
  /** Kinds this lease never takes (a worker's main lane leaves its side lanes' kinds: workers/lanes.ts). */
  exceptKinds?: string[],
): Promise<Job | null> {
  const now = Date.now();
  const kindFilter =
    (kinds && kinds.length > 0 ? `AND "kind" IN (${kinds.map(() => '?').join(', ')})` : '') +
    (exceptKinds && exceptKinds.length > 0 ? ` AND "kind" NOT IN (${exceptKinds.map(() => '?').join(', ')})` : '') +
    (ids && ids.length > 0 ? ` AND "id" IN (${ids.map(() => '?').join(', ')})` : '');
  const lock = db.dialect === 'postgresql' ? 'FOR UPDATE SKIP LOCKED' : '';
  const rows = await db.query<{ id: string }>(
    `UPDATE "Job" SET "status" = 'leased', "leaseOwner" = ?, "leaseExpiresAt" = ?, "heartbeatAt" = ?, "attempts" = "attempts" + 1,
       "startedAt" = COALESCE("startedAt", ?)
     WHERE "id" = (
       SELECT "id" FROM "Job"
       WHERE (("status" = 'queued' AND "runAfter" <= ?) OR ("status" = 'leased' AND "leaseExpiresAt" < ? AND "attempts" < "maxAttempts"))
         ${kindFilter}
       ORDER BY "priority" DESC, "runAfter" ASC, "id" ASC
       LIMIT 1 ${lock})
     RETURNING "id"`,
    [owner, now + leaseMs, now, now, now, now, ...(kinds ?? []), ...(exceptKinds ?? []), ...(ids ?? [])],
  );
  if (rows.length === 0) return null;
  return getJob(db, rows[0].id);
}

export async function getJob(db: Database, id: string): Promise<Job | null> {
  const j = await db.prisma.job.findUnique({ where: { id } });
  if (!j) return null;
  return {
    id: j.id,
    kind: j.kind,
    runId: j.runId,
    payload: JSON.parse(j.payload),
    status: j.status as JobStatus,
    attempts: j.attempts,
    maxAttempts: j.maxAttempts,
    leaseOwner: j.leaseOwner,
    leaseExpiresAt: j.leaseExpiresAt,
    cancelRequested: j.cancelRequested,
  };
}

/** Extend the lease. Returns whether we still own it and whether someone asked to cancel. */
export async function heartbeat(
  db: Database,
  id: string,
  owner: string,
  leaseMs: number,
): Promise<{ owned: boolean; cancelRequested: boolean }> {
  const now = Date.now();
  const n = await db.prisma.job.updateMany({
    where: { id, leaseOwner: owner, status: 'leased' },
    data: { leaseExpiresAt: now + leaseMs, heartbeatAt: now },
  });
  if (n.count === 0) return { owned: false, cancelRequested: false };
  const j = await db.prisma.job.findUnique({ where: { id }, select: { cancelRequested: true } });
  return { owned: true, cancelRequested: Boolean(j?.cancelRequested) };
}

export async function complete(db: Database, id: string, owner: string, result?: unknown): Promise<boolean> {
  const n = await db.prisma.job.updateMany({
    where: { id, leaseOwner: owner, status: 'leased' },
    data: {
      status: 'succeeded',
      result: JSON.stringify(result ?? null),
      leaseOwner: null,
      leaseExpiresAt: null,
      finishedAt: Date.now(),
      error: null,
    },
  });
  return n.count === 1;
}

/**
 * Record a failure. With attempts left (and a retryable error) the job goes back to the queue after an
 * exponential back-off; otherwise it fails for good. Returns what happened, or null if we no longer own it.
 */
export async function fail(
  db: Database,
  id: string,
  owner: string,
  error: string,
  opts: { retryable?: boolean } = {},
): Promise<'retry' | 'failed' | null> {
  const job = await getJob(db, id);
  if (!job || job.leaseOwner !== owner || job.status !== 'leased') return null;
  const retry = (opts.retryable ?? true) && job.attempts < job.maxAttempts && !job.cancelRequested;
  const now = Date.now();
  const n = await db.prisma.job.updateMany({
    where: { id, leaseOwner: owner, status: 'leased' },
    data: retry
      ? {
          status: 'queued',
          leaseOwner: null,
          leaseExpiresAt: null,
          error,
          runAfter: now + Math.min(60000, 1000 * 2 ** (job.attempts - 1)),
        }
      : { status: 'failed', leaseOwner: null, leaseExpiresAt: null, error, finishedAt: now },
  });
  if (n.count === 0) return null;
  return retry ? 'retry' : 'failed';
}

/** Give the job back untouched (clean shutdown): it does not use up an attempt. */
export async function release(db: Database, id: string, owner: string): Promise<boolean> {
  const n = await db.prisma.job.updateMany({
    where: { id, leaseOwner: owner, status: 'leased' },
    data: {
      status: 'queued',
      leaseOwner: null,
      leaseExpiresAt: null,
      attempts: { decrement: 1 },
      runAfter: Date.now(),
    },
  });
  return n.count === 1;
}

/** Mark a job the worker stopped on request as cancelled. */
export async function markCancelled(db: Database, id: string, owner: string): Promise<boolean> {
  const n = await db.prisma.job.updateMany({
    where: { id, leaseOwner: owner, status: 'leased' },
    data: { status: 'cancelled', leaseOwner: null, leaseExpiresAt: null, finishedAt: Date.now() },
  });
  return n.count === 1;
}

/**
 * Cancel: a queued job is cancelled at once; a leased one is flagged, and its worker stops it at the next
 * heartbeat. Returns the job's state after the call.
 */
export async function cancel(db: Database, id: string): Promise<'cancelled' | 'cancelling' | 'finished' | 'missing'> {
  const queued = await db.prisma.job.updateMany({
    where: { id, status: 'queued' },
    data: { status: 'cancelled', finishedAt: Date.now(), cancelRequested: true },
  });
  if (queued.count === 1) return 'cancelled';
  const leased = await db.prisma.job.updateMany({ where: { id, status: 'leased' }, data: { cancelRequested: true } });
  if (leased.count === 1) return 'cancelling';
  const job = await db.prisma.job.findUnique({ where: { id }, select: { id: true } });
  return job ? 'finished' : 'missing';
}

/** A run's jobs that are still queued or leased (at most one in practice), oldest first. */
export async function unfinishedJobs(
  db: Database,
  runId: string,
): Promise<{ id: string; status: 'queued' | 'leased' }[]> {
  const rows = await db.prisma.job.findMany({
    where: { runId, status: { in: ['queued', 'leased'] } },
    select: { id: true, status: true },
    orderBy: { createdAt: 'asc' },
  });
  return rows as { id: string; status: 'queued' | 'leased' }[];
}

/** The most recent finished job of a kind (the last diagnostics report). */
export function latestFinishedJob(db: Database, kind: string) {
  return db.prisma.job.findFirst({
    where: { kind, status: { in: ['succeeded', 'failed'] } },
    orderBy: { finishedAt: 'desc' },
  });
}

/** The payload of a run's most recent job of `kind` (what a resume of that run repeats), or null. */
export async function lastRunPayload(db: Database, runId: string, kind: string): Promise<unknown> {
  const j = await db.prisma.job.findFirst({ where: { runId, kind }, orderBy: { createdAt: 'desc' } });
  return j ? JSON.parse(j.payload) : null;
}

/** Take a job off the queue, whatever its state, because its caller runs it itself: cancelled, `reason` as its error. */
export async function withdrawJob(db: Database, id: string, reason: string): Promise<void> {
  await db.prisma.job.update({ where: { id }, data: { status: 'cancelled', error: reason, finishedAt: Date.now() } });
}

/** The jobs workers hold right now (leased): who holds each, its kind and run, and the last heartbeat. */
export function listLeasedJobs(db: Database) {
  return db.prisma.job.findMany({
    where: { status: 'leased' },
    select: { leaseOwner: true, kind: true, runId: true, heartbeatAt: true },
  });
}
