import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserError } from '../../contracts/errors.ts';
import { parseDatabaseUrl, type Dialect } from './url.ts';
import { pgConnectionError } from './pg-errors.ts';
import { privateSqliteFiles } from './private-files.ts';

/**
 * Applies prisma/migrations/<dialect>/*.sql in name order, each once, recorded in _toolsmith_migrations.
 * Safe to run from several processes at once (SQLite: an IMMEDIATE transaction; PostgreSQL: an advisory lock).
 * We do not use `prisma migrate`: its schema engine is a download this environment cannot make.
 */
export const MIGRATIONS_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../prisma/migrations');

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}
export interface MigrateResult {
  dialect: Dialect;
  applied: string[];
  alreadyApplied: number;
}

export function listMigrations(dialect: Dialect, root = MIGRATIONS_ROOT): Migration[] {
  const dir = path.join(root, dialect);
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(dir, name), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

const TABLE = `CREATE TABLE IF NOT EXISTS "_toolsmith_migrations" ("name" TEXT PRIMARY KEY, "checksum" TEXT NOT NULL, "appliedAt" DOUBLE PRECISION NOT NULL)`;

function checkUnchanged(m: Migration, recorded: string | undefined) {
  if (recorded !== undefined && recorded !== m.checksum) {
    throw new UserError(`migration ${m.name} was edited after it was applied`, {
      fix: 'add a new migration file instead of changing an applied one',
    });
  }
}

export async function migrate(databaseUrl: string, root = MIGRATIONS_ROOT): Promise<MigrateResult> {
  const parsed = parseDatabaseUrl(databaseUrl);
  const migrations = listMigrations(parsed.dialect, root);
  if (parsed.dialect === 'sqlite') return migrateSqlite(parsed.file, migrations);
  return migratePostgres(parsed.url, migrations);
}

async function migrateSqlite(file: string, migrations: Migration[]): Promise<MigrateResult> {
  const { default: Sqlite } = await import('better-sqlite3');
  if (file !== ':memory:') {
    try {
      privateSqliteFiles(file);
    } catch (e) {
      throw new UserError(`cannot create the folder for the SQLite database ${file}: ${(e as Error).message}`, {
        fix: 'point DATABASE_URL or TOOLSMITH_DATA_DIR at a writable folder',
      });
    }
  }
  let db;
  try {
    db = new Sqlite(file, { timeout: 15000 });
  } catch (e) {
    throw new UserError(`cannot open the SQLite database ${file}: ${(e as Error).message}`, {
      fix: 'point DATABASE_URL at a writable file:… path',
    });
  }
  try {
    db.pragma('journal_mode = WAL');
    db.exec(TABLE);
    const applied: string[] = [];
    let already = 0;
    db.exec('BEGIN IMMEDIATE');
    try {
      const done = new Map<string, string>(
        (
          db.prepare('SELECT "name", "checksum" FROM "_toolsmith_migrations"').all() as {
            name: string;
            checksum: string;
          }[]
        ).map((r) => [r.name, r.checksum]),
      );
      for (const m of migrations) {
        checkUnchanged(m, done.get(m.name));
        if (done.has(m.name)) {
          already++;
          continue;
        }
        db.exec(m.sql);
        db.prepare('INSERT INTO "_toolsmith_migrations" ("name", "checksum", "appliedAt") VALUES (?, ?, ?)').run(
          m.name,
          m.checksum,
          Date.now(),
        );
        applied.push(m.name);
      }
      db.exec('COMMIT');
    } catch (e) {
      db.exec('ROLLBACK');
      throw e;
    }
    return { dialect: 'sqlite', applied, alreadyApplied: already };
  } finally {
    db.close();
  }
}

async function migratePostgres(url: string, migrations: Migration[]): Promise<MigrateResult> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10000 });
  try {
    await client.connect();
  } catch (e) {
    throw pgConnectionError(url, e);
  }
  try {
    // One lock id for "toolsmith migrations": concurrent starters wait instead of racing.
    await client.query('SELECT pg_advisory_lock(725001)');
    await client.query(TABLE);
    const rows = (await client.query('SELECT "name", "checksum" FROM "_toolsmith_migrations"')).rows as {
      name: string;
      checksum: string;
    }[];
    const done = new Map(rows.map((r) => [r.name, r.checksum]));
    const applied: string[] = [];
    let already = 0;
    for (const m of migrations) {
      checkUnchanged(m, done.get(m.name));
      if (done.has(m.name)) {
        already++;
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query(
          'INSERT INTO "_toolsmith_migrations" ("name", "checksum", "appliedAt") VALUES ($1, $2, $3)',
          [m.name, m.checksum, Date.now()],
        );
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK');
        throw e;
      }
      applied.push(m.name);
    }
    await client.query('SELECT pg_advisory_unlock(725001)');
    return { dialect: 'postgresql', applied, alreadyApplied: already };
  } finally {
    await client.end();
  }
}
