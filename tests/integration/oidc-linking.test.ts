// OIDC links only what it should, against a real OpenID Provider on a local port: the
// reviewer's attack — an IdP user who claims the admin's verified email — gets no session; linking by email happens
// only with TOOLSMITH_OIDC_LINK_BY_EMAIL and never onto an admin or a disabled account; TOOLSMITH_OIDC_ALLOWED_DOMAINS
// refuses other domains (exactly, not by suffix); a disabled user's linked identity is refused with the reason.
import { after, afterEach, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshDatabase } from '../helpers/db.ts';
import { CLIENT_ADDRESS_HEADER } from '../../server/http/client-address.ts';
import { startIssuer, walkProvider, type TestIssuer } from '../helpers/oidc-flow.ts';
import type { Database } from '../../server/db/client.ts';
import { getAuth } from '../../server/auth/auth.ts';
import { resolvePrincipal } from '../../server/auth/principal.ts';
import { createUser, disableUser, enableUser } from '../../server/auth/users.ts';

const BASE = 'http://localhost:3000';
const VARS = [
  'TOOLSMITH_OIDC_ISSUER',
  'TOOLSMITH_OIDC_CLIENT_ID',
  'TOOLSMITH_OIDC_CLIENT_SECRET',
  'TOOLSMITH_OIDC_DEFAULT_ROLE',
  'TOOLSMITH_OIDC_LINK_BY_EMAIL',
  'TOOLSMITH_OIDC_ALLOWED_DOMAINS',
];
const SAVED = Object.fromEntries(VARS.map((k) => [k, process.env[k]]));
let issuer: TestIssuer;
let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;

