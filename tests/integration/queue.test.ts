// @postgresql: also on PostgreSQL, because jobs are leased with dialect-specific SQL (server/store/jobs.ts).
import { after, afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshDatabase } from '../helpers/db.ts';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { inTransaction } from '../../server/db/batch.ts';
import * as queue from '../../server/store/jobs.ts';
import { appendEvent, appendEvents, isUniqueViolation, readEvents } from '../../server/store/events.ts';
import { logMetrics, readSeries } from '../../server/store/metrics.ts';
import { createRun } from '../../server/store/runs.ts';
import { cancelRun } from '../../server/lifecycle.ts';
import { UserError } from '../../contracts/errors.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
const extra: Database[] = [];

beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
});
afterEach(async () => {
  for (const h of extra.splice(0)) await h.close().catch(() => {});
  await fresh.close();
});
after(() => {});

async function row(id: string) {
  return db.prisma.job.findUniqueOrThrow({ where: { id } });
}

/** Make a queued job due now (instead of waiting out its back-off). */
async function makeDue(id: string) {
  await db.prisma.job.update({ where: { id }, data: { runAfter: 0 } });
}

/**
 * A lease far longer than any test: a lease that runs out while the test was merely descheduled would hand the job
 * to the next leaser, and the test would read that as a bug. Expiry is tested with leases that are over already.
 */
const LEASE = 10 * 60_000;

/**
 * A job in back-off is not leased before its runAfter. The back-off is real time (1 s after a first failure), which a
 * loaded machine can spend between two statements: a lease that does come back must have been asked for at or after
 * runAfter, and is handed back (without using an attempt) so the test goes on from the same state.
 */
async function assertNotLeasedBeforeDue(id: string, runAfter: number) {
  const early = await queue.lease(db, 'early', LEASE);
  if (early === null) return;
  const now = Date.now();
  assert.ok(now >= runAfter, `leased ${runAfter - now} ms before its back-off ended`);
  assert.equal(early.id, id);
  assert.equal(await queue.release(db, id, 'early'), true);
}

test('enqueue, lease, heartbeat, complete', async () => {
  const id = await queue.enqueue(db, { kind: 'k', payload: { a: [1, 2], b: 'x' } });
  const queued = await queue.getJob(db, id);
  assert.deepEqual(
    {
      status: queued!.status,
      attempts: queued!.attempts,
      maxAttempts: queued!.maxAttempts,
      payload: queued!.payload,
      runId: queued!.runId,
      leaseOwner: queued!.leaseOwner,
      cancelRequested: queued!.cancelRequested,
    },
    {
      status: 'queued',
      attempts: 0,
      maxAttempts: 3,
      payload: { a: [1, 2], b: 'x' },
      runId: null,
      leaseOwner: null,
      cancelRequested: false,
    },
  );

  const before = Date.now();
  const job = await queue.lease(db, 'w1', LEASE);
  assert.ok(job);
  assert.equal(job.id, id);
  assert.equal(job.status, 'leased');
  assert.equal(job.leaseOwner, 'w1');
  assert.equal(job.attempts, 1);
  assert.deepEqual(job.payload, { a: [1, 2], b: 'x' });
  assert.ok(job.leaseExpiresAt! >= before + LEASE && job.leaseExpiresAt! <= Date.now() + LEASE);
  assert.ok((await row(id)).startedAt! >= before);

  assert.equal(await queue.lease(db, 'w2', LEASE), null, 'a leased job is not handed out again');

  // Twice the lease: the extension shows even if the heartbeat comes in the same millisecond as the lease.
  const hb = await queue.heartbeat(db, id, 'w1', 2 * LEASE);
  assert.deepEqual(hb, { owned: true, cancelRequested: false });
  assert.ok((await row(id)).leaseExpiresAt! > job.leaseExpiresAt!, 'the heartbeat extended the lease');
  assert.deepEqual(await queue.heartbeat(db, id, 'w2', LEASE), { owned: false, cancelRequested: false });

  assert.equal(await queue.complete(db, id, 'w2', { no: 1 }), false, 'only the owner completes');
  assert.equal(await queue.complete(db, id, 'w1', { answer: 42 }), true);
  const done = await row(id);
  assert.equal(done.status, 'succeeded');
  assert.deepEqual(JSON.parse(done.result!), { answer: 42 });
  assert.equal(done.leaseOwner, null);
  assert.equal(done.error, null);
  assert.ok(done.finishedAt! >= before);
  assert.equal(await queue.complete(db, id, 'w1', { again: true }), false, 'completing twice is refused');
  assert.deepEqual(JSON.parse((await row(id)).result!), { answer: 42 });
  assert.deepEqual(await queue.heartbeat(db, id, 'w1', 1000), { owned: false, cancelRequested: false });
  assert.equal(await queue.lease(db, 'w1', 1000), null);
  assert.equal(await queue.getJob(db, 'job_missing'), null);
});

