import { getDb } from '@/server/db/shared.ts';
import { getAuth } from '@/server/auth/auth.ts';
import { config } from '@/server/config.ts';
import { processAuthEdge, withAuthEdge } from '@/server/http/auth-edge.ts';
import { findUserByEmail } from '@/server/store/users.ts';
import { storedAttempts } from '@/server/store/sign-in-throttle.ts';
import { throttlePolicy } from '@/server/http/sign-in-throttle.ts';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Better Auth's endpoints (sign-in, sign-out, session, OIDC callback, one-time links) under /api/auth. */
async function handler(req: Request) {
  return getAuth(await getDb()).handler(req);
}

// The body cap, the sign-in throttle (in the database) and hash limits on password sign-in, and the link-request limits run first
// (server/http/auth-edge.ts); Better Auth's own per-address limit runs inside its handler.
const guarded = withAuthEdge(handler, processAuthEdge(), {
  maxBodyBytes: () => config().maxBodyBytes,
  knownEmail: async (email) => (await findUserByEmail(await getDb(), email)) !== null,
  attempts: storedAttempts(getDb, { policy: throttlePolicy(config().signInDelayS) }),
});

export { guarded as GET, guarded as POST };
