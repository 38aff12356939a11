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

/** Query and key=value parameters whose value is a credential: libpq's password, sslpassword, sslkey, passfile and
 *  anything named like a password, secret or token, whatever its case or percent-encoding. */
const SECRET_KEY = /pass|pwd|secret|token|sslkey|api_?key|credential/i;

/**
 * Hide every credential a database URL (or a libpq key=value string) may carry before it is printed: the userinfo
 * password (`user:pass@`, `:pass@`, with a raw "@" inside too: URL parsers split at the last "@"), and the value
 * of every credential parameter (`?password=`, `&sslpassword=`, `%70assword=`, `password='a b'`). A single scan, no
 * backtracking: linear in the input.
 */
export function redact(url: string): string {
  let out = url;
  const scheme = out.indexOf('//');
  // The userinfo ends at the first "@", or a later one while the text between holds no "/", "?" or "#" (a raw "@"
  // in the password); an "@" in the query stays there.
  let at = scheme === -1 ? -1 : out.indexOf('@', scheme + 2);
  for (
    let next = out.indexOf('@', at + 1);
    at !== -1 && next !== -1 && !/[/?#]/.test(out.slice(at + 1, next));
    next = out.indexOf('@', next + 1)
  )
    at = next;
  if (scheme !== -1 && at > scheme) {
    const userinfo = out.slice(scheme + 2, at);
    const colon = userinfo.indexOf(':');
    if (colon !== -1) out = `${out.slice(0, scheme + 2)}${userinfo.slice(0, colon)}:***${out.slice(at)}`;
  }
  return hideParams(out);
}

/** `key=value` pairs after `?`, `&`, `;`, whitespace or at the start: the values of credential keys become ***. */
function hideParams(s: string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const eq = s.indexOf('=', i);
    if (eq === -1) break;
    // The key: back from "=" to the previous separator.
    let k = eq;
    while (k > i && !/[?&;\s]/.test(s[k - 1]!)) k--;
    const key = safeDecode(s.slice(k, eq));
    // The value: to the next separator, or a quoted libpq value ('it''s' / 'a\'b') to its closing quote.
    let end = eq + 1;
    if (s[end] === "'") {
      end++;
      while (end < s.length && s[end] !== "'") end += s[end] === '\\' ? 2 : 1;
      end = Math.min(s.length, end + 1);
    } else {
      while (end < s.length && !/[&;\s]/.test(s[end]!)) end++;
    }
    out += s.slice(i, eq + 1) + (SECRET_KEY.test(key) ? '***' : s.slice(eq + 1, end));
    i = end;
  }
  return out + s.slice(i);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s.replace(/%([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
}

/** Rewrite `?` placeholders into PostgreSQL's `$n`; our raw SQL never contains a literal `?`. */
export function placeholders(dialect: Dialect, sql: string): string {
  if (dialect === 'sqlite') return sql;
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
