import { TRPCError } from '@trpc/server';
import type { Database } from '../db/client.ts';
import { runExists } from '../store/runs.ts';

/** NOT_FOUND unless the run exists: the check procedures make before they read or change a run's data. */
export async function assertRunExists(db: Database, runId: string): Promise<void> {
  if (!(await runExists(db, runId))) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${runId} not found` });
}