test('lease order: priority first, then due time; delayed jobs wait', async () => {
  const later = await queue.enqueue(db, { kind: 'k', delayMs: LEASE, priority: 100 });
  const low1 = await queue.enqueue(db, { kind: 'k' });
  const high = await queue.enqueue(db, { kind: 'k', priority: 5 });
  await db.prisma.job.update({ where: { id: low1 }, data: { runAfter: 1 } });
  const low2 = await queue.enqueue(db, { kind: 'k' });
  const got = [];
  for (let j; (j = await queue.lease(db, 'w', LEASE)); ) got.push(j.id);
  assert.deepEqual(got, [high, low1, low2]);
  assert.equal((await row(later)).status, 'queued');
});

test('fail with retries: back to the queue with a growing back-off, then failed for good', async () => {
  const id = await queue.enqueue(db, { kind: 'k', maxAttempts: 3 });

  let job = await queue.lease(db, 'w1', LEASE);
  let t0 = Date.now();
  assert.equal(await queue.fail(db, id, 'w1', 'first error'), 'retry');
  let r = await row(id);
  assert.equal(r.status, 'queued');
  assert.equal(r.attempts, 1);
  assert.equal(r.error, 'first error');
  assert.equal(r.leaseOwner, null);
  assert.equal(r.finishedAt, null);
  assert.ok(
    r.runAfter >= t0 + 1000 && r.runAfter <= Date.now() + 1000,
    `back-off after attempt 1: ${r.runAfter - t0} ms`,
  );
  await assertNotLeasedBeforeDue(id, r.runAfter);

  await makeDue(id);
  job = await queue.lease(db, 'w2', LEASE);
  assert.equal(job?.attempts, 2);
  t0 = Date.now();
  assert.equal(await queue.fail(db, id, 'w2', 'second error'), 'retry');
  r = await row(id);
  assert.equal(r.attempts, 2);
  assert.ok(
    r.runAfter >= t0 + 2000 && r.runAfter <= Date.now() + 2000,
    `back-off after attempt 2: ${r.runAfter - t0} ms`,
  );

  await makeDue(id);
  job = await queue.lease(db, 'w3', LEASE);
  assert.equal(job?.attempts, 3);
  assert.equal(await queue.fail(db, id, 'w3', 'third error'), 'failed');
  r = await row(id);
  assert.equal(r.status, 'failed');
  assert.equal(r.attempts, 3);
  assert.equal(r.error, 'third error');
  assert.ok(r.finishedAt);
  await makeDue(id);
  assert.equal(await queue.lease(db, 'w1', LEASE), null, 'a failed job is never leased again');
  assert.equal(await queue.fail(db, id, 'w3', 'late'), null);
});

test('fail: a permanent error fails at once; a stranger cannot fail the job', async () => {
  const id = await queue.enqueue(db, { kind: 'k', maxAttempts: 5 });
  await queue.lease(db, 'w1', LEASE);
  assert.equal(await queue.fail(db, id, 'intruder', 'nope'), null);
  assert.equal((await row(id)).status, 'leased');
  assert.equal(await queue.fail(db, id, 'w1', 'bad input', { retryable: false }), 'failed');
  const r = await row(id);
  assert.equal(r.status, 'failed');
  assert.equal(r.attempts, 1);
  assert.equal(r.error, 'bad input');
});

