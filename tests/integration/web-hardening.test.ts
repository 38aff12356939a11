/**
 * The built web app under `node scripts/start.mjs --serve-only`, attacked over plain HTTP: a
 * foreign Host, cross-origin and form-encoded mutations, a malformed percent-escape, an oversized body, a batch
 * over the cap, the security headers; then the worker is killed and must come back while the web server stays up.
 * One server start for the whole file. Needs the build (`node scripts/setup.mjs`; `npm test` builds first).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { waitFor } from '../helpers/proc.ts';
import { dialect } from '../helpers/db.ts';
import { startWebServer, webBuilt, type WebServer } from '../helpers/web-server.ts';
import { readSupervisor } from '../../server/system/supervisor.ts';

// The gate and the supervisor do not touch the database the suite is run against: once (on SQLite) is enough.
const skip = !webBuilt()
  ? 'no web build (.next): run `node scripts/setup.mjs` first (npm test builds it)'
  : dialect !== 'sqlite'
    ? 'runs once, in the SQLite pass: nothing here depends on the database'
    : false;

let port = 0;
let base = '';
let web: WebServer | null = null;
let dataDir = '';
const output = () => web?.output() ?? '';
const MAX_BODY = 64 * 1024;

/** A raw request, so the Host header is what we say (fetch would set it from the URL). */
function raw(
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const health = () =>
  fetch(`${base}/api/trpc/system.health`)
    .then((r) => r.ok)
    .catch(() => false);

before(async () => {
  if (skip) return;
  web = await startWebServer({ TOOLSMITH_MAX_BODY_BYTES: String(MAX_BODY) }, 'toolsmith-hardening-');
  ({ port, base, dataDir } = web);
});

after(async () => {
  await web?.stop();
});

const json = { 'content-type': 'application/json' };

test('a request for a foreign Host (DNS rebinding) is answered 421 and reaches no page or procedure', {
  skip,
}, async () => {
  for (const p of ['/', '/api/trpc/system.health']) {
    const r = await raw('GET', p, { host: `rebind.evil.example:${port}` });
    assert.equal(r.status, 421, `${p}: ${r.body}`);
    assert.match(r.body, /does not answer to the host/);
    assert.doesNotMatch(r.body, /busyWorkers/);
  }
  assert.equal((await raw('GET', '/api/trpc/system.health', { host: `localhost:${port}` })).status, 200);
});

test('a cross-origin multipart POST to a mutation is refused before tRPC sees it', { skip }, async () => {
  const form = new FormData();
  form.set('0', JSON.stringify({ runId: 'r_x' }));
  const cross = await fetch(`${base}/api/trpc/share.create`, {
    method: 'POST',
    body: form,
    headers: { origin: 'https://evil.example' },
  });
  assert.ok(cross.status === 415 || cross.status === 403, `status ${cross.status}`);
  const body = await cross.json();
  assert.match(body.error.data.code, /UNSUPPORTED_MEDIA_TYPE|FORBIDDEN/);
  // Same origin, still a form: refused for its type.
  const same = await fetch(`${base}/api/trpc/share.create`, { method: 'POST', body: form, headers: { origin: base } });
  assert.equal(same.status, 415);
  const text = await fetch(`${base}/api/trpc/share.create`, {
    method: 'POST',
    body: '{}',
    headers: { origin: base, 'content-type': 'text/plain' },
  });
  assert.equal(text.status, 415);
});

test('a JSON POST with a foreign Origin, or with no Origin and no bearer token, is 403 from the gate', {
  skip,
}, async () => {
  const foreign = await fetch(`${base}/api/trpc/share.create`, {
    method: 'POST',
    body: '{}',
    headers: { ...json, origin: 'https://evil.example' },
  });
  assert.equal(foreign.status, 403);
  assert.match((await foreign.json()).error.message, /cross-origin POST refused: Origin "https:\/\/evil.example"/);
  const bare = await fetch(`${base}/api/trpc/share.create`, {
    method: 'POST',
    body: '{}',
    headers: { ...json, cookie: 'x=1' },
  });
  assert.equal(bare.status, 403);
  // Past the gate, the procedure itself decides (no principal yet: 401), proving the gate let it through.
  const ok = await fetch(`${base}/api/trpc/share.create`, {
    method: 'POST',
    body: '{}',
    headers: { ...json, origin: base },
  });
  assert.notEqual(ok.status, 403);
  assert.notEqual(ok.status, 415);
});

test('every response carries the security headers (pages, API, static files)', { skip }, async () => {
  for (const p of ['/', '/api/trpc/system.health', '/icon.svg', '/no-such-page']) {
    const r = await fetch(`${base}${p}`);
    const csp = r.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/, p);
    assert.match(csp, /frame-ancestors 'none'/, p);
    assert.match(csp, /object-src 'none'/, p);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff', p);
    assert.equal(r.headers.get('x-frame-options'), 'DENY', p);
    assert.ok(r.headers.get('referrer-policy'), p);
  }
});

test('a malformed percent-escape in a dynamic route is 400 or 404, never 500', { skip }, async () => {
  for (const p of [
    '/runs/%E0%A4%A',
    '/runs/%E0%A4%A/explorer',
    '/trajectories/%',
    '/s/%zz',
    '/s/%zz/t/%',
    '/recipes/%C0',
    '/api/trpc/%zz',
  ]) {
    const r = await raw('GET', p, { host: `127.0.0.1:${port}` });
    assert.ok(r.status === 400 || r.status === 404, `${p}: ${r.status}`);
  }
});

