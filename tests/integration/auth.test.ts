// @postgresql: also on PostgreSQL, because Better Auth's Prisma adapter keeps users, sessions and tokens in each dialect's tables.
// Sign-in for real: Better Auth's own handler (server/auth/auth.ts) on a real database — email + password, wrong
// passwords, the sign-in rate limit, sign-out, one-time links, API tokens (use, revoke, expiry) — and single sign-on
// against a real OpenID Provider (panva's oidc-provider, certified) that this test starts on a local port.
import { after, afterEach, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshDatabase } from '../helpers/db.ts';
import { startIssuer, walkProvider, type TestIssuer } from '../helpers/oidc-flow.ts';
import type { Database } from '../../server/db/client.ts';
import { getAuth, signInLink } from '../../server/auth/auth.ts';
import { resolvePrincipal } from '../../server/auth/principal.ts';
import { createUser } from '../../server/auth/users.ts';
import { createToken, principalOfToken, revokeToken } from '../../server/auth/tokens.ts';
import { CLIENT_ADDRESS_HEADER } from '../../server/http/client-address.ts';

const BASE = 'http://localhost:3000';
let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
});
afterEach(async () => {
  await fresh.close();
});

/** A request to /api/auth/* as a browser on the app's origin sends it, with the address the web server records. */
function req(path: string, init: { method?: string; body?: unknown; cookie?: string; ip?: string } = {}) {
  const headers = new Headers({ origin: BASE, [CLIENT_ADDRESS_HEADER]: init.ip ?? '203.0.113.7' });
  if (init.body !== undefined) headers.set('content-type', 'application/json');
  if (init.cookie) headers.set('cookie', init.cookie);
  return new Request(`${BASE}/api/auth${path}`, {
    method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'),
    headers,
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
    redirect: 'manual',
  });
}
const cookiesOf = (r: Response) =>
  r.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
const withCookie = (cookie: string) => new Headers({ cookie });

test('email + password: a session in the database, the role in the principal; wrong password refused; sign-out ends it', async () => {
  await createUser(db, { email: 'Ada@Example.com', role: 'researcher', password: 'correct horse battery' });
  const auth = getAuth(db);
  const bad = await auth.handler(
    req('/sign-in/email', { body: { email: 'ada@example.com', password: 'wrong password!' } }),
  );
  assert.equal(bad.status, 401);
  const ok = await auth.handler(
    req('/sign-in/email', { body: { email: 'ada@example.com', password: 'correct horse battery' } }),
  );
  assert.equal(ok.status, 200);
  const setCookie = ok.headers.getSetCookie().join('\n');
  assert.match(setCookie, /HttpOnly/i);
  assert.match(setCookie, /SameSite=Lax/i);
  const cookie = cookiesOf(ok);
  assert.equal(await db.prisma.session.count(), 1);
  const p = await resolvePrincipal(db, withCookie(cookie));
  assert.deepEqual(p && { email: p.email, role: p.role, via: p.via }, {
    email: 'ada@example.com',
    role: 'researcher',
    via: 'session',
  });
  const account = await db.prisma.account.findFirst({ where: { providerId: 'credential' } });
  assert.ok(account!.password && !account!.password.includes('correct horse'), 'only a hash is stored');
  const out = await auth.handler(req('/sign-out', { body: {}, cookie }));
  assert.equal(out.status, 200);
  assert.equal(await db.prisma.session.count(), 0);
  assert.equal(await resolvePrincipal(db, withCookie(cookie)), null);
  assert.equal(await resolvePrincipal(db, withCookie('better-auth.session_token=forged.value')), null);
});

test('sign-in attempts are rate-limited per client address', async () => {
  await createUser(db, { email: 'bo@example.com', role: 'viewer', password: 'a good long password' });
  const auth = getAuth(db);
  const codes: number[] = [];
  for (let i = 0; i < 7; i++)
    codes.push(
      (
        await auth.handler(
          req('/sign-in/email', {
            body: { email: 'bo@example.com', password: `guess number ${i}` },
            ip: '198.51.100.9',
          }),
        )
      ).status,
    );
  assert.deepEqual(codes.slice(0, 5), [401, 401, 401, 401, 401]);
  assert.ok(
    codes.slice(5).every((c) => c === 429),
    codes.join(','),
  );
  // Another address is not blocked by the first one's attempts.
  assert.equal(
    (
      await auth.handler(
        req('/sign-in/email', {
          body: { email: 'bo@example.com', password: 'a good long password' },
          ip: '198.51.100.10',
        }),
      )
    ).status,
    200,
  );
});

test('the rate limit reads only the address the web server recorded: X-Forwarded-For and X-Real-IP choose no bucket', async () => {
  await createUser(db, { email: 'cy@example.com', role: 'viewer', password: 'a good long password' });
  const auth = getAuth(db);
  const codes: number[] = [];
  for (let i = 0; i < 7; i++) {
    const r = req('/sign-in/email', { body: { email: 'cy@example.com', password: `guess ${i}` }, ip: '198.51.100.20' });
    r.headers.set('x-forwarded-for', `192.0.2.${i}`);
    r.headers.set('x-real-ip', `192.0.2.${i}`);
    codes.push((await auth.handler(r)).status);
  }
  assert.deepEqual(codes, [401, 401, 401, 401, 401, 429, 429]);
});

