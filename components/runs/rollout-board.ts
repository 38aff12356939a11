/**
 * The live rollout board on the client: 'rollouts' run events carry the full current state of every rollout that
 * changed (workers/rollout/live.ts), so applying them is a replace by id. Pure.
 */
import type { LiveRollout } from '../../contracts/live.ts';

export type { LiveRollout };

/** How many rollout cards the page keeps (and renders) at most. */
export const MAX_LIVE = 50;

/**
 * Apply one batch of updates. Rollouts are kept newest-updated first; past `cap`, finished ones are dropped
 * before in-flight ones, oldest first.
 */
export function applyRollouts(
  board: readonly LiveRollout[],
  updates: readonly LiveRollout[],
  cap = MAX_LIVE,
): LiveRollout[] {
  if (updates.length === 0) return board as LiveRollout[];
  const byId = new Map(board.map((r) => [r.id, r]));
  for (const u of updates) {
    if (!u || typeof u.id !== 'string') continue;
    const prev = byId.get(u.id);
    // An older state arriving late (a replayed event) never overwrites a newer one.
    if (prev && prev.updatedAt > u.updatedAt) continue;
    byId.set(u.id, u);
  }
  const all = [...byId.values()].sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id));
  if (all.length <= cap) return all;
  const live = all.filter((r) => r.status !== 'finished');
  const done = all.filter((r) => r.status === 'finished');
  const keepLive = live.slice(0, cap);
  const keepDone = done.slice(0, Math.max(0, cap - keepLive.length));
  const keep = new Set([...keepLive, ...keepDone]);
  return all.filter((r) => keep.has(r));
}

/** The rollouts of an event's data, or [] when it is not a list of rollouts. */
export function rolloutsOf(data: unknown): LiveRollout[] {
  if (!Array.isArray(data)) return [];
  return data.filter(
    (r): r is LiveRollout =>
      !!r &&
      typeof r === 'object' &&
      typeof (r as LiveRollout).id === 'string' &&
      Array.isArray((r as LiveRollout).turns),
  );
}

/** A step ended: drop the finished rollouts (they are stored now), keep any still in flight. */
export function clearFinished(board: readonly LiveRollout[]): LiveRollout[] {
  return board.filter((r) => r.status !== 'finished');
}

export interface GroupRow {
  id: string;
  groupId: string;
  sampleIndex: number;
  reward: number;
  selected: boolean;
  selectReason: string | null;
  pErr: number | null;
  pFormat: number | null;
  responseTokens: number;
  turns: number;
  toolCalls: number;
  toolErrors: number;
  finishReason: string;
  problemId: string | null;
}

/** Trajectories grouped by groupId (groups in first-seen order, samples by index), with each group's mean reward. */
export function groupByGroupId<T extends GroupRow>(
  rows: readonly T[],
): { groupId: string; problemId: string | null; meanReward: number; kept: number; items: T[] }[] {
  const groups = new Map<string, T[]>();
  for (const r of rows) {
    const g = groups.get(r.groupId);
    if (g) g.push(r);
    else groups.set(r.groupId, [r]);
  }
  return [...groups.entries()].map(([groupId, items]) => {
    items.sort((a, b) => a.sampleIndex - b.sampleIndex);
    return {
      groupId,
      problemId: items[0]?.problemId ?? null,
      meanReward: items.reduce((a, r) => a + r.reward, 0) / items.length,
      kept: items.filter((r) => r.selected).length,
      items,
    };
  });
}
