/** Users and their credential accounts (Better Auth's tables; server/auth/users.ts is the logic). */
import type { Database } from '../db/client.ts';

const withPassword = { accounts: { where: { providerId: 'credential' } } } as const;

export const findUserByEmail = (db: Database, email: string) =>
  db.prisma.user.findUnique({ where: { email }, include: withPassword });
export const listUserRows = (db: Database) =>
  db.prisma.user.findMany({ orderBy: { createdAt: 'asc' }, include: withPassword });
export const countUserRows = (db: Database): Promise<number> => db.prisma.user.count();

export async function insertUser(db: Database, u: { id: string; email: string; name: string; role: string }) {
  await db.prisma.user.create({ data: { ...u, emailVerified: true } });
}

export const updateUserRole = (db: Database, id: string, role: string) =>
  db.prisma.user.update({ where: { id }, data: { role, updatedAt: new Date() } });

/** Set (or first create) the user's password account. */
export async function upsertPassword(db: Database, userId: string, newAccountId: string, hash: string) {
  const acc = await db.prisma.account.findFirst({ where: { userId, providerId: 'credential' } });
  if (acc) await db.prisma.account.update({ where: { id: acc.id }, data: { password: hash, updatedAt: new Date() } });
  else
    await db.prisma.account.create({
      data: { id: newAccountId, accountId: userId, providerId: 'credential', userId, password: hash },
    });
}

/** What a request's principal is checked against on every request: the current role and whether access was taken away. */
export const findUserAccess = (db: Database, id: string) =>
  db.prisma.user.findUnique({
    where: { id },
    select: { id: true, email: true, role: true, disabledAt: true, removedAt: true },
  });

export const setUserDisabled = (db: Database, id: string, at: Date | null) =>
  db.prisma.user.update({ where: { id }, data: { disabledAt: at, updatedAt: new Date() } });

/** Every session and every live API token of the user, gone at once. Returns how many of each. */
export async function endUserAccess(db: Database, userId: string, now: Date) {
  const [sessions, tokens] = await db.prisma.$transaction([
    db.prisma.session.deleteMany({ where: { userId } }),
    db.prisma.apiToken.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: now } }),
  ]);
  return { sessions: sessions.count, tokens: tokens.count };
}

/** The user's sessions but the one they act from (none kept when they act with an API token). */
export const endOtherSessions = async (db: Database, userId: string, keepSessionId?: string) =>
  (await db.prisma.session.deleteMany({ where: { userId, ...(keepSessionId ? { id: { not: keepSessionId } } : {}) } }))
    .count;

/**
 * Removal keeps the row (its id is what runs, recipes, share links and the audit log name as their author) but
 * nothing to sign in with: sessions, password and OIDC links deleted, tokens revoked.
 */
export async function markUserRemoved(db: Database, userId: string, now: Date) {
  await db.prisma.$transaction([
    db.prisma.session.deleteMany({ where: { userId } }),
    db.prisma.account.deleteMany({ where: { userId } }),
    db.prisma.apiToken.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: now } }),
    db.prisma.user.update({ where: { id: userId }, data: { disabledAt: now, removedAt: now, updatedAt: now } }),
  ]);
}

/** A removed user added again: the same row (and so their old runs) comes back with the new role. */
export const reviveUser = (db: Database, id: string, u: { name: string; role: string }) =>
  db.prisma.user.update({ where: { id }, data: { ...u, disabledAt: null, removedAt: null, updatedAt: new Date() } });

/** The user's password account (null: signs in by link or OIDC only). */
export const findPasswordAccount = (db: Database, userId: string) =>
  db.prisma.account.findFirst({ where: { userId, providerId: 'credential' } });

/** A session row by id (null once signed out, ended by a revocation, or never there). */
export const findSessionById = (db: Database, id: string) =>
  db.prisma.session.findUnique({ where: { id }, select: { userId: true, expiresAt: true } });
