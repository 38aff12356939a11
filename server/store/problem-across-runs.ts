/** One problem across 2–4 runs (contracts/traces.ts): which problems the runs share, and each run's trajectories of one. */
import type { Database } from '../db/client.ts';
import {
  MAX_PROBLEM_TRAJECTORIES,
  type ProblemAcrossRuns,
  type ProblemTrajectoryRow,
  type RunProblemColumn,
} from '../../contracts/traces.ts';

/**
 * Problems with trajectories in any of the runs, those held by the most runs first (then by id), each with its
 * count per run. `search` keeps ids containing it.
 */
export async function listProblemsAcrossRuns(
  db: Database,
  q: { runIds: string[]; search?: string; limit: number },
): Promise<ProblemAcrossRuns[]> {
  const search = q.search?.trim();
  const groups = await db.prisma.trajectory.groupBy({
    by: ['problemId', 'runId'],
    where: { runId: { in: q.runIds }, problemId: search ? { contains: search } : { not: null } },
    _count: { _all: true },
  });
  const byProblem = new Map<string, ProblemAcrossRuns>();
  for (const g of groups) {
    if (g.problemId === null) continue;
    let p = byProblem.get(g.problemId);
    if (!p) byProblem.set(g.problemId, (p = { problemId: g.problemId, runs: 0, counts: {} }));
    p.runs++;
    p.counts[g.runId] = g._count._all;
  }
  return [...byProblem.values()]
    .sort((a, b) => b.runs - a.runs || (a.problemId < b.problemId ? -1 : a.problemId > b.problemId ? 1 : 0))
    .slice(0, q.limit);
}

/**
 * Each run's trajectories of one problem (no content), in the order the runs were given; a run that does not exist
 * is null so the caller decides what that means. Past MAX_PROBLEM_TRAJECTORIES a run lists its latest steps'.
 */
export async function listProblemAcrossRuns(
  db: Database,
  q: { runIds: string[]; problemId: string },
): Promise<(RunProblemColumn | null)[]> {
  return Promise.all(
    q.runIds.map(async (runId) => {
      const run = await db.prisma.run.findUnique({
        where: { id: runId },
        select: { id: true, name: true, kind: true, status: true },
      });
      if (!run) return null;
      const rows = await db.prisma.trajectory.findMany({
        where: { runId, problemId: q.problemId },
        orderBy: [{ step: 'desc' }, { sampleIndex: 'desc' }, { groupId: 'desc' }, { id: 'desc' }],
        select: {
          id: true,
          runId: true,
          step: true,
          split: true,
          groupId: true,
          sampleIndex: true,
          reward: true,
          correct: true,
          turns: true,
          toolCalls: true,
          toolErrors: true,
          finishReason: true,
        },
        take: MAX_PROBLEM_TRAJECTORIES + 1,
      });
      const items: ProblemTrajectoryRow[] = rows.slice(0, MAX_PROBLEM_TRAJECTORIES).reverse();
      return { run, items, truncated: rows.length > MAX_PROBLEM_TRAJECTORIES };
    }),
  );
}

/** Whether any of the runs holds a trajectory of the problem. */
export async function anyTrajectoryOfProblem(db: Database, runIds: string[], problemId: string): Promise<boolean> {
  const row = await db.prisma.trajectory.findFirst({
    where: { runId: { in: runIds }, problemId },
    select: { id: true },
  });
  return row !== null;
}
