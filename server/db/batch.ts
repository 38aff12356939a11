import type { Database, Sql, Tx } from './client.ts';

/**
 * Multi-row INSERT in chunks: one statement per chunk instead of one per row (the difference bench:db measures).
 * `suffix` is appended verbatim (e.g. an ON CONFLICT clause). Values must be numbers, strings or null.
 */
export async function insertRows(
  db: Database,
  table: string,
  columns: string[],
  rows: unknown[][],
  opts: { suffix?: string; on?: Sql; maxParams?: number } = {},
): Promise<void> {
  if (rows.length === 0) return;
  // SQLite allows 32766 bound parameters per statement, PostgreSQL 65535; stay well below both.
  const perChunk = Math.max(1, Math.floor((opts.maxParams ?? 30000) / columns.length));
  const head = `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES `;
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  for (let i = 0; i < rows.length; i += perChunk) {
    const chunk = rows.slice(i, i + perChunk);
    const sql = head + Array(chunk.length).fill(tuple).join(', ') + (opts.suffix ? ` ${opts.suffix}` : '');
    await db.execute(sql, chunk.flat(), opts.on);
  }
}

/** Run `fn` in one transaction (many inserts, one commit: the other half of batching's speed-up). */
export async function inTransaction<T>(db: Database, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.prisma.$transaction(
    async (tx) => {
      if (db.dialect === 'sqlite') await db.execute(TAKE_WRITE_LOCK, [], tx);
      return fn(tx);
    },
    { timeout: 120000, maxWait: 30000 },
  );
}

// Prisma opens SQLite transactions with a plain (deferred) BEGIN: one that reads and then writes fails at its first
// write, at once and without the busy timeout, when another process (the worker, the web server, the CLI) committed
// in between (SQLITE_BUSY). A write that changes nothing, first, takes the write lock, waiting for it as any write does.
const TAKE_WRITE_LOCK = `UPDATE "_toolsmith_migrations" SET "name" = "name" WHERE 0 = 1`;
