// @no-database: runs once, not once per database (the CLI gets a SQLite file of its own).
// `npx toolsmith user|token` as an operator runs them: the first start's bootstrap makes the admin and prints a
// one-time link, the next one says how to get another; `token create` prints the token alone on one line, and it
// then authenticates until revoked; disable, enable, remove and a password reset take access away at once. Real
// processes on a fresh data folder.
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
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/toolsmith.mjs'), ...args], {
    cwd: ROOT,
    env,
    input,
    encoding: 'utf8',
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-users-'));
  env = {
    ...process.env,
    TOOLSMITH_DATA_DIR: dir,
    DATABASE_URL: '',
    TOOLSMITH_PUBLIC_URL: 'http://localhost:3999',
    TOOLSMITH_ADMIN_EMAIL: 'boss@lab.example',
  };
  assert.equal(cli(['migrate']).code, 0);
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('bootstrap: the first start creates the admin and prints its link; the next says how to get one', () => {
  const first = cli(['user', 'bootstrap']);
  assert.equal(first.code, 0, first.err);
  assert.match(first.out, /created the admin boss@lab\.example/);
  assert.match(first.out, /http:\/\/localhost:3999\/api\/auth\/magic-link\/verify\?token=[A-Za-z0-9_-]+/);
  const second = cli(['user', 'bootstrap']);
  assert.match(
    second.out,
    /^sign in at http:\/\/localhost:3999\/sign-in — a new one-time link: npx toolsmith user reset-link EMAIL\n$/,
  );
  assert.match(cli(['user', 'list']).out, /^boss@lab\.example\tadmin\tno password/m);
});

test('user add, role and errors naming the field; token create prints the token alone, which then authenticates', async () => {
  assert.match(
    cli(['user', 'add', 'ada@lab.example', '--role', 'researcher', '--password-stdin'], 'a long passphrase').out,
    /added ada@lab\.example \(researcher\)/,
  );
  const dup = cli(['user', 'add', 'ada@lab.example', '--role', 'viewer']);
  assert.equal(dup.code, 2);
  assert.match(dup.err, /email: a user ada@lab\.example already exists/);
  assert.match(
    cli(['user', 'add', 'x@lab.example', '--role', 'owner']).err,
    /role: must be one of viewer, researcher, admin/,
  );
  assert.match(
    cli(['user', 'add', 'short@lab.example', '--role', 'viewer', '--password-stdin'], 'short').err,
    /password: at least 10 characters/,
  );
  const made = cli([
    'token',
    'create',
    '--user',
    'ada@lab.example',
    '--name',
    'ci',
    '--expires-days',
    '7',
    '--scope',
    'write',
  ]);
  assert.equal(made.code, 0, made.err);
  assert.match(made.out, /^tsk_[A-Za-z0-9_-]{43}\n$/);
  const token = made.out.trim();
  const db: Database = await openDatabase(`file:${path.join(dir, 'toolsmith.db')}`);
  try {
    const p = await resolvePrincipal(db, new Headers({ authorization: `Bearer ${token}` }));
    assert.equal(p?.email, 'ada@lab.example');
    assert.equal(p?.role, 'researcher');
    const id = (await db.prisma.apiToken.findFirst())!.id;
    assert.match(cli(['token', 'list']).out, new RegExp(`^${id}\tada@lab\.example\twrite\tci\tactive$`, 'm'));
    assert.match(cli(['token', 'revoke', id]).out, new RegExp(`revoked ${id}`));
    assert.equal(await resolvePrincipal(db, new Headers({ authorization: `Bearer ${token}` })), null);
    const audit = (await db.prisma.auditLog.findMany({ orderBy: { id: 'asc' } })).map((a) => `${a.via} ${a.action}`);
    assert.deepEqual(audit, ['cli user.bootstrap', 'cli user.add', 'cli token.create', 'cli token.revoke']);
  } finally {
    await db.close();
  }
  assert.match(cli(['token', 'create']).err, /token create needs --user EMAIL/);
  assert.match(
    cli(['token', 'create', '--user', 'ada@lab.example', '--scope', 'everything']).err,
    /scope: one of read, write, admin, not "everything"/,
  );
});

