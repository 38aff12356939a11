/** The audit log's rows (server/auth/audit.ts builds them). */
import type { Database } from '../db/client.ts';

export interface AuditRow {
  userId: string | null;
  email: string | null;
  via: string | null;
  action: string;
  target: string | null;
  ok: boolean;
  detail: string | null;
  ip: string | null;
  userAgent: string | null;
}

export async function insertAudit(db: Database, row: AuditRow): Promise<void> {
  await db.prisma.auditLog.create({ data: row });
}

export const listAuditRows = (db: Database, opts: { limit: number; before?: number }) =>
  db.prisma.auditLog.findMany({
    where: opts.before ? { id: { lt: opts.before } } : undefined,
    orderBy: { id: 'desc' },
    take: opts.limit,
  });
