/**
 * Live-rollout messages: the in-flight state of each rollout, as the worker publishes what changed once a second
 * in `rollouts` run events (workers/rollout/live.ts) and the run page's live panel renders it.
 */
import type { ToolStatus } from './trajectory.ts';

export interface LiveTurn { text: string; tool: { code: string; status: ToolStatus | 'running'; output?: string; ms?: number | null } | null }

export interface LiveRollout {
  id: string;
  status: 'generating' | 'tool' | 'finished';
  turns: LiveTurn[];
  finishReason?: string | null;
  updatedAt: number;
}
