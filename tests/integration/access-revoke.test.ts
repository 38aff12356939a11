// Access that can be taken away: a real sign-in through Better Auth's handler gives a real
// cookie, a real API token is minted, and both are sent to the tRPC endpoint exactly as the web route composes it
// (fetchRequestHandler + resolvePrincipal). A disable, a password reset and a role change make the old cookie and the
// old token answer 401 on the very next request; a disabled user cannot sign in by password or one-time link and is
// told why; removal keeps the author of runs and recipes; a user changes their own password. Also: the public
// system.health names no run, job owner or host to an anonymous caller.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { freshDatabase } from '../helpers/db.ts';
import { CLIENT_ADDRESS_HEADER } from '../../server/http/client-address.ts';
import type { Database } from '../../server/db/client.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { STREAM_RECHECK_MS } from '../../server/trpc/routers/runs.ts';
import { appendEvent } from '../../server/store/events.ts';
import { getAuth, signInLink } from '../../server/auth/auth.ts';
import { resolvePrincipal } from '../../server/auth/principal.ts';
import {
  createUser,
  disableUser,
  enableUser,
  getUser,
  listUsers,
  removeUser,
  setPassword,
  setRole,
} from '../../server/auth/users.ts';
import { createToken } from '../../server/auth/tokens.ts';
import { createRun } from '../../server/store/runs.ts';
import { createRecipeVersion } from '../../server/store/recipes.ts';
import { MICRO_INPUT } from '../../server/recipes/defaults.ts';
import { enqueue, lease } from '../../server/store/jobs.ts';

const BASE = 'http://localhost:3000';
const PASSWORD = 'correct horse battery';
let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
});
afterEach(async () => {
  await fresh.close();
});

const cookiesOf = (r: Response) =>
  r.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');

/** POST /api/auth/sign-in/email as the sign-in page sends it (each from its own client address: the per-address
 * sign-in limit is not what these tests are about). */
let nextAddress = 1;
async function signIn(email: string, password = PASSWORD) {
  const address = `198.51.100.${nextAddress++ % 250}`;
  const r = await getAuth(db).handler(
    new Request(`${BASE}/api/auth/sign-in/email`, {
      method: 'POST',
      body: JSON.stringify({ email, password }),
      headers: { origin: BASE, 'content-type': 'application/json', [CLIENT_ADDRESS_HEADER]: address },
    }),
  );
  return {
    status: r.status,
    cookie: cookiesOf(r),
    body: (await r.json().catch(() => ({}))) as { code?: string; message?: string },
  };
}

/** One tRPC call over HTTP, composed as app/api/trpc/[trpc]/route.ts composes it: the status and the JSON body. */
async function trpc(
  path: string,
  creds: { cookie?: string; token?: string },
  input?: unknown,
  method: 'GET' | 'POST' = 'GET',
) {
  const headers = new Headers({ origin: BASE });
  if (creds.cookie) headers.set('cookie', creds.cookie);
  if (creds.token) headers.set('authorization', `Bearer ${creds.token}`);
  let url = `${BASE}/api/trpc/${path}`;
  let body: string | undefined;
  if (method === 'GET') {
    if (input !== undefined) url += `?input=${encodeURIComponent(JSON.stringify(input))}`;
  } else {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(input ?? {});
  }
  const req = new Request(url, { method, headers, body });
  const r = await fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: async () => ({ db, principal: await resolvePrincipal(db, req.headers) }),
  });
  return { status: r.status, json: (await r.json()) as { result?: { data: unknown }; error?: { message: string } } };
}
const mutate = (path: string, creds: { cookie?: string; token?: string }, input: unknown) =>
  trpc(path, creds, input, 'POST');

/** A researcher with a password, signed in once, and an API token of theirs: both work before anything is revoked. */
async function signedInResearcher(email = 'ada@lab.example') {
  await createUser(db, { email, role: 'researcher', password: PASSWORD });
  const s = await signIn(email);
  assert.equal(s.status, 200);
  const { token } = await createToken(db, { email, name: 'ci' });
  assert.equal((await trpc('runs.list', { cookie: s.cookie }, {})).status, 200);
  assert.equal((await trpc('runs.list', { token }, {})).status, 200);
  return { cookie: s.cookie, token };
}

