/**
 * Who is asking: `Authorization: Bearer <token>` (an API token) or the session cookie (Better Auth). Anything else —
 * no credentials, a bad token, an expired session — is no one (null): only share and public procedures answer it.
 */
import type { Database } from '../db/client.ts';
import type { Principal, Role } from '../trpc/init.ts';
import { getAuth } from './auth.ts';
import { principalOfToken } from './tokens.ts';

export async function resolvePrincipal(db: Database, headers: Headers): Promise<Principal | null> {
  const authz = headers.get('authorization');
  if (authz) {
    const m = /^Bearer\s+(\S+)$/i.exec(authz.trim());
    return m ? principalOfToken(db, m[1]!) : null;
  }
  if (!headers.get('cookie')) return null;
  const s = await getAuth(db).api.getSession({ headers }).catch(() => null);
  if (!s) return null;
  return { userId: s.user.id, email: s.user.email, role: ((s.user as { role?: string }).role ?? 'viewer') as Role, via: 'session' };
}

/** The client's address: the proxy's X-Forwarded-For (first hop) or X-Real-IP. */
export function clientIp(headers: Headers): string | null {
  return headers.get('x-forwarded-for')?.split(',')[0]?.trim() || headers.get('x-real-ip') || null;
}
