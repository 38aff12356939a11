// @no-database: runs once, not once per database.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { RemoteSandbox } from '../../workers/sandbox/remote.ts';
import { ROOT, waitFor } from '../helpers/proc.ts';

// `npx toolsmith sandbox run|serve` as real processes.
const BIN = path.join(ROOT, 'bin/toolsmith.mjs');
const live = new Set<ChildProcess>();
after(() => {
  for (const c of live) c.kill('SIGKILL');
});

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete e.TOOLSMITH_SANDBOX_URLS;
  if (!('TOOLSMITH_SANDBOX_TOKEN' in extra)) delete e.TOOLSMITH_SANDBOX_TOKEN;
  return e;
}

function start(args: string[], extraEnv: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: env(extraEnv),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      live.delete(child);
      resolve(code);
    }),
  );
  return { child, exited, out: () => stdout, err: () => stderr };
}

async function sandboxRun(code: string, flags: string[] = []) {
  const p = start(['sandbox', 'run', ...flags]);
  p.child.stdin!.end(code);
  const exit = await p.exited;
  return { exit, stdout: p.out(), stderr: p.err() };
}

describe('toolsmith sandbox run', () => {
  test('an ok call: one JSON SandboxResult on stdout, exit 0', async () => {
    const r = await sandboxRun('print(sum(range(10)))\n');
    assert.equal(r.exit, 0, r.stderr);
    assert.equal(r.stdout.trim().split('\n').length, 1);
    const res = JSON.parse(r.stdout);
    assert.equal(res.status, 'ok');
    assert.equal(res.stdout, '45\n');
    assert.equal(res.exitCode, 0);
  });

  test('an error call: exit 0, status error, error_type', async () => {
    const r = await sandboxRun('x = 1\nraise KeyError("k")\n');
    assert.equal(r.exit, 0, r.stderr);
    const res = JSON.parse(r.stdout);
    assert.equal(res.status, 'error');
    assert.equal(res.errorType, 'KeyError');
    assert.equal(res.errorLine, 2);
  });

  test('--timeout 0.5 with an infinite loop: status timeout, exit 0', async () => {
    const r = await sandboxRun('while True:\n    pass\n', ['--timeout', '0.5']);
    assert.equal(r.exit, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).status, 'timeout');
  });

  test('bad flags: exit 2 with one line', async () => {
    for (const flags of [['--timeout', 'soon'], ['--memory', '-5'], ['--nope']]) {
      const r = await sandboxRun('print(1)', flags);
      assert.equal(r.exit, 2, flags.join(' '));
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });

  test('--help describes run and serve', async () => {
    const p = start(['sandbox', '--help']);
    assert.equal(await p.exited, 0);
    assert.match(p.out(), /sandbox run/);
    assert.match(p.out(), /sandbox serve/);
    assert.match(p.out(), /--token/);
  });
});

describe('toolsmith sandbox serve', () => {
  test('refuses to start without a token', async () => {
    const p = start(['sandbox', 'serve', '--port', '0']);
    assert.equal(await p.exited, 2);
    assert.match(p.err(), /token/);
  });

  test('serves a RemoteSandbox call with its token, then exits 0 on SIGTERM', async () => {
    const token = 'cli-test-token-42';
    const p = start(['sandbox', 'serve', '--port', '0', '--size', '1'], { TOOLSMITH_SANDBOX_TOKEN: token });
    const url = await waitFor(
      'the node to listen',
      () => {
        if (p.child.exitCode !== null) throw new Error(`serve exited early:\n${p.out()}\n${p.err()}`);
        return /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(p.out())?.[1];
      },
      { timeoutMs: 120000 }, // the pool starts first: a heavy zygote's imports take a while on a busy machine
    );
    const remote = new RemoteSandbox({ urls: [url], token, log: () => {} });
    try {
      const r = await remote.run({ code: 'print("from the node")' });
      assert.equal(r.status, 'ok', JSON.stringify(r));
      assert.equal(r.stdout, 'from the node\n');
      const health = await fetch(`${url}/health`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(health.status, 200);
      assert.equal((await fetch(`${url}/health`)).status, 401);
    } finally {
      await remote.close();
    }
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0, p.out() + p.err());
    assert.match(p.out(), /stopped/);
  });
});
