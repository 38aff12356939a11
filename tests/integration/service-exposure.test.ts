// @no-database: runs once, not once per database.
// serve-model and sandbox nodes as an attacker meets them, on real servers bound to 127.0.0.1 (traffic goes to
// loopback only): Host and Origin checks, tokens, a non-loopback bind without a token, the sandbox node's maxima
// and its header/request timeouts. serve-model's cases need the trainer's Python with torch (an ONNX export).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import { SandboxNode } from '../../workers/sandbox/http-node.ts';
import { RemoteSandbox } from '../../workers/sandbox/remote.ts';
import { trainerPython } from '../../workers/trainer/python.ts';
import { ROOT, waitFor } from '../helpers/proc.ts';

const BIN = path.join(ROOT, 'bin/toolsmith.mjs');
const TOKEN = 'node-token-0123456789';
const quiet = () => {};
const live = new Set<ChildProcess>();
after(() => {
  for (const c of live) c.kill('SIGKILL');
});

/** A request with any Host and headers (fetch will not send a foreign Host). */
function request(
  port: number,
  p: string,
  o: { method?: string; host?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: p,
        method: o.method ?? 'GET',
        setHost: false,
        headers: {
          host: o.host ?? `127.0.0.1:${port}`,
          ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...o.headers,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/** A client that sends its request a few bytes at a time and never finishes: resolves once the server closes the socket. */
function slowClient(port: number, head: string): Promise<{ reply: string; closedByServer: boolean; sent: number }> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let reply = '';
    let sent = 0;
    let stillSending = true;
    sock.on('data', (d) => (reply += d));
    sock.on('connect', () => {
      sock.write(head);
      const trickle = setInterval(() => {
        if (!stillSending) return clearInterval(trickle);
        sock.write('a'); // never a blank line (headers) / never the whole body
        sent++;
      }, 50);
    });
    // We never end or destroy the socket: the server's FIN is what closes it.
    sock.on('end', () => {
      stillSending = false;
      sock.end();
    });
    sock.on('close', () => {
      stillSending = false;
      resolve({ reply, closedByServer: true, sent });
    });
    sock.on('error', () => {});
  });
}

