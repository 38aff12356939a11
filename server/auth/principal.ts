/**
 * Who is asking: `Authorization: Bearer <token>` (an API token) or the session cookie (Better Auth). Anything else —
 * no credentials, a bad token, an expired session, a disabled or removed user — is no one (null): only share and
 * public procedures answer it.
 */
import type { Database } from '../db/client.ts';
import { type Principal, type Role, tokenRole } from '../../contracts/access.ts';
import { getAuth } from './auth.ts';
import { principalOfToken, tokenLive } from './tokens.ts';
import { userActive } from './access-policy.ts';
import { requestAddress } from '../http/client-address.ts';
import { findSessionById, findUserAccess } from '../store/users.ts';
import { findApiToken } from '../store/api-tokens.ts';

export async function resolvePrincipal(db: Database, headers: Headers): Promise<Principal | null> {
  const authz = headers.get('authorization');
  if (authz) {
    const m = /^Bearer\s+(\S+)$/i.exec(authz.trim());
    return m ? principalOfToken(db, m[1]!) : null;
  }
  if (!headers.get('cookie')) return null;
  const s = await getAuth(db)
    .api.getSession({ headers })
    .catch(() => null);
  if (!s) return null;
  // The role and the disabled mark are read from the user's row on every request (not from anything cached with the
  // session), so a demotion or a disable counts at once even if a session were left behind.
  const u = await findUserAccess(db, s.user.id);
  if (!u || !userActive(u)) return null;
  return { userId: u.id, email: u.email, role: u.role as Role, via: 'session', sessionId: s.session.id };
}

/**
 * Whether a principal resolved earlier still stands (a long-lived stream asks now and then): its session or token
 * still live, its user neither disabled nor removed. A principal with neither id is an in-process caller's (tests,
 * the CLI): only its user's row, if any, is checked.
 */
export async function principalStillValid(db: Database, p: Principal, now = new Date()): Promise<boolean> {
  if (p.sessionId) {
    const s = await findSessionById(db, p.sessionId);
    if (!s || s.userId !== p.userId || s.expiresAt <= now) return false;
  }
  let scope: string | null = null;
  if (p.tokenId) {
    const t = await findApiToken(db, p.tokenId);
    if (!t || t.userId !== p.userId || !tokenLive(t, now)) return false;
    scope = t.scope;
  }
  const u = await findUserAccess(db, p.userId);
  if (!u) return !p.sessionId && !p.tokenId;
  return userActive(u) && (scope === null ? u.role : tokenRole(u.role as Role, scope)) === p.role;
}

/**
 * The client's address as the web server recorded it (the socket's peer, or what a trusted proxy forwarded:
 * server/http/client-address.ts), never X-Forwarded-For as the client sent it.
 */
export function clientIp(headers: Headers): string | null {
  return requestAddress(headers);
}