test('disable: the old cookie and the old token get 401 at once; no sign-in by password or link, with the reason; enable lets them back', async () => {
  const { cookie, token } = await signedInResearcher();
  const u = await disableUser(db, 'ada@lab.example');
  assert.equal(u.status, 'disabled');
  const byCookie = await trpc('runs.list', { cookie }, {});
  assert.equal(byCookie.status, 401, JSON.stringify(byCookie.json));
  assert.equal((await trpc('runs.list', { token }, {})).status, 401);
  assert.equal(
    await db.prisma.session.count({ where: { userId: u.id } }),
    0,
    'the sessions are gone, not merely ignored',
  );

  const refused = await signIn('ada@lab.example');
  assert.equal(refused.status, 403);
  assert.equal(refused.body.code, 'ACCOUNT_DISABLED');
  assert.match(refused.body.message ?? '', /This account is disabled/);
  assert.equal(refused.cookie.includes('session_token='), false);
  // A one-time link made before (or despite) the disable opens nothing: back to the sign-in page with the reason.
  const link = await signInLink(db, 'ada@lab.example');
  const viaLink = await getAuth(db).handler(new Request(link, { redirect: 'manual' }));
  assert.equal(viaLink.status, 302);
  assert.equal(viaLink.headers.get('location'), `${BASE}/sign-in?error=account_disabled`);
  assert.equal(await db.prisma.session.count({ where: { userId: u.id } }), 0);

  assert.equal((await enableUser(db, 'ada@lab.example')).status, 'active');
  const back = await signIn('ada@lab.example');
  assert.equal(back.status, 200);
  assert.equal((await trpc('runs.list', { cookie: back.cookie }, {})).status, 200);
  assert.equal((await trpc('runs.list', { token }, {})).status, 401, 'tokens revoked by the disable stay revoked');
});

test('a password reset ends every session (two browsers) and every token of the user; the new password works', async () => {
  const { cookie, token } = await signedInResearcher();
  const second = await signIn('ada@lab.example');
  const other = await signedInResearcher('bo@lab.example');
  const ended = await setPassword(db, 'ada@lab.example', 'a brand new passphrase');
  assert.deepEqual(ended, { sessions: 2, tokens: 1 });
  for (const c of [cookie, second.cookie]) assert.equal((await trpc('runs.list', { cookie: c }, {})).status, 401);
  assert.equal((await trpc('runs.list', { token }, {})).status, 401);
  assert.equal((await trpc('runs.list', { cookie: other.cookie }, {})).status, 200, 'another user is untouched');
  assert.equal((await trpc('runs.list', { token: other.token }, {})).status, 200);
  assert.equal((await signIn('ada@lab.example')).status, 401, 'the old password');
  assert.equal((await signIn('ada@lab.example', 'a brand new passphrase')).status, 200);
});

test('a role change ends sessions and tokens; a new sign-in has the new role; the role is read per request', async () => {
  const { cookie, token } = await signedInResearcher();
  const save = (c: { cookie?: string; token?: string }) =>
    mutate('recipes.save', c, { spec: { ...MICRO_INPUT, name: 'ada-recipe' } });
  assert.equal((await save({ cookie })).status, 200);
  await setRole(db, 'ada@lab.example', 'viewer');
  assert.equal((await trpc('runs.list', { cookie }, {})).status, 401);
  assert.equal((await trpc('runs.list', { token }, {})).status, 401);
  const again = await signIn('ada@lab.example');
  assert.equal((await trpc('runs.list', { cookie: again.cookie }, {})).status, 200);
  assert.equal((await save({ cookie: again.cookie })).status, 403, 'a viewer now');
  // Even a session that outlived a change made behind the app's back acts with the row's current role.
  await db.prisma.user.update({ where: { email: 'ada@lab.example' }, data: { role: 'researcher' } });
  assert.equal((await resolvePrincipal(db, new Headers({ cookie: again.cookie })))?.role, 'researcher');
  await db.prisma.user.update({ where: { email: 'ada@lab.example' }, data: { disabledAt: new Date() } });
  assert.equal(await resolvePrincipal(db, new Headers({ cookie: again.cookie })), null);
});

