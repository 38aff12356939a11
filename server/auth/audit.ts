/** The audit log: one row per API mutation (who, what, when, from where, whether it succeeded). */
import type { Database } from '../db/client.ts';
import { insertAudit, listAuditRows } from '../store/audit.ts';

export interface AuditEntry {
  userId?: string | null;
  email?: string | null;
  via?: string | null;
  action: string;
  target?: string | null;
  ok: boolean;
  detail?: string | null;
  ip?: string | null;
  userAgent?: string | null;
}

export async function audit(db: Database, e: AuditEntry): Promise<void> {
  await insertAudit(db, {
    userId: e.userId ?? null,
    email: e.email ?? null,
    via: e.via ?? null,
    action: e.action.slice(0, 200),
    target: e.target?.slice(0, 500) ?? null,
    ok: e.ok,
    detail: e.detail?.slice(0, 2000) ?? null,
    ip: e.ip?.slice(0, 100) ?? null,
    userAgent: e.userAgent?.slice(0, 300) ?? null,
  });
}

export async function listAudit(db: Database, opts: { limit?: number; before?: number } = {}) {
  return listAuditRows(db, { limit: Math.min(opts.limit ?? 100, 500), before: opts.before });
}

/** What a mutation acted on, from its input: a run, recipe, link or user named in it. */
export function auditTarget(input: unknown): string | null {
  if (!input || typeof input !== 'object') return null;
  const o = input as Record<string, unknown>;
  for (const k of ['runId', 'id', 'name', 'email', 'trajectoryId']) if (typeof o[k] === 'string') return `${k}=${o[k]}`;
  if (o.spec && typeof o.spec === 'object' && typeof (o.spec as { name?: unknown }).name === 'string')
    return `recipe=${(o.spec as { name: string }).name}`;
  return null;
}
