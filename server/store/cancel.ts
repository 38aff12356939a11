import type { Database } from '../db/client.ts';
import { UserError } from '../../contracts/errors.ts';
import { cancel as cancelJob } from '../jobs/queue.ts';
import { appendEvent } from './events.ts';
import { FINISHED, type RunStatus } from '../../contracts/runs.ts';
import { setRunStatus } from './runs.ts';

/**
 * Cancel a run: its queued jobs are cancelled now; a running job is flagged and its worker stops it at the
 * next heartbeat (the run turns "cancelled" then).
 */
export async function cancelRun(db: Database, runId: string): Promise<{ status: string }> {
  const run = await db.prisma.run.findUnique({ where: { id: runId } });
  if (!run) throw new UserError(`run ${runId} not found`, { field: 'runId' });
  if (FINISHED.includes(run.status as RunStatus)) return { status: run.status };
  const jobs = await db.prisma.job.findMany({ where: { runId, status: { in: ['queued', 'leased'] } }, select: { id: true } });
  let running = false;
  for (const j of jobs) if ((await cancelJob(db, j.id)) === 'cancelling') running = true;
  if (running) {
    await appendEvent(db, runId, { type: 'log', level: 'warn', message: 'cancel requested; the worker stops at its next heartbeat' });
    return { status: 'cancelling' };
  }
  await setRunStatus(db, runId, 'cancelled', { message: 'run cancelled before a worker took it' });
  return { status: 'cancelled' };
}
