// @postgresql: also on PostgreSQL, because workers lease and renew jobs through dialect-specific SQL (server/store/jobs.ts).
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshDatabase } from '../helpers/db.ts';
import { killAll, outputs, spawnWorker, waitFor, waitReady, type Proc } from '../helpers/proc.ts';
import type { Database } from '../../server/db/client.ts';
import { enqueue, getJob, type Job } from '../../server/store/jobs.ts';
import { readEvents } from '../../server/store/events.ts';
import type { RunEvent, DiagnosticsReport } from '../../contracts/events.ts';
import { readSeries } from '../../server/store/metrics.ts';
import { createRun } from '../../server/store/runs.ts';
import { cancelRun, launchDiagnostics, setImportFollowing } from '../../server/lifecycle.ts';
import { launchImport } from '../../server/imports/launch.ts';
import { listMigrations } from '../../server/db/migrate.ts';
import { Worker, type WorkerOptions } from '../../workers/worker.ts';
import { checks as diagnosticChecks } from '../../workers/diagnostics/checks.ts';
import { checkDeps } from '../../workers/handlers/diagnostics.ts';

// Real `toolsmith worker` processes against a real database, with a 2 s lease and a 0.5 s heartbeat.
after(killAll);

type Fresh = Awaited<ReturnType<typeof freshDatabase>>;

async function allEvents(db: Database, runId: string): Promise<RunEvent[]> {
  return readEvents(db, runId, 0, 100000);
}

const counts = (events: RunEvent[]) =>
  events.filter((e) => /^count \d+$/.test(e.message)) as (RunEvent & {
    data: { i: number; attempt: number; worker: string };
  })[];
const statuses = (events: RunEvent[]) => events.filter((e) => e.type === 'status');

async function getRun(db: Database, id: string) {
  return db.prisma.run.findUniqueOrThrow({ where: { id } });
}

/** Wait until the job reaches `status`; any other final status fails at once, with the workers' logs. */
async function waitJob(
  db: Database,
  id: string,
  status: Job['status'],
  procs: Proc[],
  timeoutMs = 60_000,
): Promise<Job> {
  return waitFor(
    `job ${id} to be ${status}`,
    async () => {
      const j = await getJob(db, id);
      if (j && j.status === status) return j;
      if (j && ['succeeded', 'failed', 'cancelled'].includes(j.status)) {
        throw new Error(
          `job ${id} ended ${j.status} instead of ${status}: ${JSON.stringify(await db.prisma.job.findUnique({ where: { id } }))}\n${outputs(procs)}`,
        );
      }
      return null;
    },
    { timeoutMs, intervalMs: 50, detail: () => outputs(procs) },
  );
}

/** Wait until the job is leased and its handler has logged at least `n` count events. */
async function waitRunning(db: Database, jobId: string, runId: string, n: number, procs: Proc[]): Promise<Job> {
  return waitFor(
    `job ${jobId} to be leased with ${n} steps done`,
    async () => {
      const j = await getJob(db, jobId);
      if (!j || j.status !== 'leased') return null;
      return counts(await allEvents(db, runId)).length >= n ? j : null;
    },
    { timeoutMs: 60_000, detail: () => outputs(procs) },
  );
}

function assertGapless(events: RunEvent[]) {
  assert.deepEqual(
    events.map((e) => e.seq),
    events.map((_, i) => i + 1),
    'event seqs are 1..N',
  );
}

