/**
 * Who may get a session (server/auth/auth.ts wires these into Better Auth): a disabled or removed user never does,
 * whatever the way in (password, one-time link, OIDC); and what an OIDC identity may attach to.
 * docs/deploying-and-security.md "Revoking access" and docs/deploying-and-security.md "Single sign-on".
 */
import { APIError } from 'better-auth/api';
import type { Database } from '../db/client.ts';
import { findUserAccess } from '../store/users.ts';
import { SIGN_IN_ERRORS, type SignInErrorCode } from '../../contracts/sign-in-errors.ts';

/** Neither disabled nor removed: the user may act (a session, a token, a live stream). */
export const userActive = (u: { disabledAt: Date | null; removedAt: Date | null }) => !u.disabledAt && !u.removedAt;

export interface OidcPolicy {
  linkByEmail: boolean;
  allowedDomains: string[];
}

/** The part after the last @, lower-cased ('' when there is none). */
export const emailDomain = (email: string): string => {
  const i = email.lastIndexOf('@');
  return i < 0
    ? ''
    : email
        .slice(i + 1)
        .trim()
        .toLowerCase();
};

/** An allow-list entry admits its domain exactly (corp.example admits a@corp.example, not a@evilcorp.example or a@x.corp.example). */
export const domainAllowed = (email: string, allowed: readonly string[]): boolean =>
  allowed.length === 0 || allowed.includes(emailDomain(email));

export type OidcAction = 'create-user' | 'link-account' | 'sign-in';
interface Target {
  role: string;
  disabled: boolean;
}

/**
 * The decision for one OIDC identity (pure): null to allow, or the refusal's code. `target` is the existing account
 * the identity would attach to or sign in as (absent for a new user).
 */
export function decideOidc(
  policy: OidcPolicy,
  action: OidcAction,
  email: string,
  target: Target | null,
): SignInErrorCode | null {
  if (!domainAllowed(email, policy.allowedDomains)) return 'email_domain_not_allowed';
  if (action === 'link-account') {
    // Linking by email hands the IdP's user this account: only when the operator said so, and never an admin's.
    if (!policy.linkByEmail) return 'account_not_linked';
    if (!target || target.role === 'admin' || target.disabled) return 'oidc_link_refused';
  }
  if (action === 'sign-in' && target?.disabled) return 'account_disabled';
  return null;
}

/** Better Auth's `user.validateUserInfo` for the OIDC provider `providerId` (other methods pass through). */
export function oidcGate(db: Database, providerId: string, policy: () => OidcPolicy | null) {
  return async (data: {
    user: { id?: unknown; email?: unknown };
    source: { action: OidcAction; method: string; oauth?: { providerId: string } };
  }) => {
    if (data.source.method !== 'oauth' || data.source.oauth?.providerId !== providerId) return;
    const p = policy();
    if (!p) return { error: 'oidc_link_refused', errorDescription: 'single sign-on is not configured' };
    const id = typeof data.user.id === 'string' ? data.user.id : null;
    const row = id && data.source.action !== 'create-user' ? await findUserAccess(db, id) : null;
    const target = row ? { role: row.role, disabled: !userActive(row) } : null;
    const code = decideOidc(p, data.source.action, String(data.user.email ?? ''), target);
    return code ? { error: code, errorDescription: SIGN_IN_ERRORS[code] } : undefined;
  };
}

/**
 * Better Auth's `databaseHooks.session.create.before`: the last gate every sign-in passes. A browser navigation (the
 * one-time link, the OIDC callback: GET) goes back to the sign-in page with the reason; a form post gets a 403.
 */
export function refuseDisabledSessions(db: Database, signInPage: string) {
  return async (
    session: { userId: string },
    ctx: { request?: Request; redirect?: (url: string) => unknown } | null,
  ) => {
    const u = await findUserAccess(db, session.userId);
    if (u && userActive(u)) return;
    if (ctx?.request?.method === 'GET' && ctx.redirect) throw ctx.redirect(`${signInPage}?error=account_disabled`);
    throw new APIError('FORBIDDEN', { code: 'ACCOUNT_DISABLED', message: SIGN_IN_ERRORS.account_disabled });
  };
}
