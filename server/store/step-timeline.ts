/** What a step's timeline is built from (contracts/timeline.ts): its trajectories' turn times and its phase spans. */
import type { Database } from '../db/client.ts';
import { buildStepTimeline, type PhaseSpan, STEP_PHASES, type StepTimeline } from '../../contracts/timeline.ts';
import type { StoredTrajectoryContent } from '../../contracts/trajectory.ts';

/** The most trajectories one timeline draws (a lane each): a step of 64 prompts × 16 samples fits. */
export const MAX_TIMELINE_LANES = 1024;

/**
 * The training trajectories of a step with their turns, and the phases its `step` event recorded (null when it
 * recorded none). Evaluation trajectories stored at the same step ran at another time and are not part of it.
 */
export async function readStepTimeline(db: Database, runId: string, step: number): Promise<StepTimeline> {
  const rows = await db.prisma.trajectory.findMany({
    where: { runId, step, split: 'train' },
    select: { id: true, groupId: true, sampleIndex: true, content: true },
    orderBy: [{ groupId: 'asc' }, { sampleIndex: 'asc' }],
    take: MAX_TIMELINE_LANES,
  });
  const trajectories = rows.map((r) => {
    const content = JSON.parse(r.content) as Partial<StoredTrajectoryContent>;
    return { id: r.id, groupId: r.groupId, sampleIndex: r.sampleIndex, turns: content.turns ?? [] };
  });
  return buildStepTimeline(runId, step, trajectories, await readStepPhases(db, runId, step));
}

/**
 * The phases of one step from its `step` event, whose data the loop writes as `{"step":N,…}` (a prefix match finds
 * it without reading every step's event); null when the event has none.
 */
export async function readStepPhases(db: Database, runId: string, step: number): Promise<PhaseSpan[] | null> {
  const row = await db.prisma.runEvent.findFirst({
    where: { runId, type: 'step', data: { startsWith: `{"step":${step},` } },
    orderBy: { seq: 'desc' },
    select: { data: true },
  });
  if (!row?.data) return null;
  const phases = (JSON.parse(row.data) as { phases?: unknown }).phases;
  return Array.isArray(phases) ? phases.filter(isPhaseSpan) : null;
}

function isPhaseSpan(p: unknown): p is PhaseSpan {
  const o = p as Partial<PhaseSpan> | null;
  return (
    !!o &&
    (STEP_PHASES as readonly string[]).includes(o.name as string) &&
    Number.isFinite(o.start) &&
    Number.isFinite(o.end)
  );
}