test('fencing: a worker whose lease expired and was taken over cannot write', async () => {
  const id = await queue.enqueue(db, { kind: 'k', maxAttempts: 3 });
  // A negative lease is already over: the same as a worker that stopped heartbeating long ago.
  const first = await queue.lease(db, 'stale', -1000);
  assert.equal(first?.attempts, 1);
  const second = await queue.lease(db, 'fresh', LEASE);
  assert.equal(second?.id, id, 'the expired lease is taken over');
  assert.equal(second?.leaseOwner, 'fresh');
  assert.equal(second?.attempts, 2);

  assert.deepEqual(await queue.heartbeat(db, id, 'stale', LEASE), { owned: false, cancelRequested: false });
  assert.equal(await queue.complete(db, id, 'stale', { from: 'stale' }), false);
  assert.equal(await queue.fail(db, id, 'stale', 'stale error'), null);
  assert.equal(await queue.release(db, id, 'stale'), false);
  assert.equal(await queue.markCancelled(db, id, 'stale'), false);
  let r = await row(id);
  assert.equal(r.status, 'leased');
  assert.equal(r.leaseOwner, 'fresh');
  assert.equal(r.attempts, 2);
  assert.equal(r.error, null);

  assert.equal(await queue.complete(db, id, 'fresh', { from: 'fresh' }), true);
  r = await row(id);
  assert.equal(r.status, 'succeeded');
  assert.deepEqual(JSON.parse(r.result!), { from: 'fresh' });
});

test('an expired lease on the last attempt is not leased again; reapExhausted fails it', async () => {
  const run = await createRun(db, { name: 'r', kind: 'k' });
  const dead = await queue.enqueue(db, { kind: 'k', maxAttempts: 1, runId: run.id });
  const alive = await queue.enqueue(db, { kind: 'k', maxAttempts: 1 });
  const retryable = await queue.enqueue(db, { kind: 'k', maxAttempts: 2 });
  assert.equal((await queue.lease(db, 'w1', -1000))?.id, dead);
  assert.equal((await queue.lease(db, 'w1', LEASE))?.id, alive);
  assert.equal((await queue.lease(db, 'w1', -1000))?.id, retryable);

  // Only `retryable` can be taken over: `dead` has no attempts left, `alive` is still held.
  assert.equal((await queue.lease(db, 'w2', -1000))?.id, retryable);
  assert.equal(await queue.lease(db, 'w2', LEASE), null);

  const reaped = await queue.reapExhausted(db);
  assert.deepEqual(reaped.map((j) => j.id).sort(), [dead, retryable].sort());
  const d = reaped.find((j) => j.id === dead)!;
  assert.deepEqual(d, { id: dead, runId: run.id, attempts: 1 });
  assert.equal(typeof d.attempts, 'number');
  const r = await row(dead);
  assert.equal(r.status, 'failed');
  assert.equal(r.leaseOwner, null);
  assert.ok(r.finishedAt);
  assert.match(r.error!, /lease expired on attempt 1 of 1/);
  assert.equal((await row(alive)).status, 'leased');
  assert.equal((await row(retryable)).status, 'failed');
  assert.match((await row(retryable)).error!, /attempt 2 of 2/);
  assert.deepEqual(await queue.reapExhausted(db), [], 'reaping twice finds nothing');
});

test('release on shutdown gives the job back without using an attempt', async () => {
  const id = await queue.enqueue(db, { kind: 'k', maxAttempts: 1 });
  await queue.lease(db, 'w1', LEASE);
  assert.equal(await queue.release(db, id, 'w2'), false, 'only the owner releases');
  const t = Date.now();
  assert.equal(await queue.release(db, id, 'w1'), true);
  let r = await row(id);
  assert.equal(r.status, 'queued');
  assert.equal(r.attempts, 0);
  assert.equal(r.leaseOwner, null);
  assert.equal(r.leaseExpiresAt, null);
  assert.ok(r.runAfter <= Date.now() && r.runAfter >= t, 'due at once');
  assert.equal(await queue.release(db, id, 'w1'), false, 'released once');
  assert.equal((await row(id)).attempts, 0);

  // Released many times, a one-attempt job still gets its attempt.
  for (let i = 0; i < 3; i++) {
    const j = await queue.lease(db, `w${i}`, LEASE);
    assert.equal(j?.attempts, 1);
    assert.equal(await queue.release(db, id, `w${i}`), true);
  }
  const j = await queue.lease(db, 'last', LEASE);
  assert.equal(j?.attempts, 1);
  assert.equal(await queue.fail(db, id, 'last', 'boom'), 'failed');
  r = await row(id);
  assert.equal(r.status, 'failed');
  assert.equal(r.attempts, 1);
});

