import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';

export type Dialect = 'sqlite' | 'postgresql';
export type ParsedUrl = { dialect: 'sqlite'; file: string } | { dialect: 'postgresql'; url: string };

const FIX = 'set DATABASE_URL to file:./data/toolsmith.db (SQLite) or postgres://user:pass@host:5432/db (PostgreSQL)';

/** Decide the database from DATABASE_URL. Pure; throws a UserError naming the problem. */
export function parseDatabaseUrl(raw: string): ParsedUrl {
  const url = raw.trim();
  if (url.startsWith('file:')) {
    const file = url.slice('file:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') throw new UserError(`DATABASE_URL "${raw}" names no file`, { fix: FIX });
    return { dialect: 'sqlite', file: file === ':memory:' ? file : path.resolve(file) };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    try {
      const u = new URL(url);
      if (!u.hostname && !u.searchParams.get('host')) throw new Error('no host');
    } catch {
      throw new UserError(`DATABASE_URL "${redact(url)}" is not a readable PostgreSQL URL`, { fix: FIX });
    }
    return { dialect: 'postgresql', url };
  }
  throw new UserError(`DATABASE_URL "${redact(url)}" is neither a file: nor a postgres:// URL`, { fix: FIX });
}

/** Hide a password in a URL before printing it (one with a raw "@" too: URL parsers split at the last "@"). */
export function redact(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@(?:[^@/?#]*@)*/, '$1***@');
}

/** Rewrite `?` placeholders into PostgreSQL's `$n`; our raw SQL never contains a literal `?`. */
export function placeholders(dialect: Dialect, sql: string): string {
  if (dialect === 'sqlite') return sql;
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
