import { getDb } from '@/server/db/shared.ts';
import { getAuth } from '@/server/auth/auth.ts';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Better Auth's endpoints (sign-in, sign-out, session, OIDC callback, one-time links) under /api/auth. */
async function handler(req: Request) {
  return getAuth(await getDb()).handler(req);
}

export { handler as GET, handler as POST };
