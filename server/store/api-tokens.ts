/** API tokens (server/auth/tokens.ts is the logic): only hashes are stored. */
import type { Database } from '../db/client.ts';

export const insertApiToken = (
  db: Database,
  t: { id: string; userId: string; name: string; tokenHash: string; scope: string; expiresAt: Date | null },
) => db.prisma.apiToken.create({ data: t });
export const findApiToken = (db: Database, id: string) => db.prisma.apiToken.findUnique({ where: { id } });
export const findApiTokenByHash = (db: Database, tokenHash: string) =>
  db.prisma.apiToken.findUnique({ where: { tokenHash }, include: { user: true } });
export const setApiTokenRevoked = (db: Database, id: string, at: Date) =>
  db.prisma.apiToken.update({ where: { id }, data: { revokedAt: at } });
export const touchApiToken = (db: Database, id: string, at: Date) =>
  db.prisma.apiToken.update({ where: { id }, data: { lastUsedAt: at } });
export const listApiTokenRows = (db: Database) =>
  db.prisma.apiToken.findMany({ orderBy: { createdAt: 'asc' }, include: { user: true } });
