import { initTRPC, TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import type { Database } from '../db/client.ts';
import { UserError, zodIssuesText } from '../../contracts/errors.ts';

export interface Context { db: Database }

const t = initTRPC.context<Context>().create({
  sse: {
    // Pings keep proxies from closing idle streams; the client reconnects (with lastEventId) after silence.
    ping: { enabled: true, intervalMs: 5000 },
    client: { reconnectAfterInactivityMs: 12000 },
  },
  errorFormatter({ shape, error }) {
    const zod = error.cause instanceof ZodError ? error.cause : null;
    return {
      ...shape,
      message: zod ? zodIssuesText(zod.issues) : shape.message,
      data: { ...shape.data, fields: zod ? zod.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) : undefined },
    };
  },
});

/** Turns a UserError thrown by the store into a 400 with its message; anything else stays a 500. */
const userErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof UserError) {
    throw new TRPCError({ code: 'BAD_REQUEST', message: result.error.cause.message, cause: result.error.cause });
  }
  return result;
});

export const router = t.router;
export const publicProcedure = t.procedure.use(userErrors);
export const createCallerFactory = t.createCallerFactory;
