/**
 * ShareLink rows. A row holds the SHA-256 of its token, never the token; `target` is the JSON of what the link names.
 * Token hashing and what a link may see are server/share/links.ts's; its scopes and shapes are contracts/share.ts's.
 */
import type { Database } from '../db/client.ts';
import { newId } from '../ids.ts';

export interface NewShareLink {
  tokenHash: string;
  scope: string;
  target: unknown;
  label: string | null;
  createdAt: Date;
  expiresAt: Date | null;
}

/** Store a new link (`target` as JSON). */
export function insertShareLink(db: Database, l: NewShareLink) {
  return db.prisma.shareLink.create({
    data: {
      id: newId('sl_'),
      tokenHash: l.tokenHash,
      scope: l.scope,
      target: JSON.stringify(l.target),
      label: l.label,
      createdAt: l.createdAt,
      expiresAt: l.expiresAt,
    },
  });
}

/** The link with this token hash (the whole row), or null. */
export function getShareLinkByTokenHash(db: Database, tokenHash: string) {
  return db.prisma.shareLink.findUnique({ where: { tokenHash } });
}

/** A link's id and revocation time by link id, or null when there is no such link. */
export function getShareLinkRevocation(db: Database, linkId: string) {
  return db.prisma.shareLink.findUnique({ where: { id: linkId }, select: { id: true, revokedAt: true } });
}

/** Set a link's revocation time; returns its id and that time. */
export function setShareLinkRevoked(db: Database, linkId: string, revokedAt: Date) {
  return db.prisma.shareLink.update({
    where: { id: linkId },
    data: { revokedAt },
    select: { id: true, revokedAt: true },
  });
}

/**
 * Links newest first, without their token hashes. `targetContains` keeps only rows whose target JSON holds that
 * text (a narrowing; the caller decides from the parsed target).
 */
export function listShareLinkRows(db: Database, opts: { targetContains?: string } = {}) {
  return db.prisma.shareLink.findMany({
    where: opts.targetContains ? { target: { contains: opts.targetContains } } : {},
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: { id: true, scope: true, target: true, label: true, createdAt: true, expiresAt: true, revokedAt: true },
  });
}

/** Who made a link (undefined: no such link). */
export async function getShareLinkCreator(db: Database, id: string): Promise<string | null | undefined> {
  const r = await db.prisma.shareLink.findUnique({ where: { id }, select: { createdBy: true } });
  return r ? r.createdBy : undefined;
}
export async function setShareLinkCreator(db: Database, id: string, userId: string): Promise<void> {
  await db.prisma.shareLink.update({ where: { id }, data: { createdBy: userId } });
}
export async function deleteShareLink(db: Database, id: string): Promise<void> {
  await db.prisma.shareLink.delete({ where: { id } });
}
export async function shareLinkIdsBy(db: Database, userId: string): Promise<Set<string>> {
  return new Set(
    (await db.prisma.shareLink.findMany({ where: { createdBy: userId }, select: { id: true } })).map((l) => l.id),
  );
}