test('remove: no sign-in and no credentials left; runs and recipes keep their author; add again brings the row back', async () => {
  const { cookie, token } = await signedInResearcher();
  const ada = (await getUser(db, 'ada@lab.example'))!;
  const recipe = await createRecipeVersion(
    db,
    'ada-recipe',
    { ...MICRO_INPUT, name: 'ada-recipe' },
    { createdBy: ada.id },
  );
  const run = await createRun(db, { name: 'ada run', kind: 'train', recipeSpec: {}, createdBy: ada.id });
  await removeUser(db, 'ada@lab.example');
  assert.equal((await trpc('runs.list', { cookie }, {})).status, 401);
  assert.equal((await trpc('runs.list', { token }, {})).status, 401);
  assert.equal(await db.prisma.account.count({ where: { userId: ada.id } }), 0, 'password and OIDC links deleted');
  assert.equal((await signIn('ada@lab.example')).status, 401);
  assert.deepEqual(
    (await listUsers(db)).map((u) => u.email),
    [],
    'not listed',
  );
  await assert.rejects(createToken(db, { email: 'ada@lab.example' }), /user: ada@lab\.example was removed/);
  await assert.rejects(setRole(db, 'ada@lab.example', 'admin'), /email: ada@lab\.example was removed/);
  // Nothing they made was deleted, and its author still resolves to their email.
  const author = async (id: string | null | undefined) =>
    id ? (await db.prisma.user.findUnique({ where: { id } }))?.email : null;
  assert.equal(await author((await db.prisma.run.findUnique({ where: { id: run.id } }))?.createdBy), 'ada@lab.example');
  assert.equal(recipe.status, 'created');
  assert.equal(
    await author((await db.prisma.recipe.findFirst({ where: { name: 'ada-recipe' } }))?.createdBy),
    'ada@lab.example',
  );
  const again = await createUser(db, { email: 'ada@lab.example', role: 'viewer', password: 'another passphrase' });
  assert.deepEqual(
    { id: again.id, status: again.status, role: again.role },
    { id: ada.id, status: 'active', role: 'viewer' },
  );
  assert.equal((await signIn('ada@lab.example', 'another passphrase')).status, 200);
});

test("the System page's admin actions: disable, enable, remove by email; not on oneself; never the last admin", async () => {
  await createUser(db, { email: 'root@lab.example', role: 'admin', password: PASSWORD });
  const admin = (await signIn('root@lab.example')).cookie;
  const ada = await signedInResearcher();
  const dis = await mutate('admin.disableUser', { cookie: admin }, { email: 'ada@lab.example' });
  assert.equal(dis.status, 200, JSON.stringify(dis.json));
  assert.equal((await trpc('runs.list', { cookie: ada.cookie }, {})).status, 401);
  assert.equal((await mutate('admin.disableUser', { cookie: ada.cookie }, { email: 'root@lab.example' })).status, 401);
  const link = await mutate('admin.signInLink', { cookie: admin }, { email: 'ada@lab.example' });
  assert.equal(link.status, 400);
  assert.match(link.json.error!.message, /^email: ada@lab\.example is disabled; a link would not sign them in/);
  const users = (await trpc('admin.users', { cookie: admin })).json.result?.data as { email: string; status: string }[];
  assert.deepEqual(
    users.map((u) => `${u.email} ${u.status}`),
    ['root@lab.example active', 'ada@lab.example disabled'],
  );
  assert.equal((await mutate('admin.enableUser', { cookie: admin }, { email: 'ada@lab.example' })).status, 200);
  const self = await mutate('admin.disableUser', { cookie: admin }, { email: 'root@lab.example' });
  assert.equal(self.status, 400);
  assert.match(self.json.error!.message, /email: you cannot disable yourself/);
  assert.equal((await mutate('admin.removeUser', { cookie: admin }, { email: 'ada@lab.example' })).status, 200);
  assert.equal((await getUser(db, 'ada@lab.example'))?.status, 'removed');
  // The operator's shell (no acting user) still may not leave the team without an active admin.
  await assert.rejects(disableUser(db, 'root@lab.example'), /disable: root@lab\.example is the only active admin/);
  await assert.rejects(removeUser(db, 'root@lab.example'), /remove: root@lab\.example is the only active admin/);
  await assert.rejects(setRole(db, 'root@lab.example', 'viewer'), /role: root@lab\.example is the only active admin/);
  const audit = (await db.prisma.auditLog.findMany({ orderBy: { id: 'asc' } })).map((a) => `${a.action} ${a.ok}`);
  assert.deepEqual(
    audit.filter((a) => a.startsWith('admin.')),
    [
      'admin.disableUser true',
      'admin.signInLink false',
      'admin.enableUser true',
      'admin.disableUser false',
      'admin.removeUser true',
    ],
  );
});

