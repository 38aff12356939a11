// @no-database: runs once, not once per database (the CLI gets a SQLite file of its own).
// `npx toolsmith user|token` as an operator runs them: the first start's bootstrap makes the admin and prints a
// one-time link, the next one says how to get another; `token create` prints the token alone on one line, and it
// then authenticates until revoked. Real processes on a fresh data folder.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { resolvePrincipal } from '../../server/auth/principal.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
let dir = '';
let env: NodeJS.ProcessEnv;
const cli = (args: string[], input?: string) => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/toolsmith.mjs'), ...args], { cwd: ROOT, env, input, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-users-'));
  env = { ...process.env, TOOLSMITH_DATA_DIR: dir, DATABASE_URL: '', TOOLSMITH_PUBLIC_URL: 'http://localhost:3999', TOOLSMITH_ADMIN_EMAIL: 'boss@lab.example' };
  assert.equal(cli(['migrate']).code, 0);
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('bootstrap: the first start creates the admin and prints its link; the next says how to get one', () => {
  const first = cli(['user', 'bootstrap']);
  assert.equal(first.code, 0, first.err);
  assert.match(first.out, /created the admin boss@lab\.example/);
  assert.match(first.out, /http:\/\/localhost:3999\/api\/auth\/magic-link\/verify\?token=[A-Za-z0-9_-]+/);
  const second = cli(['user', 'bootstrap']);
  assert.match(second.out, /^sign in at http:\/\/localhost:3999\/sign-in — a new one-time link: npx toolsmith user reset-link EMAIL\n$/);
  assert.match(cli(['user', 'list']).out, /^boss@lab\.example\tadmin\tno password/m);
});

test('user add, role and errors naming the field; token create prints the token alone, which then authenticates', async () => {
  assert.match(cli(['user', 'add', 'ada@lab.example', '--role', 'researcher', '--password-stdin'], 'a long passphrase').out, /added ada@lab\.example \(researcher\)/);
  const dup = cli(['user', 'add', 'ada@lab.example', '--role', 'viewer']);
  assert.equal(dup.code, 2);
  assert.match(dup.err, /email: a user ada@lab\.example already exists/);
  assert.match(cli(['user', 'add', 'x@lab.example', '--role', 'owner']).err, /role: must be one of viewer, researcher, admin/);
  assert.match(cli(['user', 'add', 'short@lab.example', '--role', 'viewer', '--password-stdin'], 'short').err, /password: at least 10 characters/);
  const made = cli(['token', 'create', '--user', 'ada@lab.example', '--name', 'ci', '--expires-days', '7']);
  assert.equal(made.code, 0, made.err);
  assert.match(made.out, /^tsk_[A-Za-z0-9_-]{43}\n$/);
  const token = made.out.trim();
  const db: Database = await openDatabase(`file:${path.join(dir, 'toolsmith.db')}`);
  try {
    const p = await resolvePrincipal(db, new Headers({ authorization: `Bearer ${token}` }));
    assert.equal(p?.email, 'ada@lab.example');
    assert.equal(p?.role, 'researcher');
    const id = (await db.prisma.apiToken.findFirst())!.id;
    assert.match(cli(['token', 'revoke', id]).out, new RegExp(`revoked ${id}`));
    assert.equal(await resolvePrincipal(db, new Headers({ authorization: `Bearer ${token}` })), null);
    const audit = (await db.prisma.auditLog.findMany({ orderBy: { id: 'asc' } })).map((a) => `${a.via} ${a.action}`);
    assert.deepEqual(audit, ['cli user.bootstrap', 'cli user.add', 'cli token.create', 'cli token.revoke']);
  } finally {
    await db.close();
  }
  assert.match(cli(['token', 'create']).err, /token create needs --user EMAIL/);
});
