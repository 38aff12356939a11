/** Users and their credential accounts (Better Auth's tables; server/auth/users.ts is the logic). */
import type { Database, Tx } from '../db/client.ts';
import { inTransaction } from '../db/batch.ts';

const withPassword = { accounts: { where: { providerId: 'credential' } } } as const;

export const findUserByEmail = (db: Database, email: string) =>
  db.prisma.user.findUnique({ where: { email }, include: withPassword });
export const listUserRows = (db: Database) =>
  db.prisma.user.findMany({ orderBy: { createdAt: 'asc' }, include: withPassword });
export const countUserRows = (db: Database): Promise<number> => db.prisma.user.count();

export async function insertUser(db: Database, u: { id: string; email: string; name: string; role: string }) {
  await db.prisma.user.create({ data: { ...u, emailVerified: true } });
}

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

/** The writes that can take an admin away, each on the transaction that checked there is another (see below). */
export interface AdminWrites {
  setRole(id: string, role: string): Promise<void>;
  setDisabled(id: string, at: Date): Promise<void>;
  /** Every session and live API token of the user gone; how many of each. */
  endAccess(id: string, now: Date): Promise<{ sessions: number; tokens: number }>;
  /**
   * Removal keeps the row (its id is what runs, recipes, share links and the audit log name as their author) but
   * nothing to sign in with: sessions, password and OIDC links deleted, tokens revoked.
   */
  markRemoved(id: string, now: Date): Promise<void>;
}

const adminWrites = (tx: Tx): AdminWrites => ({
  setRole: async (id, role) => void (await tx.user.update({ where: { id }, data: { role, updatedAt: new Date() } })),
  setDisabled: async (id, at) =>
    void (await tx.user.update({ where: { id }, data: { disabledAt: at, updatedAt: new Date() } })),
  endAccess: async (userId, now) => ({
    sessions: (await tx.session.deleteMany({ where: { userId } })).count,
    tokens: (await tx.apiToken.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: now } })).count,
  }),
  markRemoved: async (userId, now) => {
    await tx.session.deleteMany({ where: { userId } });
    await tx.account.deleteMany({ where: { userId } });
    await tx.apiToken.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: now } });
    await tx.user.update({ where: { id: userId }, data: { disabledAt: now, removedAt: now, updatedAt: now } });
  },
});

// PostgreSQL: FOR UPDATE locks the rows (in id order, so two changes never lock them crosswise); a change that comes
// second waits here, then skips the row the first one demoted (READ COMMITTED re-checks the WHERE of a row it waited
// for). SQLite has no row locks and needs none: inTransaction holds the write lock from BEGIN.
const ACTIVE_ADMINS = `SELECT "id" FROM "User" WHERE "role" = 'admin' AND "disabledAt" IS NULL AND "removedAt" IS NULL
  ORDER BY "id"`;

/**
 * One transaction: the active admins' ids read first, then `change` decides with them and writes through `w`. Two
 * changes at once queue at that read, so the second sees what the first committed: two demotions of the last two
 * admins cannot both see the other one still there.
 */
export function withActiveAdmins<T>(db: Database, change: (adminIds: string[], w: AdminWrites) => Promise<T>) {
  return inTransaction(db, async (tx) => {
    const sql = db.dialect === 'postgresql' ? `${ACTIVE_ADMINS} FOR UPDATE` : ACTIVE_ADMINS;
    const rows = await db.query<{ id: string }>(sql, [], tx);
    return change(
      rows.map((r) => r.id),
      adminWrites(tx),
    );
  });
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
