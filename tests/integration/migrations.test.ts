// @postgresql: also on PostgreSQL, because each dialect has migrations of its own.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { dialect, emptyDatabaseUrl } from '../helpers/db.ts';
import { killAll, runCli } from '../helpers/proc.ts';
import { listMigrations, migrate, MIGRATIONS_ROOT } from '../../server/db/migrate.ts';
import { openDatabase } from '../../server/db/client.ts';
import { parseDatabaseUrl } from '../../server/db/url.ts';
import { UserError } from '../../contracts/errors.ts';

after(killAll);

const drops: (() => Promise<void>)[] = [];
after(async () => {
  for (const d of drops) await d().catch(() => {});
});

async function empty() {
  const e = await emptyDatabaseUrl();
  drops.push(e.drop);
  return e.url;
}

/** Tables in the database (no system tables). */
async function tables(url: string): Promise<string[]> {
  const parsed = parseDatabaseUrl(url);
  if (parsed.dialect === 'sqlite') {
    const db = new Sqlite(parsed.file, { readonly: true });
    try {
      return (
        db.prepare(`SELECT "name" FROM sqlite_master WHERE "type" = 'table' AND "name" NOT LIKE 'sqlite_%'`).all() as {
          name: string;
        }[]
      )
        .map((r) => r.name)
        .sort();
    } finally {
      db.close();
    }
  }
  const c = new pg.Client({ connectionString: parsed.url });
  await c.connect();
  try {
    return (
      await c.query(`SELECT table_name AS "name" FROM information_schema.tables WHERE table_schema = 'public'`)
    ).rows
      .map((r) => r.name as string)
      .sort();
  } finally {
    await c.end();
  }
}

async function recorded(url: string): Promise<string[]> {
  const db = await openDatabase(url);
  try {
    return (await db.query<{ name: string }>('SELECT "name" FROM "_toolsmith_migrations" ORDER BY "name"')).map(
      (r) => r.name,
    );
  } finally {
    await db.close();
  }
}

/** Table names a set of migration files creates. */
function createdTables(sql: string): string[] {
  return [...sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"([^"]+)"/g)].map((m) => m[1]);
}

/** A copy of this dialect's migrations in a temp root, to edit and extend. */
function copyRoot(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-migrations-'));
  fs.cpSync(path.join(MIGRATIONS_ROOT, dialect), path.join(root, dialect), { recursive: true });
  return root;
}

function assertOneLineUserError(e: unknown, re: RegExp) {
  assert.ok(e instanceof UserError, `expected a UserError, got ${(e as Error)?.stack ?? String(e)}`);
  assert.match((e as Error).message, re);
  assert.ok(!(e as Error).message.includes('\n'), `one line expected: ${JSON.stringify((e as Error).message)}`);
}

async function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

test('both dialects ship the same migration files creating the same tables', () => {
  const sqlite = listMigrations('sqlite');
  const postgres = listMigrations('postgresql');
  assert.ok(sqlite.length > 0);
  assert.deepEqual(
    sqlite.map((m) => m.name),
    postgres.map((m) => m.name),
  );
  const t = (ms: typeof sqlite) => ms.flatMap((m) => createdTables(m.sql)).sort();
  assert.deepEqual(t(sqlite), t(postgres));
  assert.ok(t(sqlite).includes('Job') && t(sqlite).includes('RunEvent') && t(sqlite).includes('MetricPoint'));
});

test('migrate applies every file to an empty database and creates the tables; a second run applies nothing', async () => {
  const url = await empty();
  const files = listMigrations(dialect);
  const r1 = await migrate(url);
  assert.equal(r1.dialect, dialect);
  assert.deepEqual(
    r1.applied,
    files.map((m) => m.name),
  );
  assert.equal(r1.alreadyApplied, 0);
  const expected = [...files.flatMap((m) => createdTables(m.sql)), '_toolsmith_migrations'].sort();
  assert.deepEqual(await tables(url), expected);
  assert.deepEqual(
    await recorded(url),
    files.map((m) => m.name),
  );

  const r2 = await migrate(url);
  assert.deepEqual(r2.applied, []);
  assert.equal(r2.alreadyApplied, files.length);
  assert.deepEqual(
    await recorded(url),
    files.map((m) => m.name),
  );

  // Every Prisma model maps onto a table the migrations made.
  const db = await openDatabase(url);
  try {
    const p = db.prisma;
    const counts = await Promise.all([
      p.recipe.count(),
      p.run.count(),
      p.job.count(),
      p.metricPoint.count(),
      p.runEvent.count(),
      p.trajectory.count(),
      p.toolCall.count(),
      p.checkpoint.count(),
      p.dataset.count(),
      p.problem.count(),
      p.evalResult.count(),
      p.shareLink.count(),
    ]);
    assert.deepEqual(
      counts,
      counts.map(() => 0),
    );
  } finally {
    await db.close();
  }
});

