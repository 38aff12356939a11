/**
 * Researchers control what they created: their runs (pause, resume, cancel, share) and their share links; admins
 * everything. A run from before sign-in existed (createdBy null) is an admin's to control.
 */
import { TRPCError } from '@trpc/server';
import type { Database } from '../db/client.ts';
import type { Principal } from '../../contracts/access.ts';
import { getRunCreator } from '../store/runs.ts';
import { getShareLinkCreator } from '../store/share-links.ts';

export async function assertOwnsRun(db: Database, p: Principal, runId: string): Promise<void> {
  const creator = await getRunCreator(db, runId);
  if (creator === undefined) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${runId} not found` });
  if (p.role !== 'admin' && creator !== p.userId)
    throw new TRPCError({
      code: 'FORBIDDEN',
      message: `run ${runId} was launched by someone else: only they or an admin may change or share it`,
    });
}

export async function assertOwnsLink(db: Database, p: Principal, linkId: string): Promise<void> {
  const creator = await getShareLinkCreator(db, linkId);
  if (creator === undefined) return; // revoke answers the unknown id itself
  if (p.role !== 'admin' && creator !== p.userId)
    throw new TRPCError({
      code: 'FORBIDDEN',
      message: 'this share link was made by someone else: only they or an admin may revoke it',
    });
}
