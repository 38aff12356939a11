import type { Database } from './db/client.ts';
import { enqueue } from './jobs/queue.ts';
import { createRun } from './store/runs.ts';

/** Start a diagnostics run: a Run (so it has an event log and a chart) and the job a worker will pick up. */
export async function launchDiagnostics(db: Database) {
  const run = await createRun(db, { name: `diagnostics ${new Date().toISOString().slice(0, 19).replace('T', ' ')}`, kind: 'diagnostics', seed: 0 });
  const jobId = await enqueue(db, { kind: 'diagnostics', runId: run.id, maxAttempts: 1 });
  return { runId: run.id, jobId };
}

/** The most recent finished diagnostics report, with the run it came from. */
export async function latestDiagnostics(db: Database) {
  const job = await db.prisma.job.findFirst({
    where: { kind: 'diagnostics', status: { in: ['succeeded', 'failed'] } },
    orderBy: { finishedAt: 'desc' },
  });
  if (!job) return null;
  return { jobId: job.id, runId: job.runId, status: job.status, finishedAt: job.finishedAt, error: job.error, report: job.result ? JSON.parse(job.result) : null };
}