test('three concurrent migrate processes on one empty database: one applies, none fails', async () => {
  const url = await empty();
  const n = listMigrations(dialect).length;
  const runs = await Promise.all([0, 1, 2].map(() => runCli(['migrate'], { DATABASE_URL: url })));
  for (const r of runs) assert.equal(r.code, 0, `migrate failed:\n${r.stdout}\n${r.stderr}`);
  const applied = runs.map((r) => {
    const m = /applied (\d+) migration\(s\).*, (\d+) already applied/.exec(r.stdout);
    assert.ok(m, `unexpected output: ${r.stdout}`);
    return [Number(m[1]), Number(m[2])];
  });
  assert.deepEqual(applied.map(([a]) => a).sort(), [0, 0, n], JSON.stringify(applied));
  for (const [a, already] of applied) assert.equal(a + already, n);
  assert.equal((await recorded(url)).length, n);
  // Start-up (npm start runs `toolsmith migrate`) seeds the default recipe, once however many processes raced.
  const db = await openDatabase(url);
  try {
    const recipes = await db.prisma.recipe.findMany({ where: { name: 'embedded-arith' } });
    assert.equal(recipes.length, 1);
    assert.equal(JSON.parse(recipes[0]!.spec).stages.length, 4);
  } finally {
    await db.close();
  }
});

test('three concurrent migrate() calls in one process: one applies, none fails', async () => {
  const url = await empty();
  const n = listMigrations(dialect).length;
  const results = await Promise.all([migrate(url), migrate(url), migrate(url)]);
  assert.deepEqual(results.map((r) => r.applied.length).sort(), [0, 0, n]);
  assert.equal((await recorded(url)).length, n);
});

