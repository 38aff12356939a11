// @postgresql: also on PostgreSQL, because the throttle's rows and its per-account lock are each dialect's (an advisory lock there).
/**
 * The password sign-in throttle through the sign-in edge as the web server runs it
 * (withAuthEdge in front of Better Auth's handler, server/http/auth-edge.ts), on a real database: growing delays per
 * address and per account instead of a lock anyone could set off. Several "web servers" are several edges, each with
 * its own Better Auth instance and database handle, over one database; a restart is a new one. The throttle's clock
 * (and the edge's per-address limit's) is injected, so waiting out a delay is moving it, whatever the machine's load.
 * Better Auth's own per-address limit (5 a minute) reads the real clock: where a test needs more tries from one address
 * than that, it clears Better Auth's counters between them, as if its minute had passed.
 */
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { dialect, freshDatabase } from '../helpers/db.ts';
import { openDatabase, type Database } from '../../server/db/client.ts';
import { getAuth } from '../../server/auth/auth.ts';
import { createUser } from '../../server/auth/users.ts';
import { CLIENT_ADDRESS_HEADER } from '../../server/http/client-address.ts';
import { createAuthEdge, EDGE_LIMITS, withAuthEdge } from '../../server/http/auth-edge.ts';
import { RefusalCounter } from '../../server/http/refusals.ts';
import { attemptsOf, storedAttempts } from '../../server/store/sign-in-throttle.ts';
import { THROTTLE_POLICY } from '../../server/http/sign-in-throttle.ts';

const BASE = 'http://localhost:3000';
const PASSWORD = 'the owner password';
let fresh: Awaited<ReturnType<typeof freshDatabase>>;
const opened: Database[] = [];
let now = 0;
const clock = () => now;

beforeEach(async () => {
  fresh = await freshDatabase();
  now = Date.now();
  await createUser(fresh.db, { email: 'owner@example.com', role: 'admin', password: PASSWORD });
});
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
  await fresh.close();
});

/** One web server: its own database handle, Better Auth instance and sign-in edge, over the test's database. */
async function webServer() {
  const db = await openDatabase(fresh.url);
  opened.push(db);
  const edge = createAuthEdge(EDGE_LIMITS, new RefusalCounter({ intervalMs: 60_000, log: () => {} }), clock);
  const handle = withAuthEdge(getAuth(db).handler, edge, {
    maxBodyBytes: () => 1024 * 1024,
    knownEmail: async () => true,
    attempts: storedAttempts(async () => db, { now: clock }),
  });
  const signIn = async (email: string, password: string, ip: string) => {
    const r = await handle(
      new Request(`${BASE}/api/auth/sign-in/email`, {
        method: 'POST',
        headers: { origin: BASE, 'content-type': 'application/json', [CLIENT_ADDRESS_HEADER]: ip },
        body: JSON.stringify({ email, password }),
      }),
    );
    const body = (await r.json().catch(() => ({}))) as { code?: string; message?: string };
    return { status: r.status, retryAfter: r.headers.get('retry-after'), body };
  };
  return { db, signIn };
}

/** Better Auth's per-address counters, cleared: its minute has passed (it reads the real clock, not the test's). */
const betterAuthMinutePasses = () => fresh.db.prisma.rateLimit.deleteMany({});

test('50 wrong passwords from one address slow that address only: the owner signs in from another at once', async () => {
  const web = await webServer();
  let wrong = 0;
  let waited = 0;
  while (wrong < 50) {
    await betterAuthMinutePasses();
    const r = await web.signIn('owner@example.com', `guess ${wrong}`, '198.51.100.66');
    if (r.status === 429) {
      // The delay, or the per-address limit of 5 a minute: the attacker waits out each.
      assert.match(String(r.body.code), /^TOO_MANY_(FAILED_SIGN_INS|REQUESTS)$/, JSON.stringify(r.body));
      now += Number(r.retryAfter) * 1000;
      waited++;
      continue;
    }
    assert.equal(r.status, 401);
    wrong++;
  }
  assert.ok(waited >= 45, `the attacker met a delay before each try past the fifth: ${waited}`);
  const held = await web.signIn('owner@example.com', PASSWORD, '198.51.100.66');
  assert.deepEqual([held.status, held.retryAfter], [429, '300'], 'that address waits the longest delay, 5 minutes');
  const owner = await web.signIn('owner@example.com', PASSWORD, '203.0.113.5');
  assert.equal(owner.status, 200, 'the right password from another address, at once');
  assert.deepEqual(
    (await attemptsOf(web.db, 'owner@example.com')).map((p) => [p.address, p.failures]),
    [
      ['198.51.100.66', 50],
      ['203.0.113.5', 0],
    ],
  );
});