// A login with an @ claims exactly that email (verified); any other login is <login>@corp.example.
before(async () => {
  issuer = await startIssuer(BASE, (login) => (login.includes('@') ? login : `${login}@corp.example`));
});
after(async () => {
  for (const k of VARS) {
    if (SAVED[k] === undefined) delete process.env[k];
    else process.env[k] = SAVED[k];
  }
  await issuer.close();
});
beforeEach(async () => {
  for (const k of ['TOOLSMITH_OIDC_LINK_BY_EMAIL', 'TOOLSMITH_OIDC_ALLOWED_DOMAINS']) delete process.env[k];
  Object.assign(process.env, {
    TOOLSMITH_OIDC_ISSUER: issuer.url,
    TOOLSMITH_OIDC_CLIENT_ID: 'toolsmith',
    TOOLSMITH_OIDC_CLIENT_SECRET: 'oidc-test-secret',
    TOOLSMITH_OIDC_DEFAULT_ROLE: 'researcher',
  });
  fresh = await freshDatabase(); // the auth instance is built on first use, with the variables the test set by then
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

/**
 * The whole single sign-on as the sign-in page starts it (errors come back to /sign-in): where the app's callback
 * sends the browser, and whom the cookie it sets (if any) signs in.
 */
let nextAddress = 1;
async function ssoAs(login: string) {
  const auth = getAuth(db);
  // Each walk from its own client address: the per-address sign-in limit is not what these tests are about.
  const address = `198.51.100.${nextAddress++ % 250}`;
  const from = { [CLIENT_ADDRESS_HEADER]: address };
  const start = await auth.handler(
    new Request(`${BASE}/api/auth/sign-in/social`, {
      method: 'POST',
      headers: { origin: BASE, 'content-type': 'application/json', ...from },
      body: JSON.stringify({ provider: 'oidc', callbackURL: '/', errorCallbackURL: '/sign-in' }),
    }),
  );
  assert.equal(start.status, 200, await start.clone().text());
  const callback = await walkProvider(((await start.json()) as { url: string }).url, BASE, login);
  const done = await auth.handler(
    new Request(callback, { redirect: 'manual', headers: { cookie: cookiesOf(start), ...from } }),
  );
  assert.equal(done.status, 302, await done.clone().text());
  const location = done.headers.get('location') ?? '';
  const cookie = cookiesOf(done);
  const who = cookie.includes('session_token=') ? await resolvePrincipal(db, new Headers({ cookie })) : null;
  const back = new URL(location, BASE);
  return {
    location: back.toString(),
    who,
    error: back.pathname === '/sign-in' ? back.searchParams.get('error') : null,
  };
}
const oidcAccounts = (userId: string) => db.prisma.account.count({ where: { userId, providerId: 'oidc' } });

test("the reviewer's attack: an IdP user claiming the admin's verified email gets no session and no link (the default)", async () => {
  const admin = await createUser(db, {
    email: 'admin@toolsmith.local',
    role: 'admin',
    password: 'the admin passphrase',
  });
  const r = await ssoAs('admin@toolsmith.local');
  assert.equal(r.who, null, 'no session at all');
  assert.equal(r.error, 'account_not_linked');
  assert.equal(await oidcAccounts(admin.id), 0, 'nothing attached to the admin');
  assert.equal(await db.prisma.session.count(), 0);
  // The same goes for any existing account, not only admins': linking by email is off unless the operator turns it on.
  const bo = await createUser(db, { email: 'bo@corp.example', role: 'viewer' });
  assert.equal((await ssoAs('bo')).error, 'account_not_linked');
  assert.equal(await oidcAccounts(bo.id), 0);
});

test("TOOLSMITH_OIDC_LINK_BY_EMAIL=1: a non-admin account is linked and signed in; an admin's or a disabled one never", async () => {
  process.env.TOOLSMITH_OIDC_LINK_BY_EMAIL = '1';
  const admin = await createUser(db, { email: 'admin@toolsmith.local', role: 'admin' });
  const bo = await createUser(db, { email: 'bo@corp.example', role: 'viewer' });
  const cy = await createUser(db, { email: 'cy@corp.example', role: 'researcher' });
  await disableUser(db, 'cy@corp.example');

  const attack = await ssoAs('admin@toolsmith.local');
  assert.equal(attack.who, null);
  assert.equal(attack.error, 'oidc_link_refused');
  assert.equal(await oidcAccounts(admin.id), 0);

  const linked = await ssoAs('bo');
  assert.deepEqual(
    linked.who && { userId: linked.who.userId, role: linked.who.role },
    { userId: bo.id, role: 'viewer' },
    'the existing account, with its own role',
  );
  assert.equal(await oidcAccounts(bo.id), 1);

  const disabled = await ssoAs('cy');
  assert.equal(disabled.who, null);
  assert.equal(disabled.error, 'oidc_link_refused');
  assert.equal(await oidcAccounts(cy.id), 0);
});

test('TOOLSMITH_OIDC_ALLOWED_DOMAINS: other domains are refused (exact match, no suffix), before any user is created', async () => {
  process.env.TOOLSMITH_OIDC_ALLOWED_DOMAINS = 'corp.example, lab.example';
  for (const login of ['mallory@evil.example', 'mallory@evilcorp.example', 'mallory@x.corp.example']) {
    const r = await ssoAs(login);
    assert.equal(r.who, null, login);
    assert.equal(r.error, 'email_domain_not_allowed', login);
  }
  assert.equal(await db.prisma.user.count(), 0, 'no user rows for refused identities');
  const ok = await ssoAs('grace');
  assert.deepEqual(ok.who && { email: ok.who.email, role: ok.who.role }, {
    email: 'grace@corp.example',
    role: 'researcher',
  });
  assert.equal(ok.location, `${BASE}/`);
});

test("a disabled user's linked identity is refused with the reason; enabled again, it signs in", async () => {
  const first = await ssoAs('grace');
  assert.equal(first.who?.email, 'grace@corp.example');
  await disableUser(db, 'grace@corp.example');
  const again = await ssoAs('grace');
  assert.equal(again.who, null);
  assert.equal(again.error, 'account_disabled');
  assert.equal(await db.prisma.session.count(), 0);
  await enableUser(db, 'grace@corp.example');
  assert.equal((await ssoAs('grace')).who?.email, 'grace@corp.example');
});
