import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { appRouter } from '@/server/trpc/root.ts';
import { getDb } from '@/server/db/shared.ts';
import { clientIp, resolvePrincipal } from '@/server/auth/principal.ts';
import { config } from '@/server/config.ts';
import { withLimits } from '@/server/http/limits.ts';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

function handler(req: Request) {
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: async () => {
      const db = await getDb();
      return {
        db,
        principal: await resolvePrincipal(db, req.headers),
        ip: clientIp(req.headers),
        userAgent: req.headers.get('user-agent'),
      };
    },
    onError({ error, path }) {
      if (error.code === 'INTERNAL_SERVER_ERROR') console.error(`tRPC ${path ?? '?'}: ${error.message}`);
    },
  });
}

// Body-size, batch-size and JSON-only limits run before tRPC parses anything (server/http/limits.ts).
const limited = withLimits(handler, () => config());

export { limited as GET, limited as POST };