test('cancel: a queued job is cancelled at once; a leased one is flagged for its worker', async () => {
  const q = await queue.enqueue(db, { kind: 'k' });
  const l = await queue.enqueue(db, { kind: 'k', priority: 1 });
  assert.equal((await queue.lease(db, 'w1', LEASE))?.id, l);

  assert.equal(await queue.cancel(db, q), 'cancelled');
  let r = await row(q);
  assert.equal(r.status, 'cancelled');
  assert.ok(r.finishedAt);
  assert.equal(await queue.lease(db, 'w2', LEASE), null, 'a cancelled job is not leased');

  assert.deepEqual(await queue.heartbeat(db, l, 'w1', LEASE), { owned: true, cancelRequested: false });
  assert.equal(await queue.cancel(db, l), 'cancelling');
  assert.equal((await row(l)).status, 'leased', 'the worker still holds it');
  assert.deepEqual(await queue.heartbeat(db, l, 'w1', LEASE), { owned: true, cancelRequested: true });
  assert.equal((await queue.getJob(db, l))?.cancelRequested, true);
  // A cancelled job is not retried even with attempts left.
  assert.equal(await queue.markCancelled(db, l, 'w2'), false);
  assert.equal(await queue.markCancelled(db, l, 'w1'), true);
  r = await row(l);
  assert.equal(r.status, 'cancelled');
  assert.equal(r.leaseOwner, null);
  assert.ok(r.finishedAt);

  assert.equal(await queue.cancel(db, l), 'finished');
  assert.equal(await queue.cancel(db, q), 'finished');
  assert.equal(await queue.cancel(db, 'job_nope'), 'missing');
});

test('fail on a job with a cancel request does not retry', async () => {
  const id = await queue.enqueue(db, { kind: 'k', maxAttempts: 3 });
  await queue.lease(db, 'w1', LEASE);
  await queue.cancel(db, id);
  assert.equal(await queue.fail(db, id, 'w1', 'stopped'), 'failed');
  assert.equal((await row(id)).status, 'failed');
});

test('kinds filter: a worker only leases the kinds it asks for', async () => {
  const a = await queue.enqueue(db, { kind: 'alpha' });
  const b = await queue.enqueue(db, { kind: 'beta' });
  const c = await queue.enqueue(db, { kind: 'gamma' });
  assert.equal(await queue.lease(db, 'w', LEASE, ['delta']), null);
  assert.equal((await queue.lease(db, 'w', LEASE, ['beta']))?.id, b);
  assert.equal(await queue.lease(db, 'w', LEASE, ['beta']), null);
  assert.equal((await queue.lease(db, 'w', LEASE, ['gamma', 'alpha']))?.id, a);
  assert.equal((await queue.lease(db, 'w', LEASE, []))?.id, c, 'an empty filter takes any kind');
  // Expired leases are filtered by kind too.
  const d = await queue.enqueue(db, { kind: 'delta' });
  assert.equal((await queue.lease(db, 'w', -1000, ['delta']))?.id, d);
  assert.equal(await queue.lease(db, 'x', LEASE, ['alpha']), null);
  assert.equal((await queue.lease(db, 'x', LEASE, ['delta']))?.id, d);
});

