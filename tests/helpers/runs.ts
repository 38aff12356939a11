// Waits and reads over a run's rows that the training tests share (local, async and Ray runs alike).
import type { Database } from '../../server/db/client.ts';
import { waitFor } from './proc.ts';

const ENDED = ['succeeded', 'failed', 'cancelled', 'paused'];

/** Wait for a run to end (succeeded, failed, cancelled or paused); on a timeout, `detail` says what its processes said. */
export function waitRunEnded(
  db: Database,
  runId: string,
  opts: { timeoutMs: number; intervalMs?: number; detail: () => string },
) {
  return waitFor(
    `run ${runId} to finish`,
    async () => {
      const r = await db.prisma.run.findUniqueOrThrow({ where: { id: runId } });
      return ENDED.includes(r.status) ? r : null;
    },
    { timeoutMs: opts.timeoutMs, intervalMs: opts.intervalMs ?? 200, detail: opts.detail },
  );
}

/** A run's metric `key` as [step, value] pairs, by step. */
export const metricSeries = async (db: Database, runId: string, key: string) =>
  (await db.prisma.metricPoint.findMany({ where: { runId, key }, orderBy: { step: 'asc' } })).map(
    (p) => [p.step, p.value] as const,
  );
