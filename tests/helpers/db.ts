import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { migrate } from '../../server/db/migrate.ts';
import type { Dialect } from '../../server/db/url.ts';

/**
 * Integration tests run once per database: TOOLSMITH_TEST_DIALECT picks it (scripts/test.mjs runs the suite on
 * SQLite, then on PostgreSQL with TOOLSMITH_TEST_PG_ADMIN_URL pointing at its throwaway cluster).
 */
export const dialect: Dialect = process.env.TOOLSMITH_TEST_DIALECT === 'postgresql' ? 'postgresql' : 'sqlite';

/** A new, empty database (no migrations applied): a temp SQLite file or a new PostgreSQL database. */
export async function emptyDatabaseUrl(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-test-'));
    return {
      url: `file:${path.join(dir, `${name}.db`)}`,
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const admin = process.env.TOOLSMITH_TEST_PG_ADMIN_URL;
  if (!admin) throw new Error('TOOLSMITH_TEST_PG_ADMIN_URL is not set: run the suite through `npm test`');
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = admin.replace(/\/[^/?]+(\?|$)/, `/${name}$1`);
  return {
    url,
    drop: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A migrated database and an open handle; `close()` closes and drops it. */
export async function freshDatabase(): Promise<{ url: string; db: Database; close: () => Promise<void> }> {
  const { url, drop } = await emptyDatabaseUrl();
  await migrate(url);
  const db = await openDatabase(url);
  return {
    url,
    db,
    close: async () => {
      await db.close();
      await drop();
    },
  };
}