test('an oversized body is 413 naming the limit, declared or streamed, on tRPC and the sign-in routes', {
  skip,
}, async () => {
  const big = JSON.stringify({ 0: { x: 'a'.repeat(MAX_BODY + 10) } });
  const declared = await fetch(`${base}/api/trpc/share.create?batch=1`, {
    method: 'POST',
    body: big,
    headers: { ...json, origin: base },
  });
  assert.equal(declared.status, 413);
  assert.match(
    (await declared.json()).error.message,
    new RegExp(`limit of ${MAX_BODY} bytes \\(TOOLSMITH_MAX_BODY_BYTES\\)`),
  );
  const chunks = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 4; i++) c.enqueue(new TextEncoder().encode('a'.repeat(MAX_BODY / 2)));
      c.close();
    },
  });
  const streamed = await fetch(`${base}/api/trpc/share.create`, {
    method: 'POST',
    body: chunks,
    headers: { ...json, origin: base },
    duplex: 'half',
  } as RequestInit);
  assert.equal(streamed.status, 413);
  // The sign-in routes (Better Auth) take the same cap.
  for (const p of ['/api/auth/sign-in/email', '/api/auth/sign-in/magic-link', '/api/auth/sign-out']) {
    const d = await fetch(`${base}${p}`, { method: 'POST', body: big, headers: { ...json, origin: base } });
    assert.equal(d.status, 413, p);
    const s = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 4; i++) c.enqueue(new TextEncoder().encode('a'.repeat(MAX_BODY / 2)));
        c.close();
      },
    });
    const r = await fetch(`${base}${p}`, {
      method: 'POST',
      body: s,
      headers: { ...json, origin: base },
      duplex: 'half',
    } as RequestInit);
    assert.equal(r.status, 413, p);
    assert.match((await r.json()).message, new RegExp(`limit of ${MAX_BODY} bytes \\(TOOLSMITH_MAX_BODY_BYTES\\)`));
  }
});

test('a batch of 25 calls is 400 naming the cap; 20 are served', { skip }, async () => {
  const batch = (n: number) =>
    `${base}/api/trpc/${Array(n).fill('system.health').join(',')}?batch=1&input=${encodeURIComponent('{}')}`;
  const over = await fetch(batch(25));
  assert.equal(over.status, 400);
  assert.match((await over.json()).error.message, /at most 20 calls \(TOOLSMITH_MAX_BATCH\); this one has 25/);
  const ok = await fetch(batch(20));
  assert.equal(ok.status, 200);
  assert.equal((await ok.json()).length, 20);
});

test('without TOOLSMITH_TRUSTED_PROXIES the client is the TCP peer: X-Forwarded-For is ignored, and the log says so once', {
  skip,
}, async () => {
  assert.match(output(), /client addresses from the TCP peer \(no trusted proxies\)/);
  for (let i = 0; i < 3; i++)
    assert.ok(
      (await fetch(`${base}/api/trpc/system.health`, { headers: { 'x-forwarded-for': `198.51.100.${i}` } })).ok,
    );
  await waitFor(
    'the warning about an ignored X-Forwarded-For',
    () => /carried X-Forwarded-For, which is ignored/.test(output()),
    { timeoutMs: 60_000, detail: output },
  );
  assert.equal(output().match(/carried X-Forwarded-For/g)!.length, 1, 'once, not per request');
  assert.match(
    output(),
    /a request from 127\.0\.0\.1 carried X-Forwarded-For, which is ignored: TOOLSMITH_TRUSTED_PROXIES is not set/,
  );
});

test('a killed worker is restarted with back-off and recorded; the web server stays up throughout', {
  skip,
}, async () => {
  const first = await waitFor(
    'the supervisor to record a running worker',
    () => {
      const s = readSupervisor(dataDir);
      return s?.worker.state === 'running' && s.worker.pid ? s : null;
    },
    { timeoutMs: 60_000, detail: output },
  );
  const oldPid = first.worker.pid!;
  process.kill(oldPid, 'SIGKILL');
  await waitFor(
    'the worker to die',
    () => {
      try {
        process.kill(oldPid, 0);
        return false;
      } catch {
        return true;
      }
    },
    { timeoutMs: 60_000 },
  );
  assert.ok(await health(), 'the web server answers while the worker is down');
  const next = await waitFor(
    'a new worker pid',
    () => {
      const s = readSupervisor(dataDir);
      return s?.worker.state === 'running' && s.worker.pid && s.worker.pid !== oldPid ? s : null;
    },
    { timeoutMs: 60_000, detail: output },
  );
  process.kill(next.worker.pid!, 0); // throws if the recorded pid is not a live process
  assert.equal(next.restarts, 1);
  assert.equal(next.recent[0]!.pid, oldPid);
  assert.equal(next.recent[0]!.exit, 'SIGKILL');
  assert.equal(next.recent[0]!.delayMs, 1000, 'the first restart waits 1 s');
  assert.match(output(), new RegExp(`the worker \\(pid ${oldPid}\\) exited \\(SIGKILL\\).*restarting it in 1 s`));
  assert.ok(await health(), 'the web server still answers');
  assert.equal(web!.child.exitCode, null, 'the start script is still running');
});