test('guessing from many addresses meets the account delay; the answer is the same for an email with no account; a known address is not held back', async () => {
  const web = await webServer();
  assert.equal((await web.signIn('owner@example.com', PASSWORD, '203.0.113.5')).status, 200, 'the owner, once');
  for (const email of ['owner@example.com', 'nobody@example.com']) {
    for (let i = 0; i < 10; i++)
      assert.equal((await web.signIn(email, `guess ${i}`, `192.0.2.${i + 1}`)).status, 401, `${email} try ${i}`);
  }
  const refused = await web.signIn('owner@example.com', 'guess 10', '192.0.2.11');
  const refusedNobody = await web.signIn('nobody@example.com', 'guess 10', '192.0.2.11');
  assert.equal(refused.status, 429);
  assert.equal(refused.retryAfter, String(THROTTLE_POLICY.firstDelayS));
  assert.match(
    refused.body.message ?? '',
    /^too many failed sign-ins: try again in 4 s, or ask an admin for a one-time link/,
  );
  assert.deepEqual(refusedNobody, refused, 'nothing tells an account from an email that has none');
  assert.equal(
    (await web.signIn('owner@example.com', PASSWORD, '192.0.2.99')).status,
    429,
    'a new address waits too, right password or not (it cannot be told from a guesser)',
  );
  assert.equal((await web.signIn('owner@example.com', PASSWORD, '203.0.113.5')).status, 200, 'the known address');
  // Waited out, one more guess, and the next wait is twice as long.
  now += 4000;
  assert.equal((await web.signIn('owner@example.com', 'guess 11', '192.0.2.12')).status, 401);
  const longer = await web.signIn('owner@example.com', 'guess 12', '192.0.2.13');
  assert.deepEqual([longer.status, longer.retryAfter], [429, '8']);
});

test('two web servers over one database share the count, attempts at once included, and a restart keeps it', async () => {
  const a = await webServer();
  const b = await webServer();
  // One address, its tries spread over both servers: five free, the sixth waits.
  for (let i = 0; i < 5; i++)
    assert.equal((await (i % 2 ? b : a).signIn('owner@example.com', `g${i}`, '198.51.100.7')).status, 401);
  const sixth = await b.signIn('owner@example.com', 'g5', '198.51.100.7');
  assert.deepEqual([sixth.status, sixth.retryAfter], [429, '4']);
  // Thirty at once from thirty addresses (the clock stands still): the five counted so far and five more make ten, so
  // exactly five are checked, however they interleave. On PostgreSQL half go to each server. SQLite's web servers are
  // separate processes taking turns at the write lock; two of its clients in one process would not take turns (one
  // waiting for the lock blocks the event loop the other needs to finish), so there they all go to one server.
  const server = (i: number) => (dialect === 'postgresql' && i % 2 ? b : a);
  const replies = await Promise.all(
    Array.from({ length: 30 }, (_, i) => server(i).signIn('owner@example.com', `p${i}`, `203.0.114.${i + 1}`)),
  );
  const codes = replies.map((r) => r.status);
  assert.deepEqual(
    [codes.filter((c) => c === 401).length, codes.filter((c) => c === 429).length],
    [5, 25],
    codes.join(','),
  );
  // A restart: a new process, its own Better Auth instance and memory, the same database.
  const restarted = await webServer();
  const after = await restarted.signIn('owner@example.com', 'g6', '203.0.115.1');
  assert.deepEqual([after.status, after.retryAfter], [429, '4']);
  now += 4000;
  assert.equal((await restarted.signIn('owner@example.com', 'g7', '203.0.115.1')).status, 401);
});

test('an email longer than any address is refused before it is stored', async () => {
  const web = await webServer();
  const r = await web.signIn(`${'a'.repeat(250)}@example.com`, 'x'.repeat(12), '192.0.2.60');
  assert.deepEqual([r.status, r.body.code], [400, 'INVALID_EMAIL']);
  assert.equal(await fresh.db.prisma.signInThrottle.count(), 0);
});

test('old rows are deleted: a run of failures an hour after its last one, a known address after 30 days', async () => {
  const web = await webServer();
  assert.equal((await web.signIn('owner@example.com', PASSWORD, '203.0.113.5')).status, 200);
  for (let i = 0; i < 3; i++)
    assert.equal((await web.signIn(`made-up-${i}@example.com`, 'x'.repeat(12), '192.0.2.40')).status, 401);
  const rows = () => fresh.db.prisma.signInThrottle.count();
  assert.equal(await rows(), 4);
  now += THROTTLE_POLICY.forgetMs + 60_000;
  await web.signIn('someone@example.com', 'x'.repeat(12), '192.0.2.41'); // a write prunes
  assert.deepEqual(
    (await fresh.db.prisma.signInThrottle.findMany({ orderBy: { account: 'asc' } })).map((r) => r.account),
    ['owner@example.com', 'someone@example.com'],
  );
  now += THROTTLE_POLICY.knownMs;
  await web.signIn('someone@example.com', 'x'.repeat(12), '192.0.2.41');
  assert.deepEqual(
    (await fresh.db.prisma.signInThrottle.findMany()).map((r) => r.account),
    ['someone@example.com'],
  );
});