test('a user changes their own password: the current one required; their other sessions end, this one and their tokens stay', async () => {
  const { cookie, token } = await signedInResearcher();
  const other = await signIn('ada@lab.example');
  const wrong = await mutate(
    'auth.changePassword',
    { cookie },
    { currentPassword: 'not my password', newPassword: 'a brand new passphrase' },
  );
  assert.equal(wrong.status, 400);
  assert.match(wrong.json.error!.message, /^currentPassword: that is not your current password/);
  const short = await mutate('auth.changePassword', { cookie }, { currentPassword: PASSWORD, newPassword: 'short' });
  assert.match(short.json.error!.message, /^newPassword: at least 10 characters/);
  const ok = await mutate(
    'auth.changePassword',
    { cookie },
    { currentPassword: PASSWORD, newPassword: 'a brand new passphrase' },
  );
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  assert.deepEqual(ok.json.result?.data, { endedSessions: 1 });
  assert.equal((await trpc('runs.list', { cookie }, {})).status, 200, 'the session that changed it stays');
  assert.equal((await trpc('runs.list', { cookie: other.cookie }, {})).status, 401, 'the other browser is signed out');
  assert.equal((await trpc('runs.list', { token }, {})).status, 200);
  assert.equal((await signIn('ada@lab.example', 'a brand new passphrase')).status, 200);
  // Better Auth's own endpoint, which would skip the limit below, is not served.
  const direct = await getAuth(db).handler(
    new Request(`${BASE}/api/auth/change-password`, {
      method: 'POST',
      headers: { origin: BASE, 'content-type': 'application/json', cookie },
      body: JSON.stringify({
        currentPassword: 'a brand new passphrase',
        newPassword: 'changed behind the app',
        revokeOtherSessions: false,
      }),
    }),
  );
  assert.equal(direct.status, 404);
  // Someone holding a borrowed session cannot guess the password through this form without end.
  for (let i = 0; i < 5; i++)
    await mutate(
      'auth.changePassword',
      { cookie },
      { currentPassword: `guess ${i} abcdefgh`, newPassword: 'whatever it is now' },
    );
  const locked = await mutate(
    'auth.changePassword',
    { cookie },
    { currentPassword: 'a brand new passphrase', newPassword: 'yet another passphrase' },
  );
  assert.match(locked.json.error!.message, /^currentPassword: too many wrong tries/);
});

test('system.health: anonymous callers learn that the server is up and how busy, not which runs run where', async () => {
  await createUser(db, { email: 'vi@lab.example', role: 'viewer', password: PASSWORD });
  const run = await createRun(db, { name: 'busy', kind: 'train', recipeSpec: {} });
  await enqueue(db, { kind: 'test.sleep', runId: run.id });
  assert.ok(await lease(db, 'gpu-host-7-1234', 30_000));
  const anon = await trpc('system.health', {});
  assert.equal(anon.status, 200);
  const text = JSON.stringify(anon.json);
  assert.doesNotMatch(text, new RegExp(`${run.id}|gpu-host-7|leaseOwner|runId|busyWorkers`));
  assert.equal((anon.json.result?.data as { busyJobs: number }).busyJobs, 1);
  // A refused anonymous mutation writes no audit row; it is counted, and the count is for signed-in eyes.
  const auditRows = await db.prisma.auditLog.count();
  assert.equal((await trpc('runs.cancel', {}, { runId: run.id }, 'POST')).status, 401);
  assert.equal(await db.prisma.auditLog.count(), auditRows);
  assert.doesNotMatch(JSON.stringify((await trpc('system.health', {})).json), /refused/i);
  const signedIn = await trpc('system.health', { cookie: (await signIn('vi@lab.example')).cookie });
  const data = signedIn.json.result?.data as {
    busyWorkers: { leaseOwner: string; runId: string }[];
    refusedAnonymous: Record<string, number>;
  };
  assert.deepEqual(
    data.busyWorkers.map((w) => [w.leaseOwner, w.runId]),
    [['gpu-host-7-1234', run.id]],
  );
  assert.ok((data.refusedAnonymous['trpc: UNAUTHORIZED'] ?? 0) >= 1, JSON.stringify(data.refusedAnonymous));
});

test('a live event stream opened before a disable ends at its next re-check, with 401', {
  timeout: STREAM_RECHECK_MS * 10,
}, async () => {
  const { cookie } = await signedInResearcher();
  const run = await createRun(db, { name: 'watched', kind: 'train', recipeSpec: {} });
  const p = await resolvePrincipal(db, new Headers({ cookie }));
  assert.ok(p?.sessionId, 'a session principal knows its session');
  const stream = await createCallerFactory(appRouter)({ db, principal: p }).runs.events({ runId: run.id });
  const it = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  await appendEvent(db, run.id, { level: 'info', type: 'log', message: 'first' });
  assert.ok(!(await it.next()).done, 'the stream delivers while access stands');
  await disableUser(db, 'ada@lab.example');
  // Without the re-check the stream would wait for events forever (the test's timeout would fail it).
  const ended = await it.next().then(
    () => null,
    (e: { code?: string }) => e.code,
  );
  assert.equal(ended, 'UNAUTHORIZED');
});
