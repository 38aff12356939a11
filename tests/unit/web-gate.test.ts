import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRequest, hostAllowed, securityHeaders, wellFormedPath } from '../../server/http/gate.ts';
import { callCount, withLimits } from '../../server/http/limits.ts';
import { config } from '../../server/config.ts';

const policy = { allowedHosts: config({}).allowedHosts, maxBodyBytes: 1000 };
const req = (method: string, url: string, headers: Record<string, string> = {}) => ({
  method,
  url,
  headers: new Headers({ host: 'localhost:3000', ...headers }),
});

test('allowed hosts: loopback by default, HOST added unless it is 0.0.0.0; bad entries name the variable', () => {
  assert.deepEqual(config({}).allowedHosts, ['localhost', '127.0.0.1', '[::1]']);
  assert.deepEqual(config({ HOST: '0.0.0.0' }).allowedHosts, ['localhost', '127.0.0.1', '[::1]']);
  assert.deepEqual(config({ HOST: '10.1.2.3' }).allowedHosts, ['localhost', '127.0.0.1', '[::1]', '10.1.2.3']);
  assert.deepEqual(config({ TOOLSMITH_ALLOWED_HOSTS: ' Toolsmith.Example.com , localhost:3000' }).allowedHosts, [
    'toolsmith.example.com',
    'localhost:3000',
  ]);
  assert.throws(
    () => config({ TOOLSMITH_ALLOWED_HOSTS: 'ok.example,http://bad/' }),
    /TOOLSMITH_ALLOWED_HOSTS: "http:\/\/bad\/" is not a host\[:port\]/,
  );
  assert.ok(hostAllowed('LOCALHOST:3217', ['localhost']));
  assert.ok(hostAllowed('[::1]:3000', ['[::1]']));
  assert.ok(!hostAllowed('localhost:4000', ['localhost:3000']));
  assert.ok(!hostAllowed('localhost.evil.example', ['localhost']));
  assert.ok(!hostAllowed('', ['localhost']));
});

test('a foreign or missing Host is refused with 421', () => {
  assert.equal(checkRequest(req('GET', '/', { host: 'rebind.evil.example:3000' }), policy)?.status, 421);
  assert.equal(checkRequest({ method: 'GET', url: '/', headers: new Headers() }, policy)?.status, 421);
  assert.equal(checkRequest(req('GET', 'http://localhost:3000/runs/r_1'), policy), null);
});

test('a malformed percent-escape in the path is a 400; one in the query is left to the page', () => {
  for (const p of ['/runs/%E0%A4%A', '/trajectories/%', '/s/%zz', '/recipes/%C0%AF']) {
    assert.ok(!wellFormedPath(p), p);
    assert.equal(checkRequest(req('GET', `http://localhost:3000${p}`), policy)?.status, 400, p);
  }
  assert.equal(checkRequest(req('GET', 'http://localhost:3000/runs/r%201?x=%zz'), policy), null);
});

test('mutations: form and text bodies 415; foreign or missing Origin 403; bearer scripts may omit Origin', () => {
  const ok = { origin: 'http://localhost:3000', 'content-type': 'application/json' };
  assert.equal(checkRequest(req('POST', '/api/trpc/runs.cancel', ok), policy), null);
  for (const type of [
    'multipart/form-data; boundary=x',
    'application/x-www-form-urlencoded',
    'text/plain;charset=UTF-8',
  ]) {
    assert.equal(
      checkRequest(req('POST', '/api/trpc/runs.cancel', { ...ok, 'content-type': type }), policy)?.status,
      415,
      type,
    );
  }
  assert.equal(
    checkRequest(req('POST', '/api/trpc/runs.cancel', { ...ok, origin: 'https://evil.example' }), policy)?.status,
    403,
  );
  assert.equal(checkRequest(req('DELETE', '/x', { ...ok, origin: 'null' }), policy)?.status, 403);
  assert.equal(checkRequest(req('POST', '/x', { 'content-type': 'application/json' }), policy)?.status, 403);
  assert.equal(
    checkRequest(
      req('POST', '/x', { 'content-type': 'application/json', referer: 'http://127.0.0.1:3000/runs' }),
      policy,
    ),
    null,
  );
  assert.equal(
    checkRequest(req('POST', '/x', { 'content-type': 'application/json', referer: 'https://evil.example/' }), policy)
      ?.status,
    403,
  );
  assert.equal(checkRequest(req('POST', '/x', { authorization: 'Bearer tok_abc' }), policy), null);
  assert.equal(
    checkRequest(req('POST', '/x', { authorization: 'Bearer tok_abc', cookie: 's=1' }), policy)?.status,
    403,
    'a cookie makes it a browser request',
  );
  assert.equal(
    checkRequest(req('GET', '/x', { origin: 'https://evil.example' }), policy),
    null,
    'reads are not origin-checked',
  );
});

test('a declared Content-Length over the cap is refused with 413 naming the limit', () => {
  const r = checkRequest(
    req('POST', '/api/trpc/x', {
      origin: 'http://localhost:3000',
      'content-type': 'application/json',
      'content-length': '1001',
    }),
    policy,
  );
  assert.equal(r?.status, 413);
  assert.match(r!.message, /1000 bytes \(TOOLSMITH_MAX_BODY_BYTES\)/);
});

