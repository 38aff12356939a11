/** Users and their credential accounts (Better Auth's tables; server/auth/users.ts is the logic). */
import type { Database } from '../db/client.ts';

const withPassword = { accounts: { where: { providerId: 'credential' } } } as const;

export const findUserByEmail = (db: Database, email: string) => db.prisma.user.findUnique({ where: { email }, include: withPassword });
export const listUserRows = (db: Database) => db.prisma.user.findMany({ orderBy: { createdAt: 'asc' }, include: withPassword });
export const countUserRows = (db: Database): Promise<number> => db.prisma.user.count();

export async function insertUser(db: Database, u: { id: string; email: string; name: string; role: string }) {
  await db.prisma.user.create({ data: { ...u, emailVerified: true } });
}

export const updateUserRole = (db: Database, id: string, role: string) => db.prisma.user.update({ where: { id }, data: { role, updatedAt: new Date() } });

/** Set (or first create) the user's password account. */
export async function upsertPassword(db: Database, userId: string, newAccountId: string, hash: string) {
  const acc = await db.prisma.account.findFirst({ where: { userId, providerId: 'credential' } });
  if (acc) await db.prisma.account.update({ where: { id: acc.id }, data: { password: hash, updatedAt: new Date() } });
  else await db.prisma.account.create({ data: { id: newAccountId, accountId: userId, providerId: 'credential', userId, password: hash } });
}
