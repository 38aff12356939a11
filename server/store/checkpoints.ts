import type { Database } from '../db/client.ts';
import { newId } from '../ids.ts';

/** A checkpoint row: where the trainer wrote a step's weights, optimiser and RNG, and the orchestrator's position. */
export interface CheckpointRow {
  step: number;
  stage: number;
  path: string;
  metadata: string | null;
}

/** The run's newest checkpoint (null before the first). */
export async function latestCheckpoint(db: Database, runId: string): Promise<CheckpointRow | null> {
  return db.prisma.checkpoint.findFirst({
    where: { runId },
    orderBy: { step: 'desc' },
    select: { step: true, stage: true, path: true, metadata: true },
  });
}

/** Record (or re-record, after a resumed attempt wrote the same step again) a checkpoint. */
export async function recordCheckpoint(
  db: Database,
  c: { runId: string; stage: number; step: number; path: string; sizeBytes: number; metadata: unknown },
) {
  const metadata = JSON.stringify(c.metadata);
  await db.prisma.checkpoint.upsert({
    where: { runId_stage_step: { runId: c.runId, stage: c.stage, step: c.step } },
    create: {
      id: newId('ck_'),
      runId: c.runId,
      stage: c.stage,
      step: c.step,
      path: c.path,
      sizeBytes: c.sizeBytes,
      metadata,
    },
    update: { path: c.path, sizeBytes: c.sizeBytes, metadata },
  });
}

/**
 * Delete what a crashed attempt stored after the checkpoint it resumes from (tool calls, trajectories, metric
 * points, eval results), so the resumed run stores each step once.
 */
export async function deleteAfterStep(db: Database, runId: string, step: number) {
  await db.prisma.toolCall.deleteMany({ where: { runId, step: { gt: step } } });
  await db.prisma.trajectory.deleteMany({ where: { runId, step: { gt: step } } });
  await db.prisma.metricPoint.deleteMany({ where: { runId, step: { gt: step } } });
  await db.prisma.evalResult.deleteMany({ where: { runId, step: { gt: step } } });
}
