/**
 * Sign-in limits that hold, against the built app under `node scripts/start.mjs --serve-only`:
 * the client address comes from the socket (scripts/web-server.mjs), X-Forwarded-For counts only from
 * TOOLSMITH_TRUSTED_PROXIES (here 127.0.0.1; requests from 127.0.0.2 are an untrusted peer on the same loopback),
 * the sign-in throttle's delays per address and per account (in the database: tests/integration/sign-in-throttle.test.ts
 * runs it on both databases, over several servers, with a clock it moves), the cap on password hashes at once (under a flood of sign-ins, read
 * from the server: never more at once than the cap, a signed-in request answered while they queue; the speed is
 * `npm run bench:signin`'s), one-time-link requests, anonymous refusals that
 * write no rows, and the audit log's address. One server start for the whole file; needs the build (set-up makes it).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { dialect } from '../helpers/db.ts';
import { startWebServer, webBuilt, type WebServer } from '../helpers/web-server.ts';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { createUser } from '../../server/auth/users.ts';
import { waitFor } from '../helpers/proc.ts';
import {
  cookieOf,
  request as httpRequest,
  type RequestOptions,
  signIn as signInAt,
  startFlood,
  TRUSTED,
  UNTRUSTED,
} from '../helpers/sign-in-http.ts';

const skip = !webBuilt()
  ? 'no web build (.next): run `node scripts/setup.mjs` first (npm test builds it)'
  : dialect !== 'sqlite'
    ? 'runs once, in the SQLite pass: the limits live in the web process, not in SQL'
    : false;

let port = 0;
let web: WebServer | null = null;
let db: Database;
const PASSWORD = 'the right password';
// Each over a fresh connection from the peer named (tests/helpers/sign-in-http.ts), to this file's server.
const request = (method: string, urlPath: string, opts: RequestOptions = {}) =>
  httpRequest(port, method, urlPath, opts);
const signIn = (email: string, password: string, from: string, headers: Record<string, string> = {}) =>
  signInAt(port, email, password, from, headers);

before(async () => {
  if (skip) return;
  // The throttle's first delay is 10 minutes here, not 4 s: whether an attempt lands inside it must not depend on
  // how fast a busy machine sends the next one (tests/integration/sign-in-throttle.test.ts moves a clock instead).
  web = await startWebServer(
    { TOOLSMITH_TRUSTED_PROXIES: TRUSTED, TOOLSMITH_SIGN_IN_DELAY_S: '600' },
    'toolsmith-signin-',
  );
  port = web.port;
  db = await openDatabase(`file:${path.join(web.dataDir, 'toolsmith.db')}`);
  for (const email of [
    'rot@example.com',
    'fwd@example.com',
    'acct@example.com',
    'other@example.com',
    'flood@example.com',
    'audit@example.com',
  ]) {
    await createUser(db, { email, role: email.startsWith('audit') ? 'researcher' : 'viewer', password: PASSWORD });
  }
});

after(async () => {
  await db?.close();
  await web?.stop();
});

test('the server says where client addresses come from', { skip }, () => {
  assert.match(web!.output(), /client addresses from X-Forwarded-For from 127\.0\.0\.1/);
});

test('an untrusted peer rotating X-Forwarded-For, X-Real-IP and the private header still gets 429 within the limit', {
  skip,
}, async () => {
  const codes: number[] = [];
  for (let i = 0; i < 8; i++) {
    const spoof = `198.18.${i}.${i + 1}`;
    const r = await signIn('rot@example.com', `wrong guess ${i}`, UNTRUSTED, {
      'x-forwarded-for': spoof,
      'x-real-ip': spoof,
      'x-toolsmith-client-address': spoof,
    });
    codes.push(r.status);
  }
  assert.deepEqual(codes.slice(0, 5), [401, 401, 401, 401, 401], codes.join(','));
  assert.ok(
    codes.slice(5).every((c) => c === 429),
    codes.join(','),
  );
  // The bucket was the socket's: the right password from that peer is refused too, for now.
  assert.equal(
    (await signIn('rot@example.com', PASSWORD, UNTRUSTED, { 'x-forwarded-for': '198.18.99.99' })).status,
    429,
  );
  const rows = await db.prisma.rateLimit.findMany({ where: { key: { contains: '/sign-in/email' } } });
  assert.ok(
    rows.some((r) => r.key.startsWith(`${UNTRUSTED}|`)),
    rows.map((r) => r.key).join(' '),
  );
  assert.ok(!rows.some((r) => r.key.startsWith('198.18.')), 'no bucket was made for a spoofed address');
});

test("a trusted proxy's X-Forwarded-For is honoured: different forwarded clients, different buckets", {
  skip,
}, async () => {
  const codes: number[] = [];
  for (let i = 0; i < 6; i++)
    codes.push((await signIn('fwd@example.com', `wrong ${i}`, TRUSTED, { 'x-forwarded-for': '198.51.100.1' })).status);
  assert.deepEqual(codes, [401, 401, 401, 401, 401, 429]);
  assert.equal(
    (await signIn('fwd@example.com', 'wrong again', TRUSTED, { 'x-forwarded-for': '198.51.100.2' })).status,
    401,
    'another client behind the proxy is not blocked',
  );
  // Read from the right: what the client wrote on the left does not choose the bucket.
  assert.equal(
    (await signIn('fwd@example.com', 'wrong', TRUSTED, { 'x-forwarded-for': '198.51.100.1, 198.51.100.3' })).status,
    401,
  );
  assert.equal(
    (await signIn('fwd@example.com', 'wrong', TRUSTED, { 'x-forwarded-for': '198.51.100.3, 198.51.100.1' })).status,
    429,
  );
  const ok = await signIn('fwd@example.com', PASSWORD, TRUSTED, { 'x-forwarded-for': '198.51.100.4' });
  assert.equal(ok.status, 200, ok.body);
  const session = await db.prisma.session.findFirst({ where: { user: { email: 'fwd@example.com' } } });
  assert.equal(session?.ipAddress, '198.51.100.4', 'the session records the forwarded client');
});

test('rotating addresses does not dodge the per-account delay: 10 wrong passwords, then 429 for that account only', {
  skip,
}, async () => {
  const codes: number[] = [];
  for (let i = 0; i < 12; i++)
    codes.push(
      (await signIn('ACCT@example.com', `guess ${i}`, TRUSTED, { 'x-forwarded-for': `203.0.113.${i + 1}` })).status,
    );
  assert.deepEqual(codes, [...Array(10).fill(401), 429, 429]);
  const right = await signIn('acct@example.com', PASSWORD, TRUSTED, { 'x-forwarded-for': '203.0.113.200' });
  assert.equal(right.status, 429, 'a new address waits out the delay too, right password or not');
  const body = JSON.parse(right.body);
  assert.equal(body.code, 'TOO_MANY_FAILED_SIGN_INS');
  assert.match(body.message, /too many failed sign-ins: try again in \d+ minutes, or ask an admin for a one-time link/);
  assert.ok(Number(right.headers['retry-after']) > 500, right.headers['retry-after']);
  assert.equal(
    (await signIn('other@example.com', PASSWORD, TRUSTED, { 'x-forwarded-for': '203.0.113.201' })).status,
    200,
    'other accounts are not affected',
  );
});

test('parallel wrong passwords for one account cannot pass the delay together', { skip }, async () => {
  await createUser(db, { email: 'par@example.com', role: 'viewer', password: PASSWORD });
  const replies = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      signIn('par@example.com', `parallel ${i}`, TRUSTED, { 'x-forwarded-for': `203.0.114.${i + 1}` }),
    ),
  );
  const codes = replies.map((r) => r.status);
  assert.equal(codes.filter((c) => c === 401).length, 10, codes.join(','));
  assert.equal(codes.filter((c) => c === 429).length, 20, codes.join(','));
});

test('one-time-link requests: nothing stored for unknown emails, limited per email and per address', {
  skip,
}, async () => {
  const link = (email: string, from: string, fwd: string) =>
    request('POST', '/api/auth/sign-in/magic-link', {
      from,
      headers: { 'content-type': 'application/json', 'x-forwarded-for': fwd },
      body: JSON.stringify({ email, callbackURL: '/' }),
    });
  const before = await db.prisma.verification.count();
  const unknown = await Promise.all(
    Array.from({ length: 4 }, (_, i) => link(`nobody${i}@example.com`, TRUSTED, `192.0.2.${i + 1}`)),
  );
  for (const r of unknown)
    assert.deepEqual([r.status, JSON.parse(r.body)], [200, { status: true }], 'the same answer as for a known email');
  assert.equal(await db.prisma.verification.count(), before, 'no row for an unknown email');
  const known = await link('other@example.com', TRUSTED, '192.0.2.50');
  assert.deepEqual([known.status, JSON.parse(known.body)], [200, { status: true }]);
  assert.equal(await db.prisma.verification.count(), before + 1, 'a known email gets its (single-use) link row');
  // Per email: 3 in the window, whatever the address.
  const perEmail = [known.status];
  for (let i = 0; i < 3; i++) perEmail.push((await link('other@example.com', TRUSTED, `192.0.2.${60 + i}`)).status);
  assert.deepEqual(perEmail, [200, 200, 200, 429]);
  assert.equal(await db.prisma.verification.count(), before + 3);
  // Per address: 5 a minute, whatever the email (unknown ones included).
  const perAddress: number[] = [];
  for (let i = 0; i < 7; i++)
    perAddress.push((await link(`spray${i}@example.com`, UNTRUSTED, `192.0.2.${100 + i}`)).status);
  assert.deepEqual(perAddress, [200, 200, 200, 200, 200, 429, 429]);
  assert.equal(await db.prisma.verification.count(), before + 3);
});

test('anonymous refused mutations write no audit rows; a signed-in one records the socket or trusted-proxy address', {
  skip,
}, async () => {
  const rowsBefore = await db.prisma.auditLog.count();
  const batch = Array(20).fill('share.create').join(',');
  const input = JSON.stringify(
    Object.fromEntries(Array.from({ length: 20 }, (_, i) => [i, { scope: 'run', target: { runId: 'r_x' } }])),
  );
  for (let i = 0; i < 5; i++) {
    const r = await request('POST', `/api/trpc/${batch}?batch=1`, {
      from: UNTRUSTED,
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `6.6.6.${i}` },
      body: input,
    });
    assert.equal(r.status, 401, r.body);
  }
  assert.equal(await db.prisma.auditLog.count(), rowsBefore, '100 refused anonymous calls, no rows');

  const session = await signIn('audit@example.com', PASSWORD, TRUSTED, { 'x-forwarded-for': '198.51.100.70' });
  assert.equal(session.status, 200);
  const cookie = cookieOf(session);
  const mutate = (from: string, fwd: string) =>
    request('POST', '/api/trpc/runs.cancel', {
      from,
      headers: { 'content-type': 'application/json', cookie, 'x-forwarded-for': fwd },
      body: JSON.stringify({ runId: 'r_missing' }),
    });
  await mutate(TRUSTED, '6.6.6.6, 198.51.100.71');
  await mutate(UNTRUSTED, '198.51.100.72');
  const rows = await db.prisma.auditLog.findMany({ where: { email: 'audit@example.com' }, orderBy: { id: 'asc' } });
  assert.deepEqual(
    rows.map((r) => [r.action, r.ip]),
    [
      ['runs.cancel', '198.51.100.71'],
      ['runs.cancel', UNTRUSTED],
    ],
  );
});

test('/api/auth bodies take the same 1 MiB cap as the rest: declared or streamed, 413', { skip }, async () => {
  const big = Buffer.alloc(1024 * 1024 + 10, 'a');
  const declared = await request('POST', '/api/auth/sign-in/email', {
    from: TRUSTED,
    headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.200' },
    body: big,
  });
  assert.equal(declared.status, 413);
  // Chunked, no Content-Length: read up to the cap and refused there.
  const chunk = Buffer.alloc(256 * 1024, 'a');
  const streamed = await request('POST', '/api/auth/sign-in/email', {
    from: TRUSTED,
    headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.201' },
    chunks: [chunk, chunk, chunk, chunk, chunk],
  });
  assert.equal(streamed.status, 413, streamed.body);
  assert.match(JSON.parse(streamed.body).message, /over the limit of 1048576 bytes \(TOOLSMITH_MAX_BODY_BYTES\)/);
  const fine = await signIn('other@example.com', PASSWORD, TRUSTED, { 'x-forwarded-for': '192.0.2.202' });
  assert.equal(fine.status, 200);
});

test('a flood of 60 parallel wrong passwords: hashes at once never pass the cap, a signed-in request is served while they queue, and callers that hang up leave the queue unhashed', {
  skip,
}, async (t) => {
  // The mechanism, read from the server itself (system.health, signed in); how fast the signed-in request stays
  // under the flood is a speed, measured side by side by `npm run bench:signin`.
  const me = await signIn('flood@example.com', PASSWORD, TRUSTED, { 'x-forwarded-for': '198.51.100.90' });
  assert.equal(me.status, 200);
  const cookie = cookieOf(me);
  type Health = {
    signInHashes: { active: number; queued: number; peak: number; cap: number };
    refusedAnonymous: Record<string, number>;
  };
  const health = async (): Promise<Health> => {
    const r = await request('GET', '/api/trpc/system.health', {
      from: TRUSTED,
      headers: { cookie, 'x-forwarded-for': '198.51.100.90' },
    });
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body).result.data as Health;
  };
  const before = await health();
  const flood = startFlood(port);
  // Each sample is a signed-in request the server answered; what it answered says what was waiting at that moment.
  const during: Health['signInHashes'][] = [];
  await waitFor('the flood to fill the queue', async () => (await health()).signInHashes.queued > 0, {
    timeoutMs: 60_000,
  });
  for (let i = 0; i < 9; i++) during.push((await health()).signInHashes);
  // The flood's sign-ins are hashed and answered (401: wrong password), one cap's worth at a time.
  await waitFor('a flooded sign-in to be hashed and answered 401', () => flood.answered(401) > 0, {
    timeoutMs: 60_000,
  });
  const statuses = await flood.stop();
  // The callers hung up: the queued ones leave without a hash (counted as gone), the running ones finish.
  const after = await waitFor(
    'the queue to empty after the callers hung up',
    async () => {
      const h = await health();
      return h.signInHashes.active === 0 && h.signInHashes.queued === 0 ? h : null;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  t.diagnostic(
    `during the flood: ${during.map((h) => `${h.active}+${h.queued}`).join(', ')} (running+queued); cap ${after.signInHashes.cap}, peak ${after.signInHashes.peak}; answers ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
  assert.ok(
    during.every((h) => h.queued > 0),
    `every signed-in request was answered while sign-ins waited: ${during.map((h) => h.queued).join(',')}`,
  );
  assert.ok(
    during.every((h) => h.active <= h.cap) && after.signInHashes.peak <= after.signInHashes.cap,
    `hashes at once stayed within the cap ${after.signInHashes.cap}: peak ${after.signInHashes.peak}`,
  );
  const gone = (h: Health) => h.refusedAnonymous['sign-in: gone'] ?? 0;
  assert.ok(gone(after) > gone(before), `queued callers that hung up left unhashed: ${gone(before)} → ${gone(after)}`);
});
