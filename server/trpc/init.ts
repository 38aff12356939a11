import { initTRPC, TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import type { Database } from '../db/client.ts';
import { UserError, zodIssuesText } from '../../contracts/errors.ts';
import { roleRank, SCOPE_ROLE, scopeOfRole, type Principal, type Role } from '../../contracts/access.ts';
import { audit, auditTarget } from '../auth/audit.ts';
import { refusals } from '../http/refusals.ts';

export interface Context {
  db: Database;
  /** null: no valid session or token (only `public` and `share` procedures answer). */
  principal: Principal | null;
  /** The client's address and agent, for the audit log and rate limits. */
  ip?: string | null;
  userAgent?: string | null;
}

/**
 * Every procedure declares who may call it (tests/integration/access.test.ts enumerates them): a role, `share`
 * (no session: authorised by the share token in its own input, per call, batches included) or `public`.
 */
export type Access = Role | 'share' | 'public';
export interface Meta {
  access: Access;
}

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
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
        data: {
          ...shape.data,
          fields: zod ? zod.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) : undefined,
        },
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

/**
 * Every mutation, allowed or not, goes into the audit log (who, what, when, from where), except the refused calls of
 * no one: those are counted (server/http/refusals.ts: totals and a summary line a minute), so anonymous traffic
 * cannot grow the table.
 */
const auditMutations = t.middleware(async ({ ctx, type, path, getRawInput, next }) => {
  const result = await next();
  if (type === 'mutation' && !ctx.principal && !result.ok) {
    refusals.count(`trpc: ${result.error.code}`);
  } else if (type === 'mutation') {
    const input = await getRawInput().catch(() => undefined);
    await audit(ctx.db, {
      userId: ctx.principal?.userId,
      email: ctx.principal?.email,
      via: ctx.principal?.via,
      action: path,
      target: auditTarget(input),
      ok: result.ok,
      detail: result.ok ? null : result.error.message,
      ip: ctx.ip,
      userAgent: ctx.userAgent,
    }).catch(() => {}); // the log never decides whether a mutation happens
  }
  return result;
});

/** UNAUTHORIZED (401) without a principal, FORBIDDEN (403) below the role. */
function requireRole(role: Role) {
  return t.middleware(({ ctx, next }) => {
    if (!ctx.principal)
      throw new TRPCError({ code: 'UNAUTHORIZED', message: 'sign in, or send Authorization: Bearer <token>' });
    if (roleRank(ctx.principal.role) < roleRank(role))
      throw new TRPCError({
        code: 'FORBIDDEN',
        // The scope is named when it is what falls short (the user's own role would allow the call).
        message:
          ctx.principal.scope && roleRank(SCOPE_ROLE[ctx.principal.scope]) < roleRank(role)
            ? `this needs the ${role} role; this token's scope is ${ctx.principal.scope} (it acts as ${ctx.principal.role}): create one with --scope ${scopeOfRole(role)}`
            : `this needs the ${role} role; you are ${ctx.principal.role}`,
      });
    return next({ ctx: { ...ctx, principal: ctx.principal } });
  });
}

export const router = t.router;
/** No credentials at all: only the health check. */
const base = t.procedure.use(auditMutations).use(userErrors);
export const publicProcedure = base.meta({ access: 'public' });
/** Share-link views: no session; each authorises itself by the token it is given (server/share/links.ts). */
export const shareProcedure = base.meta({ access: 'share' });
export const viewerProcedure = base.meta({ access: 'viewer' }).use(requireRole('viewer'));
export const researcherProcedure = base.meta({ access: 'researcher' }).use(requireRole('researcher'));
export const adminProcedure = base.meta({ access: 'admin' }).use(requireRole('admin'));
export const createCallerFactory = t.createCallerFactory;
