// @no-database: runs once (its own SQLite database in a fresh data folder).
// Everything Toolsmith writes is its users' alone: after a real run (the CLI's migrate, a worker training the micro
// recipe through the real trainer, a model made by `model init`), no path under the data folder has a group or
// other permission bit, the database's -wal and -shm included; a database opened by a process without Toolsmith's
// umask is private too; and set-up tightens a folder an older version left world-readable.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '../../server/db/migrate.ts';
import { openDatabase } from '../../server/db/client.ts';
import { launchTraining } from '../../server/lifecycle.ts';
import { MICRO_INPUT } from '../../server/recipes/defaults.ts';
import { killAll, outputs, spawnWorker, waitFor, ROOT } from '../helpers/proc.ts';
import { tightenDataDir } from '../../scripts/setup.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'private-files-'));
after(async () => {
  await killAll();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Every path under `root` (itself included) whose mode has a group or other bit, as "mode path". */
function leaks(root: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink()) return;
    if (st.mode & 0o077) out.push(`${(st.mode & 0o777).toString(8)} ${path.relative(root, p) || '.'}`);
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) walk(path.join(p, n));
  };
  walk(root);
  return out;
}

function count(root: string): number {
  let n = 0;
  const walk = (p: string) => {
    n++;
    if (fs.lstatSync(p).isDirectory()) for (const c of fs.readdirSync(p)) walk(path.join(p, c));
  };
  walk(root);
  return n;
}

test('after a real run the data folder holds nothing another account can read: database, -wal/-shm, runs, checkpoints, models', async () => {
  const data = path.join(tmp, 'data'); // created by Toolsmith itself
  const url = `file:${path.join(data, 'toolsmith.db')}`;
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLSMITH_DATA_DIR: data, DATABASE_URL: url };
  for (const k of Object.keys(env)) if (k.startsWith('TOOLSMITH_') && k !== 'TOOLSMITH_DATA_DIR') delete env[k];
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(ROOT, 'bin/toolsmith.mjs'), ...args], { cwd: ROOT, env, encoding: 'utf8' });
  const m = cli('migrate');
  assert.equal(m.status, 0, m.stderr);
  const init = cli(
    'model',
    'init',
    '--name',
    'tiny-private',
    '--layers',
    '1',
    '--hidden',
    '16',
    '--heads',
    '2',
    '--tokenizer',
    'char',
  );
  assert.equal(init.status, 0, init.stderr);
  const db = await openDatabase(url);
  try {
    const { runId } = await launchTraining(db, { spec: { ...MICRO_INPUT, name: 'private-files' } });
    const w = spawnWorker(url, 'private-1', {
      leaseSeconds: 5,
      heartbeatSeconds: 1,
      env: { TOOLSMITH_DATA_DIR: data },
    });
    const run = await waitFor(
      `run ${runId} to finish`,
      async () => {
        const r = await db.prisma.run.findUniqueOrThrow({ where: { id: runId } });
        return ['succeeded', 'failed', 'cancelled'].includes(r.status) ? r : null;
      },
      { timeoutMs: 240_000, intervalMs: 250, detail: () => outputs([w]) },
    );
    assert.equal(run.status, 'succeeded', run.error ?? '');
    // While the database is open its -wal and -shm exist: they are what `ls -l` shows a curious neighbour.
    for (const f of ['toolsmith.db', 'toolsmith.db-wal', 'toolsmith.db-shm'])
      assert.ok(fs.existsSync(path.join(data, f)), f);
    assert.ok(fs.readdirSync(path.join(data, 'runs', runId, 'checkpoints')).length > 0, 'the run wrote checkpoints');
    assert.ok(fs.existsSync(path.join(data, 'models', 'tiny-private', 'config.json')));
    const n = count(data);
    assert.ok(n > 20, `only ${n} paths: the walk saw too little`);
    assert.deepEqual(leaks(data), [], `paths under ${data} readable by others`);
  } finally {
    await db.close();
  }
});

test("a database created and opened by a process without Toolsmith's umask (library use) is private as well", async () => {
  const old = process.umask(0o022);
  try {
    const dir = path.join(tmp, 'library', 'data');
    const url = `file:${path.join(dir, 'x.db')}`;
    await migrate(url);
    const db = await openDatabase(url);
    try {
      await db.execute('CREATE TABLE "probe" ("x" INTEGER)');
      await db.execute('INSERT INTO "probe" VALUES (1)');
      for (const f of ['x.db', 'x.db-wal', 'x.db-shm']) {
        const mode = fs.statSync(path.join(dir, f)).mode & 0o777;
        assert.equal(mode, 0o600, `${f}: ${mode.toString(8)}`);
      }
      assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    } finally {
      await db.close();
    }
    // An existing world-readable database is tightened when it is opened.
    fs.chmodSync(path.join(dir, 'x.db'), 0o644);
    fs.chmodSync(dir, 0o755);
    const again = await openDatabase(url);
    await again.close();
    assert.equal(fs.statSync(path.join(dir, 'x.db')).mode & 0o777, 0o600);
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
  } finally {
    process.umask(old);
  }
});

test('a database in a shared sticky folder (such as /tmp) is private, and the folder stays open to others', async () => {
  const shared = path.join(tmp, 'shared');
  fs.mkdirSync(shared);
  fs.chmodSync(shared, 0o1777);
  const url = `file:${path.join(shared, 'y.db')}`;
  await migrate(url);
  const db = await openDatabase(url);
  await db.close();
  assert.equal(fs.statSync(path.join(shared, 'y.db')).mode & 0o777, 0o600);
  assert.equal(fs.statSync(shared).mode & 0o7777, 0o1777, 'the sticky folder keeps its mode');
});

test('set-up tightens an existing world-readable data folder (chmod -R go-rwx), once, without following links', () => {
  const data = path.join(tmp, 'old-data');
  const outside = path.join(tmp, 'outside.txt');
  fs.writeFileSync(outside, 'not ours to change', { mode: 0o644 });
  fs.chmodSync(outside, 0o644);
  fs.mkdirSync(path.join(data, 'runs', 'r_1', 'checkpoints', 'step-1'), { recursive: true, mode: 0o755 });
  for (const [f, mode] of [
    ['toolsmith.db', 0o644],
    ['toolsmith.db-wal', 0o664],
    ['toolsmith.db-shm', 0o666],
    ['runs/r_1/checkpoints/step-1/model.safetensors', 0o644],
    ['auth-secret', 0o600],
  ] as const) {
    fs.writeFileSync(path.join(data, f), 'x');
    fs.chmodSync(path.join(data, f), mode);
  }
  for (const d of ['', 'runs', 'runs/r_1', 'runs/r_1/checkpoints', 'runs/r_1/checkpoints/step-1'])
    fs.chmodSync(path.join(data, d), 0o755);
  fs.symlinkSync(outside, path.join(data, 'link'));
  assert.equal(leaks(data).length, 9);
  assert.equal(tightenDataDir([data]), 9);
  assert.deepEqual(leaks(data), []);
  assert.equal(fs.statSync(path.join(data, 'toolsmith.db')).mode & 0o777, 0o600, 'the owner keeps read and write');
  assert.equal(fs.statSync(path.join(data, 'runs')).mode & 0o777, 0o700);
  assert.equal(fs.statSync(outside).mode & 0o777, 0o644, 'a link is not followed');
  assert.equal(tightenDataDir([data]), 0, 'idempotent: a second pass changes nothing');
});