test('8 concurrent leasers on separate handles lease each of 200 jobs exactly once', async () => {
  const N = 200;
  const ids = new Set<string>();
  // Enqueued in bulk (one insert) to keep the set-up short.
  const now = Date.now();
  const rows = Array.from({ length: N }, (_, i) => ({
    id: `job_bulk_${String(i).padStart(4, '0')}`,
    kind: 'k',
    payload: JSON.stringify({ i }),
    status: 'queued',
    priority: i % 3,
    maxAttempts: 3,
    runAfter: now,
    createdAt: now,
  }));
  await db.prisma.job.createMany({ data: rows });
  for (const r of rows) ids.add(r.id);

  const handles = await Promise.all(Array.from({ length: 8 }, () => openDatabase(fresh.url)));
  extra.push(...handles);
  // Each leaser takes its first job before any takes a second, so all 8 hold a lease at once and then race for the
  // rest: the leases overlap however the connections are scheduled (who then gets how many is up to the scheduler).
  let toStart = handles.length;
  let allHoldOne!: () => void;
  const barrier = new Promise<void>((r) => (allHoldOne = r));
  const got = await Promise.all(
    handles.map(async (h, w) => {
      const mine: string[] = [];
      for (;;) {
        const j = await queue.lease(h, `w${w}`, LEASE);
        if (mine.length === 0) assert.ok(j, `w${w} got a first job of ${N}`);
        if (!j) break;
        assert.equal(j.leaseOwner, `w${w}`);
        mine.push(j.id);
        if (mine.length === 1) {
          if (--toStart === 0) allHoldOne();
          await barrier;
        }
      }
      return mine;
    }),
  );
  const all = got.flat();
  assert.equal(all.length, N, `leased ${all.length} times for ${N} jobs`);
  assert.equal(new Set(all).size, N, 'no job was leased twice');
  assert.deepEqual([...new Set(all)].sort(), [...ids].sort());
  const stored = await db.prisma.job.findMany({ select: { id: true, status: true, attempts: true, leaseOwner: true } });
  const owner = new Map(got.flatMap((list, w) => list.map((id) => [id, `w${w}`] as const)));
  for (const s of stored) {
    assert.equal(s.status, 'leased');
    assert.equal(s.attempts, 1, `${s.id} leased once`);
    assert.equal(s.leaseOwner, owner.get(s.id));
  }
  assert.ok(
    got.every((l) => l.length >= 1),
    `every leaser held a job while the others did: ${got.map((l) => l.length).join(',')}`,
  );
});

test('cancelRun: queued run cancelled at once; running run flagged; finished run untouched', async () => {
  const queuedRun = await createRun(db, { name: 'q', kind: 'k' });
  const qj = await queue.enqueue(db, { kind: 'k', runId: queuedRun.id });
  assert.deepEqual(await cancelRun(db, queuedRun.id), { status: 'cancelled' });
  assert.equal((await db.prisma.run.findUniqueOrThrow({ where: { id: queuedRun.id } })).status, 'cancelled');
  assert.equal((await row(qj)).status, 'cancelled');
  assert.ok(
    (await readEvents(db, queuedRun.id)).some(
      (e) => e.type === 'status' && (e.data as { status: string }).status === 'cancelled',
    ),
  );

  const running = await createRun(db, { name: 'r', kind: 'k' });
  const rj = await queue.enqueue(db, { kind: 'k', runId: running.id });
  assert.equal((await queue.lease(db, 'w1', LEASE))?.id, rj);
  assert.deepEqual(await cancelRun(db, running.id), { status: 'cancelling' });
  assert.equal((await row(rj)).status, 'leased');
  assert.deepEqual(await queue.heartbeat(db, rj, 'w1', LEASE), { owned: true, cancelRequested: true });
  assert.ok((await readEvents(db, running.id)).some((e) => /cancel requested/.test(e.message)));

  const done = await createRun(db, { name: 'd', kind: 'k' });
  await db.prisma.run.update({ where: { id: done.id }, data: { status: 'succeeded' } });
  assert.deepEqual(await cancelRun(db, done.id), { status: 'succeeded' });
  await assert.rejects(
    cancelRun(db, 'run_nope'),
    (e) => e instanceof UserError && /run run_nope not found/.test(e.message),
  );
});