describe('sandbox node', () => {
  let pool: SandboxPool;
  let node: SandboxNode;
  let port = 0;
  // A node of the same pool whose header and request timeouts are short enough to watch them fire. Only the tests
  // of those timeouts use it: on a busy machine a short timeout could fire on a test's own request.
  let strict: SandboxNode;
  let strictPort = 0;
  const auth = { authorization: `Bearer ${TOKEN}` };
  // The calls' own wall-clock limit is not tested here: the node's maximum and the calls' limit are generous.
  const limits = { memoryMb: 512, timeoutS: 60, maxOutputBytes: 4096 };
  before(async () => {
    pool = await SandboxPool.start({ size: 1, log: quiet });
    node = new SandboxNode({ sandbox: pool, token: TOKEN, port: 0, log: quiet, limits });
    port = (await node.listen()).port;
    strict = new SandboxNode({
      sandbox: pool,
      token: TOKEN,
      port: 0,
      log: quiet,
      limits,
      headersTimeoutMs: 400,
      requestTimeoutMs: 1000,
    });
    strictPort = (await strict.listen()).port;
  });
  after(async () => {
    await strict?.close(1000);
    await node?.close(1000);
    await pool?.close();
  });

  test('a foreign Host is 421 and a cross-site Origin 403, before the token is even looked at', async () => {
    const foreign = await request(port, '/health', { host: 'rebind.evil.example', headers: auth });
    assert.equal(foreign.status, 421);
    assert.match(JSON.parse(foreign.body).error, /does not answer to the host "rebind\.evil\.example"/);
    const cross = await request(port, '/run', {
      method: 'POST',
      headers: { ...auth, origin: 'https://evil.example' },
      body: JSON.stringify({ code: 'print(1)' }),
    });
    assert.equal(cross.status, 403);
    assert.match(JSON.parse(cross.body).error, /Origin "https:\/\/evil\.example" is not an allowed host/);
    assert.equal(
      (await request(port, '/health', { headers: { ...auth, origin: `http://127.0.0.1:${port}` } })).status,
      200,
    );
    assert.equal((await request(port, '/health', { host: `localhost:${port}`, headers: auth })).status, 200);
  });

  test("calls over the node's maxima are refused naming the field, the figure and the limit (never clamped)", async () => {
    const run = (body: unknown) => request(port, '/run', { method: 'POST', headers: auth, body: JSON.stringify(body) });
    for (const [call, field, re] of [
      [
        { code: 'print(1)', memoryMb: 65_536 },
        'memoryMb',
        /memoryMb: 65536 MiB is over this node's limit of 512 MiB \(sandbox serve --max-memory-mb\)/,
      ],
      [{ code: 'print(1)', timeoutS: 3600 }, 'timeoutS', /timeoutS: 3600 s is over this node's limit of 60 s/],
      [
        { code: 'print(1)', maxOutputBytes: 1 << 30 },
        'maxOutputBytes',
        /maxOutputBytes: 1073741824 bytes is over this node's limit of 4096 bytes/,
      ],
    ] as const) {
      const r = await run(call);
      assert.equal(r.status, 400, JSON.stringify(call));
      const j = JSON.parse(r.body);
      assert.equal(j.field, field);
      assert.match(j.error, re);
    }
    const batch = await request(port, '/run/batch', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ calls: [{ code: 'print(1)' }, { code: 'print(2)', memoryMb: 1024 }] }),
    });
    assert.equal(batch.status, 400);
    assert.equal(JSON.parse(batch.body).field, 'calls.1.memoryMb');
    // Within the maxima it runs; a client asking too much gets the node's reason, not a retry loop.
    const ok = await run({ code: 'print(6*7)', memoryMb: 256, timeoutS: 60 });
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.body).stdout, '42\n');
    const remote = new RemoteSandbox({ urls: [`http://127.0.0.1:${port}`], token: TOKEN, log: quiet });
    try {
      const r = await remote.run({ code: 'print(1)', memoryMb: 4096 });
      assert.equal(r.status, 'internal');
      assert.match(r.errorMessage ?? '', /memoryMb: 4096 MiB is over this node's limit of 512 MiB/);
    } finally {
      await remote.close();
    }
  });

  test('a client that trickles its headers is cut off by the server (408), as is one that never finishes its body', async () => {
    const headers = await slowClient(strictPort, `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${strictPort}\r\nX-Slow: `);
    assert.ok(headers.closedByServer);
    assert.match(headers.reply, /^HTTP\/1\.1 408/);
    assert.ok(headers.sent > 0, 'the client was still sending when the server closed');
    const body = await slowClient(
      strictPort,
      `POST /run HTTP/1.1\r\nHost: 127.0.0.1:${strictPort}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"code":"`,
    );
    assert.ok(body.closedByServer);
    assert.match(body.reply, /^HTTP\/1\.1 408/);
  });

  test('the timeouts bound receiving the request only: a call that runs longer than them still answers', async () => {
    const r = await request(strictPort, '/run', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ code: 'import time\ntime.sleep(1.5)\nprint("done")', timeoutS: 60 }),
    });
    assert.equal(r.status, 200);
    assert.equal(JSON.parse(r.body).stdout, 'done\n');
  });
});