describe('worker failover and shutdown', () => {
  let f: Fresh;
  afterEach(async () => {
    await killAll();
    await f?.close();
  });

  test('(a) a worker SIGKILLed mid-job: another takes the job over after the lease expires and finishes it', async () => {
    f = await freshDatabase();
    const { db } = f;
    const victim = spawnWorker(f.url, 'wa-1');
    await waitReady(victim);
    const run = await createRun(db, { name: 'failover', kind: 'test' });
    const STEPS = 25;
    // The victim gets steps of an hour, so it is killed mid-job by construction rather than by racing a short job;
    // once it is dead the steps are made short for the survivor (which reads the payload when it leases the job).
    const jobId = await enqueue(db, {
      kind: 'test.count',
      runId: run.id,
      payload: { steps: STEPS, stepMs: 3_600_000 },
      maxAttempts: 3,
    });
    const leased = await waitRunning(db, jobId, run.id, 1, [victim]);
    assert.equal(leased.attempts, 1);
    assert.equal(leased.leaseOwner, 'wa-1');
    victim.child.kill('SIGKILL');
    const exit = await victim.exited;
    assert.equal(exit.signal, 'SIGKILL');
    const orphaned = await db.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    assert.deepEqual([orphaned.status, orphaned.leaseOwner], ['leased', 'wa-1'], 'the dead worker still holds the job');
    await db.prisma.job.update({
      where: { id: jobId },
      data: { payload: JSON.stringify({ steps: STEPS, stepMs: 100 }) },
    });

    // The survivor starts now, so one worker lives at a time: a live worker that was only slow to heartbeat (a busy
    // machine) never loses its lease to another here. The job stays leased by the dead worker until its lease runs
    // out; then the survivor takes it.
    const survivor = spawnWorker(f.url, 'wa-2');
    const w = [victim, survivor];
    const done = await waitJob(db, jobId, 'succeeded', w);
    assert.equal(done.attempts, 2);
    const row = await db.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    assert.deepEqual(JSON.parse(row.result!), { counted: STEPS, worker: 'wa-2' });
    assert.equal(row.leaseOwner, null);

    const r = await waitFor('run to be succeeded', async () =>
      (await getRun(db, run.id)).status === 'succeeded' ? getRun(db, run.id) : null,
    );
    assert.equal(r.error, null);
    assert.ok(r.finishedAt);

    const events = await allEvents(db, run.id);
    assertGapless(events);
    const c = counts(events);
    const first = c.filter((e) => e.data.attempt === 1);
    const second = c.filter((e) => e.data.attempt === 2);
    assert.ok(first.length >= 1 && first.length < STEPS, `attempt 1 was cut short (${first.length} steps)`);
    assert.ok(first.every((e) => e.data.worker === 'wa-1'));
    assert.deepEqual(
      second.map((e) => e.data.i),
      Array.from({ length: STEPS }, (_, i) => i),
      'attempt 2 ran every step',
    );
    assert.ok(second.every((e) => e.data.worker === 'wa-2'));
    assert.ok(first[first.length - 1].seq < second[0].seq, 'attempt 2 began after attempt 1 stopped');
    assert.equal(c.length, first.length + second.length);
    const st = statuses(events);
    const messages = st.map((e) => e.message);
    assert.ok(messages.includes('worker wa-1 started test.count (attempt 1/3)'), messages.join('\n'));
    const takeover = st.find((e) => e.message === 'worker wa-2 started test.count (attempt 2/3)');
    assert.ok(takeover, messages.join('\n'));
    // Not before the dead worker's lease ran out (its last heartbeat set leaseExpiresAt; a later one can only move
    // it on, never back).
    assert.ok(
      takeover.time >= orphaned.leaseExpiresAt!,
      `taken over ${orphaned.leaseExpiresAt! - takeover.time} ms before the lease ran out`,
    );
    assert.equal(messages[messages.length - 1], 'run succeeded');

    // Metrics re-logged by the second attempt replace the first attempt's: one point per step.
    assert.deepEqual(
      (await readSeries(db, run.id, 'count')).map((p) => [p.step, p.value]),
      Array.from({ length: STEPS }, (_, i) => [i, i]),
    );
    assert.ok(survivor.alive(), 'the survivor is still running');
  });

  test('(b) SIGTERM mid-job: the job is released without using an attempt, the worker exits 0, another finishes it', async () => {
    f = await freshDatabase();
    const { db } = f;
    const w1 = spawnWorker(f.url, 'wb-1', { graceSeconds: 5 });
    await waitReady(w1);
    const run = await createRun(db, { name: 'sigterm', kind: 'test' });
    // Far more steps than the test waits for, so the SIGTERM comes mid-job by construction (not by racing a 1.5 s
    // job); the steps are cut to 15 for wb-2 below.
    const jobId = await enqueue(db, {
      kind: 'test.count',
      runId: run.id,
      payload: { steps: 100_000, stepMs: 100 },
      maxAttempts: 1,
    });
    await waitRunning(db, jobId, run.id, 2, [w1]);

    w1.child.kill('SIGTERM');
    // Bounds the wait for an exit that must come (the handler stops at its next step, 0.1 s).
    const exit = await waitFor('wb-1 to exit', async () => (w1.alive() ? null : w1.exited), {
      timeoutMs: 60_000,
      detail: () => outputs([w1]),
    });
    assert.deepEqual(exit, { code: 0, signal: null }, outputs([w1]));
    assert.match(w1.output(), /SIGTERM: stopping/);

    const released = await db.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    assert.equal(released.status, 'queued');
    assert.equal(released.attempts, 0, 'the released attempt is given back');
    assert.equal(released.leaseOwner, null);
    assert.equal(released.error, null);
    const r1 = await getRun(db, run.id);
    assert.equal(r1.status, 'queued');
    assert.ok(
      statuses(await allEvents(db, run.id)).some(
        (e) => e.message === 'worker wb-1 shut down; job released for another worker',
      ),
    );

    // Its only attempt was not used up, so a new worker can still run it.
    await db.prisma.job.update({ where: { id: jobId }, data: { payload: JSON.stringify({ steps: 15, stepMs: 100 }) } });
    const w2 = spawnWorker(f.url, 'wb-2');
    const done = await waitJob(db, jobId, 'succeeded', [w1, w2]);
    assert.equal(done.attempts, 1);
    assert.deepEqual(JSON.parse((await db.prisma.job.findUniqueOrThrow({ where: { id: jobId } })).result!), {
      counted: 15,
      worker: 'wb-2',
    });
    await waitFor('run to be succeeded', async () => (await getRun(db, run.id)).status === 'succeeded');
    const c = counts(await allEvents(db, run.id));
    assert.ok(c.some((e) => e.data.worker === 'wb-1') && c.some((e) => e.data.worker === 'wb-2'));
    assert.ok(
      c.every((e) => e.data.attempt === 1),
      'both runs of the job were attempt 1',
    );
  });

  test('(b) SIGTERM with a handler that ignores it: released after the grace period, and the worker exits without waiting for the handler', async () => {
    f = await freshDatabase();
    const { db } = f;
    const w1 = spawnWorker(f.url, 'wb-3', { graceSeconds: 0.5 });
    await waitReady(w1);
    const run = await createRun(db, { name: 'stuck', kind: 'test' });
    // One step of an hour: the handler only looks at its signal between steps.
    const jobId = await enqueue(db, {
      kind: 'test.count',
      runId: run.id,
      payload: { steps: 2, stepMs: 3_600_000 },
      maxAttempts: 2,
    });
    await waitRunning(db, jobId, run.id, 1, [w1]);

    w1.child.kill('SIGTERM');
    // The exit comes long before the hour the step would take: the grace period bounds the shutdown. (The bound only
    // fails a worker that waits for its handler; it measures nothing.)
    const exit = await waitFor('wb-3 to exit', async () => (w1.alive() ? null : w1.exited), {
      timeoutMs: 120_000,
      detail: () => outputs([w1]),
    });
    assert.deepEqual(exit, { code: 0, signal: null }, outputs([w1]));
    assert.match(w1.output(), /did not stop within the grace period; releasing it/);
    const released = await db.prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    assert.equal(released.status, 'queued');
    assert.equal(released.attempts, 0);
    assert.equal(released.leaseOwner, null);
    assert.equal((await getRun(db, run.id)).status, 'queued');
  });
});

