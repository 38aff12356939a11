// @postgresql: also on PostgreSQL, because a run's state changes are conditional updates, whose concurrency differs between the databases.
/**
 * The run lifecycle's rules (server/lifecycle.ts), which the Resume button and `toolsmith train --resume` share:
 * what may resume, what attaching to an unfinished job means, and that no second job is ever started.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { UserError } from '../../contracts/errors.ts';
import type { Database } from '../../server/db/client.ts';
import { cancelRun, launchTraining, pauseTraining, resumeTraining } from '../../server/lifecycle.ts';
import { setRunStatus } from '../../server/store/runs.ts';
import { freshDatabase } from '../helpers/db.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
});
afterEach(async () => {
  await fresh.close();
});

const SPEC = { name: 'lifecycle', stages: [{ type: 'sft', name: 'sft', data: { kind: 'generated', n: 8 } }] };
const refused = (re: RegExp) => (e: unknown) => e instanceof UserError && re.test(e.message) && e.field === 'runId';
const jobsOf = (runId: string) => db.prisma.job.findMany({ where: { runId }, orderBy: { createdAt: 'asc' } });

test('a paused run resumes with a new job; a second resume is refused', async () => {
  const { runId } = await launchTraining(db, { spec: SPEC });
  await pauseTraining(db, runId);
  const r = await resumeTraining(db, runId);
  assert.equal(r.attached, false);
  assert.equal((await db.prisma.run.findUniqueOrThrow({ where: { id: runId } })).status, 'queued');
  assert.deepEqual(
    (await jobsOf(runId)).map((j) => j.status),
    ['cancelled', 'queued'],
  );
  await assert.rejects(resumeTraining(db, runId), refused(/only a paused run resumes/));
  assert.equal((await jobsOf(runId)).length, 2, 'no second job');
});

test('a cancelled run resumes (its checkpoints are kept); finished runs do not', async () => {
  const { runId } = await launchTraining(db, { spec: SPEC });
  assert.deepEqual(await cancelRun(db, runId), { status: 'cancelled' });
  const r = await resumeTraining(db, runId);
  assert.equal(r.status, 'queued');
  const run = await db.prisma.run.findUniqueOrThrow({ where: { id: runId } });
  assert.equal(run.status, 'queued');
  assert.equal(run.finishedAt, null, 'a resumed run is no longer finished');
  for (const status of ['succeeded', 'failed'] as const) {
    const other = (await launchTraining(db, { spec: SPEC })).runId;
    await db.prisma.job.updateMany({ where: { runId: other }, data: { status } });
    await setRunStatus(db, other, status);
    await assert.rejects(resumeTraining(db, other, { attach: true }), refused(new RegExp(`already ${status}`)));
  }
});

test('an interrupted run (its job still queued or leased) is attached to, never given a second job', async () => {
  const { runId, jobId } = await launchTraining(db, { spec: SPEC });
  await assert.rejects(resumeTraining(db, runId), refused(/is queued \(its job is queued\)/));
  const r = await resumeTraining(db, runId, { attach: true });
  assert.deepEqual(r, { status: 'queued', jobId, attached: true });
  // A worker that died holding the lease: the CLI attaches to that job and takes it over once the lease runs out.
  await db.prisma.job.update({
    where: { id: jobId },
    data: { status: 'leased', leaseOwner: 'dead-worker', leaseExpiresAt: Date.now() - 1 },
  });
  await setRunStatus(db, runId, 'running');
  assert.equal((await resumeTraining(db, runId, { attach: true })).jobId, jobId);
  assert.equal((await jobsOf(runId)).length, 1);
});

test('a paused run whose worker has not stopped yet is "still stopping"', async () => {
  const { runId, jobId } = await launchTraining(db, { spec: SPEC });
  await db.prisma.job.update({
    where: { id: jobId },
    data: { status: 'leased', leaseOwner: 'w', leaseExpiresAt: Date.now() + 60_000 },
  });
  await pauseTraining(db, runId);
  await assert.rejects(resumeTraining(db, runId, { attach: true }), refused(/still stopping/));
});

test('only training runs pause or resume; an unknown run is named', async () => {
  const { runId } = await launchTraining(db, { spec: SPEC });
  await db.prisma.run.update({ where: { id: runId }, data: { kind: 'eval' } });
  await assert.rejects(resumeTraining(db, runId), refused(/only training runs resume/));
  await assert.rejects(pauseTraining(db, runId), refused(/only training runs pause/));
  await assert.rejects(resumeTraining(db, 'run_missing'), refused(/run run_missing not found/));
});
