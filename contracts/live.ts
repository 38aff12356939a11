/**
 * Live-rollout messages: the in-flight state of each rollout, as the worker publishes what changed once a second
 * in `rollouts` run events (workers/rollout/live.ts) and the run page's live panel renders it.
 */
import type { ToolStatus } from './trajectory.ts';

export interface LiveTurn {
  text: string;
  tool: { code: string; status: ToolStatus | 'running'; output?: string; ms?: number | null } | null;
}

export interface LiveRollout {
  id: string;
  status: 'generating' | 'tool' | 'finished';
  turns: LiveTurn[];
  finishReason?: string | null;
  updatedAt: number;
}

/** What an engine reports to the run dashboard (docs/method.md §6), one row per engine. */
export interface EngineStats {
  id: string;
  /** Requests queued, and being generated (in the running batch). */
  waiting: number;
  running: number;
  /** KV cache in blocks of `blockTokens` tokens: in use (running + kept for prefix reuse) and in all. */
  kvBlocksUsed: number;
  kvBlocksTotal: number;
  blockTokens: number;
  /** Tokens generated per second over the last few seconds. */
  tokensPerS: number;
  weightVersion: number | null;
}

/** The `engines` run event: every engine's figures at one moment (the run page's engine panel). */
export interface EnginesSnapshot {
  at: number;
  engines: EngineStats[];
}