test('security headers: CSP with frame-ancestors none, nosniff, referrer policy, no framing', () => {
  const h = securityHeaders();
  assert.match(h['Content-Security-Policy']!, /default-src 'self'/);
  assert.match(h['Content-Security-Policy']!, /frame-ancestors 'none'/);
  assert.match(h['Content-Security-Policy']!, /object-src 'none'/);
  assert.doesNotMatch(h['Content-Security-Policy']!, /unsafe-eval/);
  assert.equal(h['X-Content-Type-Options'], 'nosniff');
  assert.equal(h['X-Frame-Options'], 'DENY');
  assert.ok(h['Referrer-Policy']);
  const scriptSrc = (csp: string) => /script-src ([^;]*)/.exec(csp)?.[1];
  assert.equal(scriptSrc(h['Content-Security-Policy']!), "'none'", 'a response without a nonce runs no script');
  const page = securityHeaders({ nonce: 'bm9uY2U=' })['Content-Security-Policy']!;
  assert.equal(scriptSrc(page), "'nonce-bm9uY2U=' 'strict-dynamic'", 'scripts only by the nonce, never inline');
  assert.match(securityHeaders({ nonce: 'x', dev: true })['Content-Security-Policy']!, /script-src [^;]*'unsafe-eval'/);
});

const echo = async (r: Request) =>
  new Response(JSON.stringify({ bytes: (await r.arrayBuffer()).byteLength }), { status: 200 });
const limited = withLimits(echo, () => ({ maxBodyBytes: 100, maxBatch: 3 }));

test('batch size: the comma-separated paths are counted; over the cap is a 400 naming the limit', async () => {
  assert.equal(callCount('http://h/api/trpc/a,b,c?batch=1'), 3);
  assert.equal(callCount('http://h/api/trpc/system.health'), 1);
  assert.equal((await limited(new Request('http://h/api/trpc/a,b,c?batch=1'))).status, 200);
  const over = await limited(new Request('http://h/api/trpc/a,b,c,d?batch=1'));
  assert.equal(over.status, 400);
  assert.match((await over.json()).error.message, /at most 3 calls \(TOOLSMITH_MAX_BATCH\); this one has 4/);
});

test('body size: a streamed body over the cap is a 413; within it the handler gets the whole body', async () => {
  const stream = (n: number) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < n; i++) c.enqueue(new Uint8Array(30));
        c.close();
      },
    });
  const post = (n: number) =>
    new Request('http://h/api/trpc/x', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream(n),
      duplex: 'half',
    } as RequestInit);
  const big = await limited(post(4));
  assert.equal(big.status, 413);
  assert.match((await big.json()).error.message, /100 bytes/);
  const small = await limited(post(3));
  assert.deepEqual(await small.json(), { bytes: 90 });
  const text = await limited(new Request('http://h/api/trpc/x', { method: 'POST', body: new Blob(['{}']) }));
  assert.equal(text.status, 415, 'an untyped body is not JSON');
});

test('the Origin must be this server, port included: another program on a loopback port is refused', () => {
  const post = (host: string, origin: string, allowedHosts = policy.allowedHosts) =>
    checkRequest(req('POST', '/api/trpc/runs.cancel', { host, origin, 'content-type': 'application/json' }), {
      ...policy,
      allowedHosts,
    })?.status ?? 200;
  assert.equal(post('localhost:3000', 'http://localhost:3000'), 200);
  assert.equal(post('localhost:3000', 'http://127.0.0.1:3000'), 200, 'loopback names are one name on one port');
  assert.equal(post('[::1]:3000', 'http://localhost:3000'), 200);
  // A dev server, notebook or any page another local program serves is not this workbench.
  assert.equal(post('localhost:3000', 'http://localhost:8080'), 403);
  assert.equal(post('localhost:3000', 'http://127.0.0.1:5173'), 403);
  assert.equal(post('localhost:3000', 'http://localhost'), 403, 'port 80 is another port');
  assert.equal(post('localhost:3000', 'https://localhost:3000'), 200, 'the scheme a proxy terminates is not compared');
  // Behind a proxy: the public name, exactly as allowed (its default port), whatever Host the proxy forwards.
  const behind = ['localhost', '127.0.0.1', '[::1]', 'toolsmith.example.com'];
  assert.equal(post('localhost:3000', 'https://toolsmith.example.com', behind), 200);
  assert.equal(post('toolsmith.example.com', 'https://toolsmith.example.com', behind), 200);
  assert.equal(post('localhost:3000', 'https://toolsmith.example.com:8443', behind), 403);
  assert.equal(post('localhost:3000', 'https://evil.toolsmith.example.com', behind), 403);
  const m = checkRequest(
    req('POST', '/x', { origin: 'http://localhost:8080', 'content-type': 'application/json' }),
    policy,
  )?.message;
  assert.match(m ?? '', /Origin "http:\/\/localhost:8080" is not this server \("localhost:3000"\)/);
});