test('a one-time sign-in link opens a session once', async () => {
  await createUser(db, { email: 'root@example.com', role: 'admin' });
  const url = await signInLink(db, 'root@example.com');
  assert.match(url, /^http:\/\/localhost:3000\/api\/auth\/magic-link\/verify\?token=/);
  const auth = getAuth(db);
  const first = await auth.handler(
    new Request(url, { redirect: 'manual', headers: { [CLIENT_ADDRESS_HEADER]: '203.0.113.8' } }),
  );
  assert.equal(first.status, 302);
  const p = await resolvePrincipal(db, withCookie(cookiesOf(first)));
  assert.equal(p?.role, 'admin');
  const again = await auth.handler(
    new Request(url, { redirect: 'manual', headers: { [CLIENT_ADDRESS_HEADER]: '203.0.113.8' } }),
  );
  assert.equal(await resolvePrincipal(db, withCookie(cookiesOf(again))), null, 'the link is single-use');
});

test("API tokens: act with the lower of their scope's role and the user's, stored hashed; revoked or expired → no one", async () => {
  const u = await createUser(db, { email: 'ci@example.com', role: 'researcher' });
  const t = await createToken(db, { email: 'ci@example.com', name: 'ci', expiresDays: 2, scope: 'write' });
  assert.match(t.token, /^tsk_[A-Za-z0-9_-]{43}$/);
  const row = await db.prisma.apiToken.findUnique({ where: { id: t.id } });
  assert.ok(row && row.tokenHash !== t.token && !row.tokenHash.includes(t.token.slice(4)));
  const p = await resolvePrincipal(db, new Headers({ authorization: `Bearer ${t.token}` }));
  assert.deepEqual(p && { userId: p.userId, role: p.role, via: p.via, scope: p.scope }, {
    userId: u.id,
    role: 'researcher',
    via: 'token',
    scope: 'write',
  });
  // The default is the narrowest scope; a scope above the user's role does not lift it.
  const read = await createToken(db, { email: 'ci@example.com' });
  assert.equal(read.scope, 'read');
  const asRead = await resolvePrincipal(db, new Headers({ authorization: `Bearer ${read.token}` }));
  assert.deepEqual([asRead?.role, asRead?.scope], ['viewer', 'read']);
  const wide = await createToken(db, { email: 'ci@example.com', scope: 'admin' });
  assert.equal(
    (await resolvePrincipal(db, new Headers({ authorization: `Bearer ${wide.token}` })))?.role,
    'researcher',
  );
  await assert.rejects(createToken(db, { email: 'ci@example.com', scope: 'root' }), (e: Error) => {
    assert.match(e.message, /^scope: one of read, write, admin, not "root"$/);
    return true;
  });
  assert.equal(await resolvePrincipal(db, new Headers({ authorization: `Bearer ${t.token}x` })), null);
  assert.equal(await principalOfToken(db, t.token, new Date(Date.now() + 3 * 86_400_000)), null, 'expired');
  await revokeToken(db, t.id);
  assert.equal(await resolvePrincipal(db, new Headers({ authorization: `Bearer ${t.token}` })), null, 'revoked');
  await assert.rejects(createToken(db, { email: 'nobody@example.com' }), /user: no user nobody@example.com/);
  await assert.rejects(createToken(db, { email: 'ci@example.com', expiresDays: -1 }), /expires-days/);
});

// ——— single sign-on against a real OpenID Provider ———

let issuer: TestIssuer;
const SAVED = { ...process.env };

before(async () => {
  issuer = await startIssuer(BASE, (login) => `${login}@corp.example`);
  Object.assign(process.env, {
    TOOLSMITH_OIDC_ISSUER: issuer.url,
    TOOLSMITH_OIDC_CLIENT_ID: 'toolsmith',
    TOOLSMITH_OIDC_CLIENT_SECRET: 'oidc-test-secret',
    TOOLSMITH_OIDC_DEFAULT_ROLE: 'researcher',
  });
});
after(async () => {
  for (const k of [
    'TOOLSMITH_OIDC_ISSUER',
    'TOOLSMITH_OIDC_CLIENT_ID',
    'TOOLSMITH_OIDC_CLIENT_SECRET',
    'TOOLSMITH_OIDC_DEFAULT_ROLE',
  ]) {
    if (SAVED[k] === undefined) delete process.env[k];
    else process.env[k] = SAVED[k];
  }
  await issuer.close();
});

test("single sign-on: the provider's login and consent, then a session for a new user with the default role", async () => {
  const auth = getAuth(db);
  const start = await auth.handler(req('/sign-in/social', { body: { provider: 'oidc', callbackURL: '/' } }));
  assert.equal(start.status, 200, await start.clone().text());
  const appCookies = cookiesOf(start);
  const url = ((await start.json()) as { url: string }).url;
  assert.ok(url.startsWith(`${issuer.url}/`), url);
  // Follow the provider's redirects; fill its (development) login and consent forms as a person would.
  const callback = await walkProvider(url, BASE, 'grace');
  const done = await auth.handler(
    new Request(callback, {
      redirect: 'manual',
      headers: { cookie: appCookies, [CLIENT_ADDRESS_HEADER]: '203.0.113.9' },
    }),
  );
  assert.equal(done.status, 302, await done.clone().text());
  const p = await resolvePrincipal(db, withCookie(cookiesOf(done)));
  assert.deepEqual(p && { email: p.email, role: p.role }, { email: 'grace@corp.example', role: 'researcher' });
  const acc = await db.prisma.account.findFirst({ where: { providerId: 'oidc' } });
  assert.equal(acc?.accountId, 'grace');
});
