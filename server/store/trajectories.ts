import type { Database, Sql } from '../db/client.ts';
import { insertRows, inTransaction } from '../db/batch.ts';
import { newId } from '../ids.ts';

export interface ToolCallInput {
  turn: number; code: string; stdin?: string; stdout?: string; stderr?: string; status: string;
  exitCode?: number | null; errorType?: string | null;
  queuedAt?: number | null; startedAt?: number | null; finishedAt?: number | null; durationMs?: number | null; queueMs?: number | null;
}

export interface TrajectoryInput {
  id?: string; runId: string; step: number; stage: number; split?: string; problemId?: string | null; groupId: string; sampleIndex: number;
  reward: number; correct?: boolean | null; selected?: boolean; selectReason?: string | null; pErr?: number | null; pFormat?: number | null;
  promptTokens?: number; responseTokens?: number; toolTokens?: number; turns?: number; toolErrors?: number;
  finishReason: string; answer?: string | null; content: unknown; toolCalls: ToolCallInput[];
}

const T_COLS = ['id', 'runId', 'step', 'stage', 'split', 'problemId', 'groupId', 'sampleIndex', 'reward', 'correct', 'selected', 'selectReason',
  'pErr', 'pFormat', 'promptTokens', 'responseTokens', 'toolTokens', 'turns', 'toolCalls', 'toolErrors', 'finishReason', 'answer', 'content', 'createdAt'];
const C_COLS = ['id', 'trajectoryId', 'runId', 'step', 'turn', 'code', 'stdin', 'stdout', 'stderr', 'status', 'exitCode', 'errorType',
  'queuedAt', 'startedAt', 'finishedAt', 'durationMs', 'queueMs'];

function rowsOf(db: Database, t: TrajectoryInput): { traj: unknown[]; calls: unknown[][] } {
  const id = t.id ?? newId('tr_');
  // Raw SQL needs a dialect's boolean and timestamp: 0/1 and ISO text on SQLite (what Prisma's adapter writes).
  const bool = (b: boolean | null | undefined) => (b === null || b === undefined ? null : db.dialect === 'sqlite' ? (b ? 1 : 0) : b);
  const created = db.dialect === 'sqlite' ? new Date().toISOString() : new Date();
  const toolErrors = t.toolErrors ?? t.toolCalls.filter((c) => c.status !== 'ok').length;
  const traj = [id, t.runId, t.step, t.stage, t.split ?? 'train', t.problemId ?? null, t.groupId, t.sampleIndex, t.reward, bool(t.correct),
    bool(t.selected ?? false), t.selectReason ?? null, t.pErr ?? null, t.pFormat ?? null, t.promptTokens ?? 0, t.responseTokens ?? 0,
    t.toolTokens ?? 0, t.turns ?? 0, t.toolCalls.length, toolErrors, t.finishReason, t.answer ?? null, JSON.stringify(t.content), created];
  const calls = t.toolCalls.map((c) => [newId('tc_'), id, t.runId, t.step, c.turn, c.code, c.stdin ?? '', c.stdout ?? '', c.stderr ?? '', c.status,
    c.exitCode ?? null, c.errorType ?? null, c.queuedAt ?? null, c.startedAt ?? null, c.finishedAt ?? null, c.durationMs ?? null, c.queueMs ?? null]);
  return { traj, calls };
}

/** Store trajectories and their tool calls: two multi-row INSERTs per chunk inside one transaction. */
export async function insertTrajectories(db: Database, items: TrajectoryInput[]): Promise<void> {
  const rows = items.map((t) => rowsOf(db, t));
  await inTransaction(db, async (tx) => {
    await insertRows(db, 'Trajectory', T_COLS, rows.map((r) => r.traj), { on: tx });
    await insertRows(db, 'ToolCall', C_COLS, rows.flatMap((r) => r.calls), { on: tx });
  });
}

/** One statement per row, each its own commit: the naive path bench:db compares against. */
export async function insertTrajectorySingle(db: Database, t: TrajectoryInput): Promise<void> {
  const { traj, calls } = rowsOf(db, t);
  await insertRows(db, 'Trajectory', T_COLS, [traj]);
  for (const c of calls) await insertRows(db, 'ToolCall', C_COLS, [c]);
}

/** One step of a run (all groups, all samples), in group order: one scan of the (runId, step, groupId, sampleIndex) index. */
export function readStep(db: Database, runId: string, step: number, opts: { withContent?: boolean } = {}) {
  return db.prisma.trajectory.findMany({
    where: { runId, step },
    orderBy: [{ groupId: 'asc' }, { sampleIndex: 'asc' }],
    omit: opts.withContent ? undefined : { content: true },
  });
}
