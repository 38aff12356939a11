import { z } from 'zod';
import { adminProcedure, publicProcedure, router, viewerProcedure } from '../init.ts';
import {
  changeOwnPassword,
  createUser,
  disableUser,
  enableUser,
  listUsers,
  mustGetActiveUser,
  removeUser,
  setRole,
} from '../../auth/users.ts';
import { createToken, listTokens, revokeToken } from '../../auth/tokens.ts';
import { TOKEN_SCOPES } from '../../../contracts/access.ts';
import { listAudit } from '../../auth/audit.ts';
import { signInLink } from '../../auth/auth.ts';
import { config } from '../../config.ts';

const email = z.string().min(3).max(320);
const role = z.enum(['viewer', 'researcher', 'admin']);

/** Users, API tokens and the audit log: admins only (the System page). */
export const adminRouter = router({
  users: adminProcedure.query(({ ctx }) => listUsers(ctx.db)),
  addUser: adminProcedure.input(z.object({ email, role })).mutation(({ ctx, input }) => createUser(ctx.db, input)),
  setRole: adminProcedure
    .input(z.object({ email, role }))
    .mutation(({ ctx, input }) => setRole(ctx.db, input.email, input.role)),
  /** Disable / remove end the user's sessions and tokens at once; an admin cannot do either to themselves. */
  disableUser: adminProcedure
    .input(z.object({ email }))
    .mutation(({ ctx, input }) => disableUser(ctx.db, input.email, ctx.principal.userId)),
  enableUser: adminProcedure.input(z.object({ email })).mutation(({ ctx, input }) => enableUser(ctx.db, input.email)),
  removeUser: adminProcedure
    .input(z.object({ email }))
    .mutation(({ ctx, input }) => removeUser(ctx.db, input.email, ctx.principal.userId)),
  /** A one-time sign-in URL for the user, to hand over in person (nothing is mailed). */
  signInLink: adminProcedure.input(z.object({ email })).mutation(async ({ ctx, input }) => ({
    url: await signInLink(ctx.db, (await mustGetActiveUser(ctx.db, input.email)).email),
  })),
  tokens: adminProcedure.query(({ ctx }) => listTokens(ctx.db)),
  createToken: adminProcedure
    .input(
      z.object({
        email,
        name: z.string().min(1).max(100).optional(),
        expiresDays: z.number().int().min(1).max(3650).optional(),
        scope: z.enum(TOKEN_SCOPES).optional(),
      }),
    )
    .mutation(({ ctx, input }) => createToken(ctx.db, input)),
  revokeToken: adminProcedure
    .input(z.object({ id: z.string().min(1).max(100) }))
    .mutation(({ ctx, input }) => revokeToken(ctx.db, input.id)),
  audit: adminProcedure
    .input(
      z
        .object({ limit: z.number().int().min(1).max(500).default(100), before: z.number().int().min(1).optional() })
        .default({ limit: 100 }),
    )
    .query(({ ctx, input }) => listAudit(ctx.db, input)),
});

/** Who the caller is (null when signed out) and how sign-in works here: the sign-in page and the header read it. */
export const authRouter = router({
  me: publicProcedure.query(({ ctx }) => ({
    user: ctx.principal ? { email: ctx.principal.email, role: ctx.principal.role } : null,
    oidc: config().oidc ? { name: config().oidc!.name } : null,
  })),
  /** Anyone signed in changes their own password (the current one required); their other sessions end. */
  changePassword: viewerProcedure
    .input(z.object({ currentPassword: z.string().min(1).max(256), newPassword: z.string().max(256) }))
    .mutation(({ ctx, input }) => changeOwnPassword(ctx.db, ctx.principal, input.currentPassword, input.newPassword)),
});