describe('one worker running failing, crashing, diagnostic and cancelled jobs', () => {
  let f: Fresh;
  let w: Proc;
  let db: Database;
  before(async () => {
    f = await freshDatabase();
    db = f.db;
    w = spawnWorker(f.url, 'wc-1');
    await waitReady(w);
  });
  after(async () => {
    await killAll();
    await f?.close();
  });

  /** The worker is alive and still does work: a short job succeeds on it. */
  async function assertWorkerHealthy() {
    assert.ok(w.alive(), `the worker died:\n${outputs([w])}`);
    const run = await createRun(db, { name: 'follow-up', kind: 'test' });
    const id = await enqueue(db, { kind: 'test.count', runId: run.id, payload: { steps: 2, stepMs: 10 } });
    await waitJob(db, id, 'succeeded', [w]);
    assert.deepEqual(JSON.parse((await db.prisma.job.findUniqueOrThrow({ where: { id } })).result!), {
      counted: 2,
      worker: 'wc-1',
    });
    await waitFor('follow-up run to be succeeded', async () => (await getRun(db, run.id)).status === 'succeeded');
    assert.ok(w.alive());
  }

  test('(c) a handler that throws: retried, then failed; the run shows the error; the worker carries on', async () => {
    const run = await createRun(db, { name: 'throws', kind: 'test' });
    const id = await enqueue(db, {
      kind: 'test.throw',
      runId: run.id,
      payload: { message: 'kaboom 1234' },
      maxAttempts: 2,
    });
    const failed = await waitJob(db, id, 'failed', [w]);
    assert.equal(failed.attempts, 2);
    const row = await db.prisma.job.findUniqueOrThrow({ where: { id } });
    assert.equal(row.error, 'kaboom 1234');
    assert.equal(row.result, null);
    const r = await waitFor('run to be failed', async () =>
      (await getRun(db, run.id)).status === 'failed' ? getRun(db, run.id) : null,
    );
    assert.equal(r.error, 'kaboom 1234');

    const events = await allEvents(db, run.id);
    assertGapless(events);
    const msgs = events.map((e) => e.message);
    assert.ok(msgs.includes('worker wc-1 started test.throw (attempt 1/2)'), msgs.join('\n'));
    assert.ok(msgs.includes('attempt 1/2 failed: kaboom 1234; will retry'), msgs.join('\n'));
    assert.ok(msgs.includes('waiting to retry'), msgs.join('\n'));
    assert.ok(msgs.includes('worker wc-1 started test.throw (attempt 2/2)'), msgs.join('\n'));
    const last = statuses(events).at(-1)!;
    assert.deepEqual(last.data, { status: 'failed', error: 'kaboom 1234' });
    assert.equal(last.level, 'error');
    await assertWorkerHealthy();
  });

  test('(c) a job kind with no handler fails at once, without retries', async () => {
    const run = await createRun(db, { name: 'unknown kind', kind: 'test' });
    const id = await enqueue(db, { kind: 'test.nope', runId: run.id, maxAttempts: 3 });
    const failed = await waitJob(db, id, 'failed', [w]);
    assert.equal(failed.attempts, 1);
    const row = await db.prisma.job.findUniqueOrThrow({ where: { id } });
    assert.match(row.error!, /no handler for job kind "test\.nope"/);
    const r = await waitFor('run to be failed', async () =>
      (await getRun(db, run.id)).status === 'failed' ? getRun(db, run.id) : null,
    );
    assert.match(r.error!, /no handler for job kind "test\.nope"/);
    await assertWorkerHealthy();
  });

  test("(d) an uncaught exception from a handler's timer fails the job, not the worker", async () => {
    const run = await createRun(db, { name: 'uncaught', kind: 'test' });
    const id = await enqueue(db, {
      kind: 'test.throw',
      runId: run.id,
      payload: { message: 'escaped 5678', uncaught: true },
      maxAttempts: 1,
    });
    await waitJob(db, id, 'failed', [w]);
    const row = await db.prisma.job.findUniqueOrThrow({ where: { id } });
    assert.equal(row.error, 'escaped 5678');
    assert.equal(row.attempts, 1);
    const r = await waitFor('run to be failed', async () =>
      (await getRun(db, run.id)).status === 'failed' ? getRun(db, run.id) : null,
    );
    assert.equal(r.error, 'escaped 5678');
    assert.match(w.output(), /uncaught exception: escaped 5678 \(failing the job it came from\)/);
    await assertWorkerHealthy();
  });

  test("(c2) a payload that fails its kind's schema (written around enqueue) fails at once, naming the field", async () => {
    const run = await createRun(db, { name: 'bad payload', kind: 'test' });
    const id = 'job_badpayload';
    await db.prisma.job.create({
      data: {
        id,
        kind: 'test.count',
        runId: run.id,
        payload: JSON.stringify({ steps: 'many' }),
        status: 'queued',
        priority: 0,
        maxAttempts: 3,
        runAfter: 0,
        createdAt: Date.now(),
      },
    });
    const failed = await waitJob(db, id, 'failed', [w]);
    assert.equal(failed.attempts, 1);
    assert.match(
      (await db.prisma.job.findUniqueOrThrow({ where: { id } })).error!,
      /bad test\.count job payload: steps: /,
    );
    await assertWorkerHealthy();
  });

  test('(e) the diagnostics job end to end: a report with every check, and a check_ms point per check', async () => {
    const { runId, jobId } = await launchDiagnostics(db);
    const job = await waitJob(db, jobId, 'succeeded', [w], 90000);
    assert.equal(job.attempts, 1);
    const r = await waitFor('diagnostics run to be succeeded', async () =>
      (await getRun(db, runId)).status === 'succeeded' ? getRun(db, runId) : null,
    );
    const report = JSON.parse(
      (await db.prisma.job.findUniqueOrThrow({ where: { id: jobId } })).result!,
    ) as DiagnosticsReport;

    const names = diagnosticChecks(db, checkDeps).map((c) => c.name);
    assert.deepEqual(
      report.checks.map((c) => c.name),
      names,
    );
    for (const c of report.checks) {
      assert.ok(['ok', 'warn', 'fail'].includes(c.status), `${c.name}: ${c.status}`);
      assert.equal(typeof c.detail, 'string');
      assert.ok(c.detail.length > 0, c.name);
      assert.ok(typeof c.ms === 'number' && c.ms >= 0, c.name);
      if (c.status !== 'ok') assert.ok(c.fix, `${c.name} is ${c.status} and says how to fix it`);
    }
    assert.equal(
      report.ok,
      report.checks.every((c) => c.status !== 'fail'),
    );
    const dbCheck = report.checks.find((c) => c.name === 'database')!;
    assert.equal(dbCheck.status, 'ok');
    assert.match(
      dbCheck.detail,
      new RegExp(`^${db.dialect} at .*; ${listMigrations(db.dialect).length} migration\\(s\\) applied`),
    );

    // One point per check, on consecutive steps in check order (whether steps count from 0 or 1).
    const ms = await readSeries(db, runId, 'check_ms');
    assert.equal(ms.length, names.length);
    assert.deepEqual(
      ms.map((p) => p.step),
      names.map((_, i) => ms[0].step + i),
    );
    assert.deepEqual(
      ms.map((p) => p.value),
      report.checks.map((c) => c.ms),
    );
    const ok = await readSeries(db, runId, 'checks_ok');
    assert.deepEqual(
      ok.map((p) => p.value),
      report.checks.map((c) => (c.status === 'ok' ? 1 : 0)),
    );

    const events = await allEvents(db, runId);
    assertGapless(events);
    const diag = events.filter((e) => e.type === 'diagnostic');
    assert.deepEqual(
      diag.map((e) => (e.data as { name: string }).name),
      names,
    );
    assert.equal(r.step, names.length);
    assert.equal(r.error, null);
  });

  test('(f) cancelRun on a running job: the worker stops it and the run ends cancelled', async () => {
    const run = await createRun(db, { name: 'cancel me', kind: 'test' });
    // Far more steps than the test waits for: only the cancel can end this job in time.
    const STEPS = 100_000;
    const id = await enqueue(db, {
      kind: 'test.count',
      runId: run.id,
      payload: { steps: STEPS, stepMs: 100 },
      maxAttempts: 3,
    });
    await waitRunning(db, id, run.id, 2, [w]);
    assert.deepEqual(await cancelRun(db, run.id), { status: 'cancelling' });

    const job = await waitJob(db, id, 'cancelled', [w]);
    assert.equal(job.cancelRequested, true);
    assert.equal(job.attempts, 1, 'a cancelled job is not retried');
    const row = await db.prisma.job.findUniqueOrThrow({ where: { id } });
    assert.equal(row.result, null);
    assert.equal(row.leaseOwner, null);
    assert.ok(row.finishedAt);
    const r = await waitFor('run to be cancelled', async () =>
      (await getRun(db, run.id)).status === 'cancelled' ? getRun(db, run.id) : null,
    );
    assert.ok(r.finishedAt);

    const events = await allEvents(db, run.id);
    assertGapless(events);
    assert.ok(counts(events).length < STEPS, 'the job stopped early');
    const msgs = events.map((e) => e.message);
    assert.ok(msgs.includes('cancel requested; the worker stops at its next heartbeat'), msgs.join('\n'));
    assert.deepEqual(statuses(events).at(-1)?.data, { status: 'cancelled', error: null });
    assert.equal(statuses(events).at(-1)?.message, 'run cancelled on request');
    // Cancelling again reports the final state.
    assert.deepEqual(await cancelRun(db, run.id), { status: 'cancelled' });
    await assertWorkerHealthy();
  });
});