test('user disable, enable, remove and password: the token stops at once, the list shows the status, errors name the field', async () => {
  assert.equal(
    cli(['user', 'add', 'cy@lab.example', '--role', 'researcher', '--password-stdin'], 'cy long passphrase').code,
    0,
  );
  const token = cli(['token', 'create', '--user', 'cy@lab.example']).out.trim();
  const db: Database = await openDatabase(`file:${path.join(dir, 'toolsmith.db')}`);
  const who = () => resolvePrincipal(db, new Headers({ authorization: `Bearer ${token}` }));
  try {
    assert.equal((await who())?.email, 'cy@lab.example');
    const off = cli(['user', 'disable', 'cy@lab.example']);
    assert.equal(off.code, 0, off.err);
    assert.match(off.out, /cy@lab\.example is disabled: no sign-in, sessions and API tokens ended/);
    assert.equal(await who(), null, 'the token is refused on the next request');
    assert.match(cli(['user', 'list']).out, /^cy@lab\.example\tresearcher\tpassword\t\S+\tdisabled$/m);
    assert.match(cli(['user', 'reset-link', 'cy@lab.example']).err, /EMAIL: cy@lab\.example is disabled/);
    assert.match(cli(['user', 'enable', 'cy@lab.example']).out, /cy@lab\.example may sign in again \(researcher\)/);
    assert.match(cli(['user', 'list']).out, /^cy@lab\.example\tresearcher\tpassword\t\S+\tactive$/m);
    // A password reset ends the (new) token too.
    const t2 = cli(['token', 'create', '--user', 'cy@lab.example']).out.trim();
    assert.match(
      cli(['user', 'password', 'cy@lab.example'], 'another long passphrase').out,
      /ended 0 session\(s\) and 1 API token\(s\)/,
    );
    assert.equal(await resolvePrincipal(db, new Headers({ authorization: `Bearer ${t2}` })), null);
    // Remove: gone from the list; what they made keeps its author.
    const cy = (await db.prisma.user.findUnique({ where: { email: 'cy@lab.example' } }))!;
    await db.prisma.run.create({
      data: {
        id: 'run_cy',
        name: 'cy run',
        kind: 'train',
        recipeSpec: '{}',
        seed: 1,
        codeVersion: 'test',
        status: 'succeeded',
        createdBy: cy.id,
      },
    });
    const rm = cli(['user', 'remove', 'cy@lab.example']);
    assert.equal(rm.code, 0, rm.err);
    assert.doesNotMatch(cli(['user', 'list']).out, /cy@lab\.example/);
    const run = await db.prisma.run.findUnique({ where: { id: 'run_cy' } });
    assert.equal((await db.prisma.user.findUnique({ where: { id: run!.createdBy! } }))?.email, 'cy@lab.example');
    assert.match(cli(['user', 'disable', 'cy@lab.example']).err, /email: cy@lab\.example was removed/);
    assert.match(cli(['user', 'disable']).err, /user disable needs an EMAIL/);
    assert.match(cli(['user', 'remove', 'nobody@lab.example']).err, /email: no user nobody@lab\.example/);
    // The only admin stays.
    assert.match(
      cli(['user', 'disable', 'boss@lab.example']).err,
      /disable: boss@lab\.example is the only active admin/,
    );
    const audit = (
      await db.prisma.auditLog.findMany({
        where: { action: { in: ['user.disable', 'user.enable', 'user.remove'] } },
        orderBy: { id: 'asc' },
      })
    ).map((a) => a.action);
    assert.deepEqual(audit, ['user.disable', 'user.enable', 'user.remove']);
  } finally {
    await db.close();
  }
});
