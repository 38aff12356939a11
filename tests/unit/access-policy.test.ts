// What an OIDC identity may become (server/auth/access-policy.ts decideOidc, pure): the allow-list matches whole
// domains, linking needs the operator's flag and never reaches an admin or a disabled account, a disabled user's
// returning sign-in is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideOidc, domainAllowed, emailDomain } from '../../server/auth/access-policy.ts';
import { signInErrorText } from '../../contracts/sign-in-errors.ts';

const off = { linkByEmail: false, allowedDomains: [] };
const on = { linkByEmail: true, allowedDomains: [] };
const viewer = { role: 'viewer', disabled: false };
const admin = { role: 'admin', disabled: false };

test('domains: exact, case-insensitive, the part after the last @', () => {
  assert.equal(emailDomain('A@Corp.Example'), 'corp.example');
  assert.equal(emailDomain('"a@b"@corp.example'), 'corp.example');
  assert.equal(domainAllowed('a@corp.example', []), true, 'no list: any domain');
  assert.equal(domainAllowed('a@CORP.example', ['corp.example']), true);
  for (const e of ['a@evilcorp.example', 'a@x.corp.example', 'a@corp.example.evil', 'corp.example', ''])
    assert.equal(domainAllowed(e, ['corp.example']), false, e);
});

test('linking: off by default; on, never onto an admin or a disabled account', () => {
  assert.equal(decideOidc(off, 'link-account', 'admin@toolsmith.local', admin), 'account_not_linked');
  assert.equal(decideOidc(off, 'link-account', 'bo@corp.example', viewer), 'account_not_linked');
  assert.equal(decideOidc(on, 'link-account', 'admin@toolsmith.local', admin), 'oidc_link_refused');
  assert.equal(
    decideOidc(on, 'link-account', 'bo@corp.example', { role: 'researcher', disabled: true }),
    'oidc_link_refused',
  );
  assert.equal(
    decideOidc(on, 'link-account', 'bo@corp.example', null),
    'oidc_link_refused',
    'no account found: nothing to link',
  );
  assert.equal(decideOidc(on, 'link-account', 'bo@corp.example', viewer), null);
});

test('new users and returning sign-ins: the allow-list for both, the disabled mark for returning ones', () => {
  const listed = { linkByEmail: false, allowedDomains: ['corp.example'] };
  assert.equal(decideOidc(listed, 'create-user', 'm@evil.example', null), 'email_domain_not_allowed');
  assert.equal(decideOidc(listed, 'create-user', 'g@corp.example', null), null);
  assert.equal(
    decideOidc(listed, 'sign-in', 'g@moved.example', viewer),
    'email_domain_not_allowed',
    'an identity whose email left the list',
  );
  assert.equal(decideOidc(off, 'sign-in', 'g@corp.example', { role: 'viewer', disabled: true }), 'account_disabled');
  assert.equal(
    decideOidc(off, 'sign-in', 'admin@toolsmith.local', admin),
    null,
    "an admin's own linked identity signs in",
  );
});

test("the sign-in page's sentences: ours by code, Better Auth's used-up link, anything else named but cut short", () => {
  assert.match(signInErrorText('account_disabled')!, /This account is disabled/);
  assert.match(signInErrorText('account_not_linked')!, /not linked to single sign-on/);
  assert.match(signInErrorText('INVALID_TOKEN')!, /used up or expired/);
  assert.equal(signInErrorText('toString'), 'Sign-in failed (toString).', 'no prototype lookups');
  assert.equal(signInErrorText(`x${'y'.repeat(500)}`)!.length < 100, true);
  assert.equal(signInErrorText(null), null);
});