test('events: concurrent appends from several handles get gapless seqs 1..N', async () => {
  const run = await createRun(db, { name: 'events', kind: 'k' });
  const handles = await Promise.all(Array.from({ length: 6 }, () => openDatabase(fresh.url)));
  extra.push(...handles);
  const PER = 20;
  await Promise.all(
    handles.map(async (h, w) => {
      for (let i = 0; i < PER; i++) {
        // Mix single events with small batches.
        if (i % 5 === 4)
          await appendEvents(h, run.id, [
            { message: `w${w} e${i}a` },
            { message: `w${w} e${i}b` },
            { message: `w${w} e${i}c` },
          ]);
        else await appendEvent(h, run.id, { message: `w${w} e${i}`, data: { w, i } });
      }
    }),
  );
  const events = await readEvents(db, run.id, 0, 10000);
  const total = 6 * (PER + (PER / 5) * 2);
  assert.equal(events.length, total);
  assert.deepEqual(
    events.map((e) => e.seq),
    Array.from({ length: total }, (_, i) => i + 1),
  );
  assert.equal(new Set(events.map((e) => e.message)).size, total, 'no event lost or doubled');
  for (let w = 0; w < 6; w++) {
    // Each writer's events keep its order, and a batch stays contiguous.
    const mine = events.filter((e) => e.message.startsWith(`w${w} `));
    const order = mine.map((e) => e.message);
    const expected = Array.from({ length: PER }, (_, i) =>
      i % 5 === 4 ? [`w${w} e${i}a`, `w${w} e${i}b`, `w${w} e${i}c`] : [`w${w} e${i}`],
    ).flat();
    assert.deepEqual(order, expected);
    for (const e of mine.filter((x) => x.message.endsWith('a'))) {
      const i = events.indexOf(e);
      assert.deepEqual(
        [events[i + 1].message, events[i + 2].message],
        [e.message.replace(/a$/, 'b'), e.message.replace(/a$/, 'c')],
      );
    }
  }
});

test('events: appendEvents returns the last seq, batches beyond the chunk size, and readEvents pages', async () => {
  const run = await createRun(db, { name: 'paging', kind: 'k' });
  const other = await createRun(db, { name: 'other', kind: 'k' });
  assert.equal(await appendEvent(db, other.id, { message: 'elsewhere' }), 1);
  assert.equal(
    await appendEvent(db, run.id, {
      message: 'first',
      level: 'warn',
      type: 'custom',
      data: { nested: { x: [1, null, 'y'] } },
    }),
    1,
  );
  const last = await appendEvents(
    db,
    run.id,
    Array.from({ length: 449 }, (_, i) => ({ message: `m${i + 2}` })),
  );
  assert.equal(last, 450);

  const first = await readEvents(db, run.id, 0, 1);
  assert.equal(first.length, 1);
  assert.equal(first[0].runId, run.id);
  assert.equal(first[0].seq, 1);
  assert.equal(first[0].level, 'warn');
  assert.equal(first[0].type, 'custom');
  assert.deepEqual(first[0].data, { nested: { x: [1, null, 'y'] } });
  assert.equal(typeof first[0].time, 'number');

  const seen: number[] = [];
  let cursor = 0;
  let pages = 0;
  for (;;) {
    const page = await readEvents(db, run.id, cursor, 100);
    if (page.length === 0) break;
    pages++;
    assert.ok(page.length <= 100);
    for (const e of page) seen.push(e.seq);
    cursor = page[page.length - 1].seq;
  }
  assert.equal(pages, 5);
  assert.deepEqual(
    seen,
    Array.from({ length: 450 }, (_, i) => i + 1),
  );
  const mid = await readEvents(db, run.id, 200, 3);
  assert.deepEqual(
    mid.map((e) => [e.seq, e.message, e.level, e.type, e.data]),
    [
      [201, 'm201', 'info', 'log', null],
      [202, 'm202', 'info', 'log', null],
      [203, 'm203', 'info', 'log', null],
    ],
  );
  assert.deepEqual(await readEvents(db, run.id, 450), []);
  assert.deepEqual(
    (await readEvents(db, other.id)).map((e) => e.message),
    ['elsewhere'],
  );
  assert.deepEqual(await readEvents(db, 'run_nope'), []);
});

