import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { parseDatabaseUrl, placeholders, redact } from '../../server/db/url.ts';
import { UserError } from '../../contracts/errors.ts';

/** Assert `fn` throws a one-line UserError that names DATABASE_URL and says how to fix it. */
function throwsUserError(fn: () => unknown, mustInclude: RegExp): UserError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof UserError, `expected a UserError, got ${String(caught)}`);
  const err = caught as UserError;
  assert.match(err.message, /DATABASE_URL/);
  assert.match(err.message, mustInclude);
  assert.ok(!err.message.includes('\n'), `one line expected: ${JSON.stringify(err.message)}`);
  assert.ok(err.fix, 'a fix is given');
  assert.match(err.fix!, /file:\.\/data\/toolsmith\.db/);
  assert.match(err.fix!, /postgres:\/\//);
  assert.ok(err.message.includes(err.fix!), 'the message carries the fix');
  return err;
}

test('parseDatabaseUrl: file: URLs become absolute SQLite paths', () => {
  assert.deepEqual(parseDatabaseUrl('file:./data/toolsmith.db'), {
    dialect: 'sqlite',
    file: path.resolve('data/toolsmith.db'),
  });
  assert.deepEqual(parseDatabaseUrl('file:rel.db'), { dialect: 'sqlite', file: path.resolve('rel.db') });
  assert.deepEqual(parseDatabaseUrl('file:/abs/dir/x.db'), { dialect: 'sqlite', file: '/abs/dir/x.db' });
  assert.deepEqual(parseDatabaseUrl('file:///abs/dir/x.db'), { dialect: 'sqlite', file: '/abs/dir/x.db' });
  assert.deepEqual(
    parseDatabaseUrl('  file:/abs/x.db \n'),
    { dialect: 'sqlite', file: '/abs/x.db' },
    'surrounding whitespace is ignored',
  );
});

test('parseDatabaseUrl: file::memory: stays in memory', () => {
  assert.deepEqual(parseDatabaseUrl('file::memory:'), { dialect: 'sqlite', file: ':memory:' });
});

test('parseDatabaseUrl: postgres:// and postgresql:// URLs', () => {
  assert.deepEqual(parseDatabaseUrl('postgres://u:p@db.example:5432/toolsmith'), {
    dialect: 'postgresql',
    url: 'postgres://u:p@db.example:5432/toolsmith',
  });
  assert.deepEqual(parseDatabaseUrl('postgresql://localhost/x?sslmode=disable'), {
    dialect: 'postgresql',
    url: 'postgresql://localhost/x?sslmode=disable',
  });
  // A Unix-socket URL names its host in the query string.
  assert.deepEqual(parseDatabaseUrl('postgres:///toolsmith?host=/var/run/postgresql'), {
    dialect: 'postgresql',
    url: 'postgres:///toolsmith?host=/var/run/postgresql',
  });
  assert.equal(parseDatabaseUrl(' postgres://h/db ').dialect, 'postgresql');
});

test('parseDatabaseUrl: file: with no file is refused', () => {
  const err = throwsUserError(() => parseDatabaseUrl('file:'), /names no file/);
  assert.match(err.message, /"file:"/);
});

test('parseDatabaseUrl: unknown schemes and empty strings are refused', () => {
  throwsUserError(() => parseDatabaseUrl('mysql://root@localhost/db'), /neither a file: nor a postgres:\/\/ URL/);
  throwsUserError(() => parseDatabaseUrl(''), /neither/);
  throwsUserError(() => parseDatabaseUrl('./data/toolsmith.db'), /neither/);
  throwsUserError(() => parseDatabaseUrl('sqlite:./x.db'), /neither/);
});

test('parseDatabaseUrl: unreadable PostgreSQL URLs are refused', () => {
  throwsUserError(() => parseDatabaseUrl('postgres://'), /not a readable PostgreSQL URL/);
  throwsUserError(() => parseDatabaseUrl('postgres://host:notaport/db'), /not a readable PostgreSQL URL/);
  throwsUserError(() => parseDatabaseUrl('postgresql://[::1/db'), /not a readable PostgreSQL URL/);
});

test('parseDatabaseUrl: errors never print the password', () => {
  const a = throwsUserError(() => parseDatabaseUrl('mysql://admin:hunter2@localhost/db'), /neither/);
  assert.ok(!a.message.includes('hunter2'), a.message);
  assert.match(a.message, /admin:\*\*\*@localhost/);
  const b = throwsUserError(() => parseDatabaseUrl('postgres://admin:hunter2@host:badport/db'), /not a readable/);
  assert.ok(!b.message.includes('hunter2'), b.message);
});

test('redact hides the password and nothing else', () => {
  assert.equal(redact('postgres://user:secret@host:5432/db'), 'postgres://user:***@host:5432/db');
  assert.equal(redact('postgresql://user:s3cr:et@host/db?x=1'), 'postgresql://user:***@host/db?x=1');
  assert.equal(redact('postgres://user@host/db'), 'postgres://user@host/db', 'no password: unchanged');
  assert.equal(redact('postgres://host/db'), 'postgres://host/db');
  assert.equal(redact('file:./data/toolsmith.db'), 'file:./data/toolsmith.db');
  assert.equal(redact(''), '');
});

test('redact hides a password that contains a raw "@"', () => {
  // WHATWG URL parsing (what pg uses) takes the last "@" before the path as the end of the user info.
  const url = 'postgres://user:p@ss@host/db';
  assert.equal(new URL(url).hostname, 'host');
  const out = redact(url);
  assert.ok(!out.includes('ss'), out);
  assert.equal(out, 'postgres://user:***@host/db');
});

test('placeholders: SQLite keeps ?, PostgreSQL gets $1..$n in order', () => {
  const sql = 'SELECT * FROM "Job" WHERE "a" = ? AND "b" IN (?, ?) LIMIT ?';
  assert.equal(placeholders('sqlite', sql), sql);
  assert.equal(placeholders('postgresql', sql), 'SELECT * FROM "Job" WHERE "a" = $1 AND "b" IN ($2, $3) LIMIT $4');
  assert.equal(placeholders('postgresql', 'SELECT 1'), 'SELECT 1');
  const many = Array.from({ length: 12 }, () => '?').join(',');
  assert.equal(placeholders('postgresql', many), Array.from({ length: 12 }, (_, i) => `$${i + 1}`).join(','));
});

test('redact: an "@" after the host (in the query) is not taken for the password\'s end', () => {
  assert.equal(redact('postgres://u:pw@host/db?application_name=a@b'), 'postgres://u:***@host/db?application_name=a@b');
  assert.equal(
    redact('postgres://u:a/b@host/db'),
    'postgres://u:***@host/db',
    'a password with a raw "/" is still hidden',
  );
});
