// @postgresql: also on PostgreSQL, because SQLite's deferred transactions race where PostgreSQL's commit side by side.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import type { Database } from '../../server/db/client.ts';
import { inTransaction } from '../../server/db/batch.ts';
import { parseDatabaseUrl } from '../../server/db/url.ts';
import { dialect, freshDatabase } from '../helpers/db.ts';
import { createRun, setRunStatus } from '../../server/store/runs.ts';
import { appendEvent, readEvents } from '../../server/store/events.ts';

/**
 * A transaction that reads and then writes (a dataset's next version, a trajectory's rows) while another process
 * writes to the same database: the web server, a worker and the CLI all do, on one SQLite file.
 */
let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
});
afterEach(async () => {
  await fresh.close();
});

const row = (id: string) => [id, `key-${id}`, 1, Date.now()];
const INSERT = `INSERT INTO "RateLimit" ("id", "key", "count", "lastRequest") VALUES (?, ?, ?, ?)`;

/** Another process's connection: a write that does not wait (it reports whether the database let it in). */
async function otherWriter(): Promise<{
  write: (id: string) => Promise<'written' | 'busy'>;
  close: () => Promise<void>;
}> {
  if (dialect === 'sqlite') {
    const other = new Sqlite((parseDatabaseUrl(fresh.url) as { file: string }).file, { timeout: 0 });
    return {
      write: async (id) => {
        try {
          other.prepare(INSERT).run(...row(id));
          return 'written';
        } catch (e) {
          if ((e as { code?: string }).code?.startsWith('SQLITE_BUSY')) return 'busy';
          throw e;
        }
      },
      close: async () => void other.close(),
    };
  }
  const other = new pg.Client({ connectionString: fresh.url });
  await other.connect();
  return {
    write: async (id) => {
      await other.query(INSERT.replace(/VALUES .*/, 'VALUES ($1, $2, $3, $4)'), row(id));
      return 'written';
    },
    close: () => other.end(),
  };
}

test('a transaction that reads, then writes, commits although another connection wrote in between', async () => {
  const other = await otherWriter();
  let meanwhile = '';
  try {
    const n = await inTransaction(db, async (tx) => {
      const before = await db.query<{ n: number | bigint }>('SELECT COUNT(*) AS "n" FROM "RateLimit"', [], tx);
      meanwhile = await other.write('other');
      await db.execute(INSERT, row('mine'), tx);
      return Number(before[0].n);
    });
    assert.equal(n, 0);
  } finally {
    await other.close();
  }
  // SQLite has one writer at a time: the transaction holds the lock from its start, so the other write waits
  // (here: is told to); PostgreSQL lets both in.
  assert.equal(meanwhile, dialect === 'sqlite' ? 'busy' : 'written');
  const ids = (await db.query<{ id: string }>('SELECT "id" FROM "RateLimit" ORDER BY "id"')).map((r) => r.id);
  assert.deepEqual(ids, dialect === 'sqlite' ? ['mine'] : ['mine', 'other']);
});

test("a run's status and its status event are one change: a failed event write leaves the status as it was", async () => {
  const run = await createRun(db, { name: 'atomic status', kind: 'test' });
  // A real database refusing the event (a fault injected with a trigger): the status update must roll back with it.
  if (dialect === 'sqlite') {
    await db.execute(
      `CREATE TRIGGER "refuse_status" BEFORE INSERT ON "RunEvent" WHEN NEW."type" = 'status' BEGIN SELECT RAISE(ABORT, 'injected: no status events'); END`,
    );
  } else {
    await db.execute(
      `CREATE FUNCTION "refuse_status"() RETURNS trigger AS $$ BEGIN IF NEW."type" = 'status' THEN RAISE EXCEPTION 'injected: no status events'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
    );
    await db.execute(
      `CREATE TRIGGER "refuse_status" BEFORE INSERT ON "RunEvent" FOR EACH ROW EXECUTE FUNCTION "refuse_status"()`,
    );
  }
  await assert.rejects(setRunStatus(db, run.id, 'running'), /injected: no status events/);
  const after = await db.prisma.run.findUniqueOrThrow({ where: { id: run.id } });
  assert.equal(after.status, 'queued');
  assert.equal(after.startedAt, null);
  assert.deepEqual(await readEvents(db, run.id, 0, 100), []);
});

test('status changes beside many event writers: each is written once, and the last event is the status the run has', async () => {
  const run = await createRun(db, { name: 'busy stream', kind: 'test' });
  const statuses = ['running', 'paused', 'running', 'cancelled'] as const;
  const logs = Array.from({ length: 40 }, (_, i) => appendEvent(db, run.id, { message: `log ${i}` }));
  for (const s of statuses) await setRunStatus(db, run.id, s);
  await Promise.all(logs);
  const events = await readEvents(db, run.id, 0, 1000);
  assert.deepEqual(
    events.map((e) => e.seq),
    events.map((_, i) => i + 1),
  );
  const changes = events.filter((e) => e.type === 'status').map((e) => (e.data as { status: string }).status);
  assert.deepEqual(changes, [...statuses]);
  const now = await db.prisma.run.findUniqueOrThrow({ where: { id: run.id } });
  assert.equal(now.status, 'cancelled');
  assert.equal(events.filter((e) => e.type !== 'status').length, 40);
});