test("events: appends inside a caller's transaction continue the sequence", async () => {
  const run = await createRun(db, { name: 'tx', kind: 'k' });
  await appendEvent(db, run.id, { message: 'before' });
  const last = await inTransaction(db, async (tx) => {
    await appendEvent(db, run.id, { message: 'in tx 1' }, tx);
    return appendEvents(db, run.id, [{ message: 'in tx 2' }, { message: 'in tx 3' }], tx);
  });
  assert.equal(last, 4);
  assert.deepEqual(
    (await readEvents(db, run.id)).map((e) => [e.seq, e.message]),
    [
      [1, 'before'],
      [2, 'in tx 1'],
      [3, 'in tx 2'],
      [4, 'in tx 3'],
    ],
  );
});

test("isUniqueViolation recognises the database's own duplicate-key error", async () => {
  const run = await createRun(db, { name: 'dup', kind: 'k' });
  await appendEvent(db, run.id, { message: 'one' });
  let caught: unknown;
  await db
    .execute(
      `INSERT INTO "RunEvent" ("runId", "seq", "time", "level", "type", "message") VALUES (?, 1, 0, 'info', 'log', 'dup')`,
      [run.id],
    )
    .catch((e) => (caught = e));
  assert.ok(caught, 'the duplicate insert failed');
  assert.equal(isUniqueViolation(caught), true, String((caught as Error).message));
  caught = undefined;
  await db
    .execute(`INSERT INTO "RunEvent" ("runId", "seq", "time", "level", "type") VALUES (?, 2, 0, 'info', 'log')`, [
      run.id,
    ])
    .catch((e) => (caught = e));
  assert.ok(caught, 'a NOT NULL violation failed');
  assert.equal(isUniqueViolation(caught), false, String((caught as Error).message));
});

test('metrics: logMetrics stores finite values, upserts a re-logged step, and warns about the rest', async () => {
  const run = await createRun(db, { name: 'm', kind: 'k' });
  await logMetrics(db, run.id, 0, { loss: 1.5, acc: 0 });
  await logMetrics(db, run.id, 1, { loss: Number.NaN, acc: 0.5 });
  await logMetrics(db, run.id, 0, { loss: 1.25 });
  assert.deepEqual(
    (await readSeries(db, run.id, 'loss')).map((p) => [p.step, p.value]),
    [[0, 1.25]],
  );
  assert.deepEqual(
    (await readSeries(db, run.id, 'acc')).map((p) => [p.step, p.value]),
    [
      [0, 0],
      [1, 0.5],
    ],
  );
  const events = await readEvents(db, run.id);
  assert.ok(events.some((e) => e.level === 'warn' && /non-finite metric values not stored: loss=NaN/.test(e.message)));
  assert.equal(events.filter((e) => e.type === 'metric').length, 3);
  // Step ranges, open on either side.
  await logMetrics(db, run.id, 2, { acc: 0.75 });
  assert.deepEqual(
    (await readSeries(db, run.id, 'acc', 1)).map((p) => p.step),
    [1, 2],
  );
  assert.deepEqual(
    (await readSeries(db, run.id, 'acc', undefined, 1)).map((p) => p.step),
    [0, 1],
  );
  assert.deepEqual(
    (await readSeries(db, run.id, 'acc', 1, 1)).map((p) => p.step),
    [1],
  );
  assert.deepEqual(await readSeries(db, run.id, 'nope'), []);
});

test("a known job kind's payload is checked by its schema before it is stored, naming the field", async () => {
  await assert.rejects(
    queue.enqueue(db, { kind: 'test.count', payload: { steps: -1 } }),
    (e) => e instanceof UserError && /test\.count job payload: steps: /.test(e.message),
  );
  await assert.rejects(
    queue.enqueue(db, { kind: 'train', payload: { recipe: { name: 'r' } } as never }),
    (e) => e instanceof UserError && /train job payload: recipe\.stages: /.test(e.message),
  );
  assert.equal(await db.prisma.job.count(), 0, 'nothing was stored');
  const id = await queue.enqueue(db, { kind: 'test.count', payload: { steps: 2 } });
  assert.deepEqual((await queue.getJob(db, id))!.payload, { steps: 2 });
});