test('a new migration file is applied on its own; an edited applied one is refused', async () => {
  const url = await empty();
  const root = copyRoot();
  try {
    const first = listMigrations(dialect, root);
    assert.equal((await migrate(url, root)).applied.length, first.length);

    const extra = path.join(root, dialect, '9000_extra.sql');
    fs.writeFileSync(extra, 'CREATE TABLE "ExtraThing" ("id" TEXT NOT NULL PRIMARY KEY);\n');
    const r = await migrate(url, root);
    assert.deepEqual(r.applied, ['9000_extra.sql']);
    assert.equal(r.alreadyApplied, first.length);
    assert.ok((await tables(url)).includes('ExtraThing'));

    fs.appendFileSync(extra, '-- edited after it was applied\n');
    let caught: unknown;
    await migrate(url, root).catch((e) => (caught = e));
    assertOneLineUserError(caught, /migration 9000_extra\.sql was edited after it was applied/);
    assert.match((caught as Error).message, /add a new migration file/);

    // Putting the file back makes the database usable again; nothing was applied twice.
    fs.writeFileSync(extra, 'CREATE TABLE "ExtraThing" ("id" TEXT NOT NULL PRIMARY KEY);\n');
    assert.deepEqual((await migrate(url, root)).applied, []);
    assert.equal((await recorded(url)).length, first.length + 1);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

/** Run statements on the database directly (no client that expects the latest schema); the last one's rows. */
async function raw(url: string, statements: string[]): Promise<Record<string, unknown>[]> {
  const parsed = parseDatabaseUrl(url);
  let rows: Record<string, unknown>[] = [];
  if (parsed.dialect === 'sqlite') {
    const db = new Sqlite(parsed.file);
    try {
      for (const sql of statements) {
        const st = db.prepare(sql);
        rows = st.reader ? (st.all() as Record<string, unknown>[]) : (st.run(), []);
      }
    } finally {
      db.close();
    }
    return rows;
  }
  const c = new pg.Client({ connectionString: parsed.url });
  await c.connect();
  try {
    for (const sql of statements) rows = (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
  return rows;
}

test("0008 token scopes: tokens made before scopes get their user's role's scope, so none is refused what it did", async () => {
  const url = await empty();
  const root = copyRoot();
  try {
    const scopes = path.join(root, dialect, '0008_token_scopes.sql');
    const sql = fs.readFileSync(scopes, 'utf8');
    fs.rmSync(scopes);
    await migrate(url, root);
    const users = ['viewer', 'researcher', 'admin'].map(
      (role) =>
        `INSERT INTO "User" ("id", "name", "email", "role") VALUES ('u_${role}', '${role}', '${role}@lab.example', '${role}')`,
    );
    const tokens = ['viewer', 'researcher', 'admin'].map(
      (role) =>
        `INSERT INTO "ApiToken" ("id", "userId", "name", "tokenHash") VALUES ('tok_${role}', 'u_${role}', 'old', 'hash_${role}')`,
    );
    await raw(url, [...users, ...tokens]);
    fs.writeFileSync(scopes, sql);
    assert.deepEqual((await migrate(url, root)).applied, ['0008_token_scopes.sql']);
    const rows = await raw(url, ['SELECT "id", "scope" FROM "ApiToken" ORDER BY "id"']);
    assert.deepEqual(
      rows.map((r) => [r.id, r.scope]),
      [
        ['tok_admin', 'admin'],
        ['tok_researcher', 'write'],
        ['tok_viewer', 'read'],
      ],
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a migration that fails leaves no trace and is applied once it is fixed', async () => {
  const url = await empty();
  const root = copyRoot();
  try {
    await migrate(url, root);
    const bad = path.join(root, dialect, '9001_bad.sql');
    fs.writeFileSync(bad, 'CREATE TABLE "Half" ("id" TEXT NOT NULL PRIMARY KEY);\nSELECT * FROM "no_such_table";\n');
    await assert.rejects(migrate(url, root), /no_such_table/);
    assert.ok(!(await tables(url)).includes('Half'), 'the failed migration was rolled back');
    assert.ok(!(await recorded(url)).includes('9001_bad.sql'));
    fs.writeFileSync(bad, 'CREATE TABLE "Half" ("id" TEXT NOT NULL PRIMARY KEY);\n');
    assert.deepEqual((await migrate(url, root)).applied, ['9001_bad.sql']);
    assert.ok((await tables(url)).includes('Half'));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('openDatabase on an unmigrated database says to run migrate', async () => {
  const url = await empty();
  let caught: unknown;
  await openDatabase(url).catch((e) => (caught = e));
  assertOneLineUserError(caught, /run `npx toolsmith migrate`/);
  if (dialect === 'sqlite') {
    const file = (parseDatabaseUrl(url) as { file: string }).file;
    assert.match((caught as Error).message, /does not exist yet/);
    assert.ok(!fs.existsSync(file), 'opening did not create the file');
    // An existing SQLite file without our tables.
    new Sqlite(file).close();
    caught = undefined;
    await openDatabase(url).catch((e) => (caught = e));
    assertOneLineUserError(caught, /has no Toolsmith tables.*run `npx toolsmith migrate`/);
  } else {
    assert.match((caught as Error).message, /has no Toolsmith tables/);
  }
});

test('a bad DATABASE_URL is a one-line UserError from migrate, openDatabase and the CLI', async () => {
  for (const url of ['mysql://root:hunter2@localhost/db', 'file:', 'postgres://']) {
    for (const f of [() => migrate(url), () => openDatabase(url)]) {
      let caught: unknown;
      await f().catch((e) => (caught = e));
      assertOneLineUserError(caught, /DATABASE_URL/);
      assert.ok(!(caught as Error).message.includes('hunter2'));
    }
  }
  const r = await runCli(['migrate'], { DATABASE_URL: 'mysql://root:hunter2@localhost/db' });
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(
    r.stderr,
    /^toolsmith migrate: DATABASE_URL .* is neither a file: nor a postgres:\/\/ URL — set DATABASE_URL/,
  );
  assert.ok(!r.stderr.includes('hunter2'));
});

test('an unreachable PostgreSQL is a one-line UserError that hides the password', async () => {
  const url = `postgres://toolsmith:hunter2@127.0.0.1:${await closedPort()}/toolsmith`;
  for (const [name, f] of [
    ['migrate', () => migrate(url)],
    ['openDatabase', () => openDatabase(url)],
  ] as const) {
    let caught: unknown;
    await (f as () => Promise<unknown>)().catch((e) => (caught = e));
    assertOneLineUserError(
      caught,
      /cannot reach PostgreSQL at postgres:\/\/toolsmith:\*\*\*@127\.0\.0\.1:\d+\/toolsmith/,
    );
    assert.match((caught as Error).message, /start PostgreSQL or correct the host\/port in DATABASE_URL/, name);
    assert.ok(!(caught as Error).message.includes('hunter2'), name);
  }
  const r = await runCli(['migrate'], { DATABASE_URL: url });
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /^toolsmith migrate: cannot reach PostgreSQL/);
});

test('a PostgreSQL database that does not exist is named in a one-line UserError', {
  skip: dialect !== 'postgresql' && 'needs the PostgreSQL server',
}, async () => {
  const admin = process.env.TOOLSMITH_TEST_PG_ADMIN_URL!;
  const url = admin.replace(/\/[^/?]+(\?|$)/, '/no_such_database_here$1');
  for (const f of [() => migrate(url), () => openDatabase(url)]) {
    let caught: unknown;
    await f().catch((e) => (caught = e));
    assertOneLineUserError(caught, /the database named in .*no_such_database_here does not exist — create it/);
  }
});

test('a worker that cannot open its database exits non-zero with one line', async () => {
  const r = await runCli(['worker'], { DATABASE_URL: 'mysql://nope' }, 30000);
  assert.match(r.stderr, /^toolsmith worker: DATABASE_URL/);
  assert.notEqual(r.code, 0);
});
