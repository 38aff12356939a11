import fs from 'node:fs';
import path from 'node:path';
import type { Prisma, PrismaClient } from './generated/sqlite/client.ts';
import { UserError } from '../../contracts/errors.ts';
import { config } from '../config.ts';
import { parseDatabaseUrl, placeholders, redact, type Dialect } from './url.ts';
import { pgConnectionError } from './pg-errors.ts';
import { privateSqliteFiles } from './private-files.ts';

export type { PrismaClient };
/** What raw SQL runs on: the client itself or an interactive transaction. */
export type Sql = Pick<PrismaClient, '$queryRawUnsafe' | '$executeRawUnsafe'>;
/** An interactive transaction's client (inTransaction's): the models and raw SQL, all on that transaction. */
export type Tx = Prisma.TransactionClient;

/**
 * The one database handle everything uses. `prisma` is typed with the SQLite client; the PostgreSQL client is
 * generated from the same models, so the two are interchangeable at run time.
 */
export interface Database {
  prisma: PrismaClient;
  dialect: Dialect;
  url: string;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], on?: Sql): Promise<T[]>;
  execute(sql: string, params?: unknown[], on?: Sql): Promise<number>;
  close(): Promise<void>;
}

export async function openDatabase(databaseUrl = config().databaseUrl): Promise<Database> {
  const parsed = parseDatabaseUrl(databaseUrl);
  let prisma: PrismaClient;
  if (parsed.dialect === 'sqlite') {
    if (parsed.file !== ':memory:' && !fs.existsSync(parsed.file)) {
      throw new UserError(`the SQLite database ${parsed.file} does not exist yet`, {
        fix: 'run `npx toolsmith migrate` (npm start does it)',
      });
    }
    privateSqliteFiles(parsed.file); // tightens a database an older version left readable
    const { PrismaBetterSqlite3 } = await import('@prisma/adapter-better-sqlite3');
    const { PrismaClient: Client } = await import('./generated/sqlite/client.ts');
    prisma = new Client({ adapter: new PrismaBetterSqlite3({ url: parsed.file, timeout: 15000 }) });
  } else {
    const { PrismaPg } = await import('@prisma/adapter-pg');
    const { PrismaClient: Client } = await import('./generated/postgresql/client.ts');
    prisma = new Client({
      adapter: new PrismaPg({ connectionString: parsed.url, max: 10, connectionTimeoutMillis: 10000 }),
    }) as unknown as PrismaClient;
  }
  const dialect = parsed.dialect;
  const db: Database = {
    prisma,
    dialect,
    url: databaseUrl,
    query: (sql, params = [], on = prisma) => on.$queryRawUnsafe(placeholders(dialect, sql), ...params),
    execute: (sql, params = [], on = prisma) => on.$executeRawUnsafe(placeholders(dialect, sql), ...params),
    close: () => prisma.$disconnect(),
  };
  try {
    if (dialect === 'sqlite') {
      // WAL lets the web process read while a worker writes; NORMAL sync is durable across process crashes.
      await prisma.$queryRawUnsafe('PRAGMA journal_mode = WAL');
      await prisma.$queryRawUnsafe('PRAGMA synchronous = NORMAL');
    }
    await prisma.$queryRawUnsafe('SELECT 1');
    await db.query('SELECT "name" FROM "_toolsmith_migrations" LIMIT 1').catch(() => {
      throw new UserError(`the database at ${redact(databaseUrl)} has no Toolsmith tables`, {
        fix: 'run `npx toolsmith migrate` (npm start does it)',
      });
    });
  } catch (e) {
    await prisma.$disconnect().catch(() => {});
    if (e instanceof UserError) throw e;
    if (dialect === 'postgresql') throw pgConnectionError(databaseUrl, (e as { cause?: unknown }).cause ?? e);
    throw new UserError(
      `cannot open the SQLite database ${redact(databaseUrl)}: ${(e as Error).message.split('\n')[0]}`,
      { fix: 'check that the file is a Toolsmith database and writable' },
    );
  }
  return db;
}