describe('sandbox serve (the CLI)', () => {
  const env = (extra: Record<string, string> = {}) => {
    const e: NodeJS.ProcessEnv = { ...process.env, ...extra };
    delete e.TOOLSMITH_SANDBOX_URLS;
    if (!('TOOLSMITH_SANDBOX_TOKEN' in extra)) delete e.TOOLSMITH_SANDBOX_TOKEN;
    return e;
  };
  test('--token on the command line is refused, saying to use the environment or a file', () => {
    const r = spawnSync(process.execPath, [BIN, 'sandbox', 'serve', '--port', '0', '--token', 'visible-in-ps'], {
      cwd: ROOT,
      env: env(),
      encoding: 'utf8',
    });
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /--token is not accepted: a secret on the command line is visible to every user of this machine .* set TOOLSMITH_SANDBOX_TOKEN, or put it in a file only you can read and pass --token-file FILE/,
    );
  });

  test("--token-file serves with the file's token", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-token-'));
    const file = path.join(dir, 'token');
    fs.writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    const child = spawn(
      process.execPath,
      [BIN, 'sandbox', 'serve', '--port', '0', '--size', '1', '--token-file', file, '--max-memory-mb', '300'],
      { cwd: ROOT, env: env(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    live.add(child);
    const exited = new Promise((r) => child.once('exit', r));
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    try {
      const url = await waitFor(
        'the node to listen',
        () => {
          if (child.exitCode !== null) throw new Error(`serve exited:\n${out}`);
          return /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
        },
        { timeoutMs: 60_000 },
      );
      assert.match(out, /per call at most 300 MiB/);
      assert.equal((await fetch(`${url}/health`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
      assert.equal((await fetch(`${url}/health`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    } finally {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---- serve-model ------------------------------------------------------------------------------------------------

const PY = trainerPython();
const hasTorch = spawnSync(PY, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
const skip = hasTorch ? false : `needs ${PY} with torch (node scripts/setup.mjs builds it)`;
const KEY = 'serve-key-0123456789';
/** A non-loopback address of this machine, if it has one (listened on only; no traffic is sent to it). */
const outside = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

function serveModel(args: string[], extraEnv: Record<string, string> = {}) {
  const e: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  if (!('TOOLSMITH_SERVE_API_KEY' in extraEnv)) delete e.TOOLSMITH_SERVE_API_KEY;
  const child = spawn(process.execPath, [BIN, 'serve-model', ...args], {
    cwd: ROOT,
    env: e,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      live.delete(child);
      resolve(code);
    }),
  );
  const url = () =>
    waitFor(
      'serve-model to listen',
      () => {
        if (child.exitCode !== null) throw new Error(`serve-model exited with ${child.exitCode}:\n${out}`);
        return /on (http:\/\/\S+)\/v1/.exec(out)?.[1];
      },
      { timeoutMs: 60_000, detail: () => out },
    );
  return { child, exited, out: () => out, url };
}

describe('serve-model', () => {
  let tmp = '';
  let wsRoot = '';
  let model = '';
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-exposure-'));
    wsRoot = path.join(tmp, 'weight-sync');
    model = path.join(wsRoot, 'v1');
    if (hasTorch) {
      execFileSync(
        PY,
        [
          path.join(ROOT, 'workers/trainer/export_onnx.py'),
          '--out',
          model,
          '--seed',
          '1',
          '--config',
          JSON.stringify({ n_layer: 1, n_head: 2, n_embd: 16, block_size: 64 }),
        ],
        { stdio: 'pipe', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
      );
    }
  });
  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('secrets on argv and keyless non-loopback binds are refused before anything loads', async () => {
    for (const [args, re] of [
      [
        ['--checkpoint', '/nowhere', '--api-key', KEY],
        /--api-key is not accepted: a secret on the command line .* set TOOLSMITH_SERVE_API_KEY, or put it in a file only you can read and pass --api-key-file FILE/,
      ],
      [['--checkpoint', '/nowhere', '--token', KEY], /--token is not accepted/],
      [
        ['--checkpoint', '/nowhere', '--host', '0.0.0.0', '--port', '0'],
        /serve-model listens on 0\.0\.0\.0, reachable beyond this machine, but has no token: set TOOLSMITH_SERVE_API_KEY or pass --api-key-file FILE, or bind to 127\.0\.0\.1/,
      ],
      ...(outside
        ? [
            [
              ['--checkpoint', '/nowhere', '--host', outside, '--port', '0'],
              /reachable beyond this machine, but has no token/,
            ],
          ]
        : []),
    ] as [string[], RegExp][]) {
      const p = serveModel(args);
      assert.equal(await p.exited, 2, p.out());
      assert.match(p.out(), re);
    }
  });

  test('the reload route needs the key (401 without, works with it); a cross-site Origin is 403; a foreign Host 421', {
    skip,
  }, async () => {
    const keyFile = path.join(tmp, 'key');
    fs.writeFileSync(keyFile, KEY, { mode: 0o600 });
    const s = serveModel([
      '--checkpoint',
      model,
      '--port',
      '0',
      '--model-name',
      'tiny',
      '--weights-root',
      wsRoot,
      '--threads',
      '1',
      '--api-key-file',
      keyFile,
    ]);
    const base = await s.url();
    const port = Number(new URL(base).port);
    const reload = (headers: Record<string, string>) =>
      request(port, '/update_weights_from_disk', {
        method: 'POST',
        headers,
        body: JSON.stringify({ model_path: model, weight_version: '7' }),
      });
    const none = await reload({});
    assert.equal(none.status, 401);
    assert.equal(JSON.parse(none.body).error.code, 'invalid_api_key');
    assert.equal((await reload({ authorization: 'Bearer wrong' })).status, 401);
    assert.equal(
      JSON.parse((await request(port, '/get_weight_version', { headers: { authorization: `Bearer ${KEY}` } })).body)
        .weight_version,
      '0',
      'nothing was reloaded',
    );
    const cross = await reload({ authorization: `Bearer ${KEY}`, origin: 'https://evil.example' });
    assert.equal(cross.status, 403, 'a page that somehow holds the key still cannot drive it from a browser');
    const foreign = await request(port, '/v1/models', {
      host: 'rebind.evil.example',
      headers: { authorization: `Bearer ${KEY}` },
    });
    assert.equal(foreign.status, 421);
    assert.equal(JSON.parse(foreign.body).error.code, 'misdirected_request');
    const ok = await reload({ authorization: `Bearer ${KEY}` });
    assert.equal(ok.status, 200, ok.body);
    assert.equal(JSON.parse(ok.body).success, true);
    assert.equal(
      JSON.parse((await request(port, '/get_weight_version', { headers: { authorization: `Bearer ${KEY}` } })).body)
        .weight_version,
      '7',
    );
    const completion = await request(port, '/v1/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, origin: 'https://evil.example' },
      body: JSON.stringify({ model: 'tiny', prompt: 'x', max_tokens: 2 }),
    });
    assert.equal(completion.status, 403, 'a web page cannot run completions either');
    s.child.kill('SIGTERM');
    assert.equal(await s.exited, 0);
  });

  test('without a key it serves loopback only, with weight reloads off (401 naming how to turn them on)', {
    skip,
  }, async () => {
    const s = serveModel([
      '--checkpoint',
      model,
      '--port',
      '0',
      '--model-name',
      'tiny',
      '--weights-root',
      wsRoot,
      '--threads',
      '1',
    ]);
    const port = Number(new URL(await s.url()).port);
    assert.match(s.out(), /no API key; weight reloads off/);
    assert.equal((await request(port, '/v1/models')).status, 200);
    const r = await request(port, '/update_weights_from_disk', {
      method: 'POST',
      body: JSON.stringify({ model_path: model }),
    });
    assert.equal(r.status, 401);
    assert.match(
      JSON.parse(r.body).error.message,
      /weight reloads need an API key: start serve-model with TOOLSMITH_SERVE_API_KEY or --api-key-file FILE/,
    );
    s.child.kill('SIGTERM');
    assert.equal(await s.exited, 0);
  });

  test("with a key it may listen beyond loopback (this machine's own address; nothing is sent there)", {
    skip: skip || (outside ? false : 'this machine has no non-loopback address'),
  }, async () => {
    const s = serveModel(['--checkpoint', model, '--port', '0', '--host', outside!, '--threads', '1'], {
      TOOLSMITH_SERVE_API_KEY: KEY,
    });
    assert.match(await s.url(), new RegExp(`^http://${outside!.replace(/\./g, '\\.')}:\\d+$`));
    assert.match(s.out(), /API key required/);
    s.child.kill('SIGTERM');
    assert.equal(await s.exited, 0);
  });
});
