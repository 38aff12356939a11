/** What the diagnostics ask of the database itself: that it answers, and how many migrations it has applied. */
import type { Database } from '../db/client.ts';

/** One round trip (`SELECT 1`); rejects when the database does not answer. */
export async function pingDatabase(db: Database): Promise<void> {
  await db.query('SELECT 1');
}

/** How many migrations _toolsmith_migrations records as applied. */
export async function countAppliedMigrations(db: Database): Promise<number> {
  const rows = await db.query<{ n: number | bigint }>('SELECT COUNT(*) AS "n" FROM "_toolsmith_migrations"');
  return Number(rows[0].n);
}