describe('side slots: a followed import never holds the lane a run needs', () => {
  let f: Fresh;
  let tmp: string;
  after(async () => {
    await killAll();
    await f?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('(g) while one worker follows an import, a run, a diagnostics job and a second import all start and end', async () => {
    f = await freshDatabase();
    const db = f.db;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-side-slots-'));
    const verl = (dir: string, lines: number) => {
      fs.mkdirSync(path.join(tmp, dir, 'rollout'), { recursive: true });
      const rows = Array.from({ length: lines }, (_, i) =>
        JSON.stringify({ input: `q${i}`, output: `a${i}`, score: i % 2, step: 1, uid: `g${i}` }),
      );
      fs.writeFileSync(path.join(tmp, dir, 'rollout', '1.jsonl'), `${rows.join('\n')}\n`);
      return path.join(tmp, dir);
    };
    const followed = await launchImport(
      db,
      { path: verl('followed', 2), follow: true },
      { roots: [tmp], enqueue: true },
    );
    // Nothing has taken its job yet: the run says so instead of "running".
    const waiting = await getRun(db, followed.runId);
    assert.equal(waiting.status, 'queued');
    const said = statuses(await allEvents(db, followed.runId)).at(-1)!;
    assert.match(
      said.message,
      /^waiting for a worker's import slot: rollouts \(format from the layout\) from .* \(to follow\)$/,
    );

    const w = spawnWorker(f.url, 'wl-1', { env: { TOOLSMITH_IMPORT_POLL_MS: '200' } });
    await waitReady(w);
    assert.match(
      w.output(),
      /\] ready \(.*kinds: eval, train, test\.count, test\.throw; 4 side slots: diagnostics, import, model\.fetch, dataset\.add\)/,
    );
    const follow = await waitJob(db, followed.jobId!, 'leased', [w]);
    assert.match(follow.leaseOwner ?? '', /^wl-1\/side-[1-4]$/, 'the follow holds a side slot');
    await waitFor('the follow to read the folder', async () =>
      (await db.prisma.trajectory.count({ where: { runId: followed.runId } })) === 2 ? true : null,
    );

    const run = await createRun(db, { name: 'beside the follow', kind: 'test' });
    const counted = await enqueue(db, { kind: 'test.count', runId: run.id, payload: { steps: 3, stepMs: 10 } });
    const diagnostics = await launchDiagnostics(db);
    const second = await launchImport(db, { path: verl('second', 3) }, { roots: [tmp], enqueue: true });
    // Each polls a condition that must come; the bound only stops a hang.
    await waitJob(db, counted, 'succeeded', [w], 180_000);
    assert.equal(
      JSON.parse((await db.prisma.job.findUniqueOrThrow({ where: { id: counted } })).result!).worker,
      'wl-1',
    );
    await waitJob(db, diagnostics.jobId, 'succeeded', [w], 180_000);
    await waitJob(db, second.jobId!, 'succeeded', [w], 180_000);
    assert.equal(await db.prisma.trajectory.count({ where: { runId: second.runId } }), 3);
    assert.equal((await getRun(db, second.runId)).status, 'succeeded');

    // All the while the follow held its slot, and it still follows: a line appended now is read.
    assert.equal((await getJob(db, followed.jobId!))?.status, 'leased');
    assert.equal((await getRun(db, followed.runId)).status, 'running');
    fs.appendFileSync(
      path.join(tmp, 'followed', 'rollout', '1.jsonl'),
      `${JSON.stringify({ input: 'q9', output: 'a9', score: 1, step: 2, uid: 'g9' })}\n`,
    );
    await waitFor('the appended line', async () =>
      (await db.prisma.trajectory.count({ where: { runId: followed.runId } })) === 3 ? true : null,
    );
    // Switched off: the job is cancelled, the run reads as stopped (cancelled), what was read stays.
    await setImportFollowing(db, followed.runId, false);
    await waitJob(db, followed.jobId!, 'cancelled', [w]);
    await waitFor('the followed run to end cancelled', async () =>
      (await getRun(db, followed.runId)).status === 'cancelled' ? true : null,
    );
    assert.equal(await db.prisma.trajectory.count({ where: { runId: followed.runId } }), 3);
    assert.ok(w.alive(), outputs([w]));
  });
});

describe('in-process Worker: shutdown and lost leases', () => {
  let f: Fresh;
  afterEach(async () => {
    await f?.close();
  });

  const opts = (id: string, over: Partial<WorkerOptions> = {}): WorkerOptions => ({
    id,
    leaseMs: 2000,
    heartbeatMs: 100,
    pollMs: 20,
    shutdownGraceMs: 300,
    log: () => {},
    ...over,
  });

  test('stop() while a lease is in flight gives the job back instead of running it', async () => {
    f = await freshDatabase();
    const id = await enqueue(f.db, { kind: 'k', maxAttempts: 1 });
    let ran = false;
    const worker = new Worker(
      f.db,
      {
        k: async () => {
          ran = true;
          return 'ran';
        },
      },
      opts('ip-1'),
    );
    const loop = worker.start();
    await worker.stop();
    await loop;
    assert.equal(ran, false, 'the handler did not run after stop()');
    const row = await f.db.prisma.job.findUniqueOrThrow({ where: { id } });
    assert.equal(row.status, 'queued');
    assert.equal(row.attempts, 0);
    assert.equal(row.leaseOwner, null);
  });

  test('stop() with a handler that ignores its signal returns after the grace period; the late result is refused', async () => {
    f = await freshDatabase();
    const run = await createRun(f.db, { name: 'ignores signal', kind: 'test' });
    const id = await enqueue(f.db, { kind: 'k', runId: run.id, maxAttempts: 1 });
    let finish!: () => void;
    const gate = new Promise<void>((r) => (finish = r));
    let started = false;
    const worker = new Worker(
      f.db,
      {
        k: async () => {
          started = true;
          await gate;
          return 'late';
        },
      },
      opts('ip-2'),
    );
    const loop = worker.start();
    try {
      await waitFor('the handler to start', () => started);
      let stopped = false;
      const stopping = worker.stop().then(() => (stopped = true));
      // A bound on a return that must come (after the 0.3 s grace period), not a measure of it.
      await waitFor('stop() to return while the handler is still running', () => stopped, { timeoutMs: 60_000 });
      await stopping;
      const row = await f.db.prisma.job.findUniqueOrThrow({ where: { id } });
      assert.equal(row.status, 'queued');
      assert.equal(row.attempts, 0);
      assert.equal((await getRun(f.db, run.id)).status, 'queued');
    } finally {
      // The handler finishes after all (and, should the test fail, the worker's loop ends).
      finish();
      await loop;
    }
    // Its late result must not overwrite the released job.
    const row = await f.db.prisma.job.findUniqueOrThrow({ where: { id } });
    assert.equal(row.status, 'queued');
    assert.equal(row.result, null);
  });

  test('a worker whose lease is taken stops its handler and writes nothing', async () => {
    f = await freshDatabase();
    const id = await enqueue(f.db, { kind: 'k', maxAttempts: 3 });
    let reason: unknown;
    let started = false;
    const worker = new Worker(
      f.db,
      {
        k: (ctx) =>
          new Promise((_, reject) => {
            started = true;
            ctx.signal.addEventListener('abort', () => {
              reason = ctx.signal.reason;
              reject(new Error('stopped'));
            });
          }),
      },
      opts('ip-3'),
    );
    const loop = worker.start();
    try {
      await waitFor('the handler to start', () => started);
      // Another worker takes the lease over (as after an expiry).
      await f.db.prisma.job.update({ where: { id }, data: { leaseOwner: 'thief', attempts: 2 } });
      // A bound on a stop that must come (at the next 0.1 s heartbeat), not a measure of it.
      await waitFor('the handler to be stopped', () => reason !== undefined, { timeoutMs: 60_000 });
      assert.equal(reason, 'lease-lost');
    } finally {
      await worker.stop();
      await loop;
    }
    const row = await f.db.prisma.job.findUniqueOrThrow({ where: { id } });
    assert.equal(row.status, 'leased');
    assert.equal(row.leaseOwner, 'thief');
    assert.equal(row.error, null, "the stopped handler's error was not written over the new owner's job");
  });
});
