/**
 * A finished trajectory as the store's row (server/store/trajectories.ts): summary columns, JSON content, tool calls,
 * and its token-level record when the caller has one (workers/policy/token-record.ts; the TrajectoryTokens side table).
 */
import type { TrajectoryInput } from '../../server/store/trajectories.ts';
import type { Scored } from './score.ts';
import { toolStats } from './trajectory.ts';
import type { StoredTrajectoryContent, StoredTurn, TokenRecord, Trajectory } from '../../contracts/trajectory.ts';

export interface StoreMeta {
  runId: string;
  step: number;
  stage: number;
  split: string;
  problemId: string | null;
  groupId: string;
  sampleIndex: number;
  selected?: boolean;
  selectReason?: string | null;
  pErr?: number | null;
  pFormat?: number | null;
}

export function toTrajectoryInput(
  t: Trajectory,
  s: Scored,
  m: StoreMeta,
  tokens: TokenRecord | null = null,
): TrajectoryInput {
  const stats = toolStats(t);
  // Everything needed to replay: prompt, turns (text, parse, tool record, timings), verdict (contracts/trajectory.ts).
  // Per-token arrays stay out of the JSON: they go to the binary side table.
  const content: StoredTrajectoryContent = {
    prompt: t.prompt,
    finishReason: t.finishReason,
    finishedAt: t.finishedAt,
    error: t.error,
    modelTokens: t.modelTokens,
    turns: t.turns.map(({ tokenIds: _ids, logprobs: _lp, entropies: _en, ...turn }): StoredTurn => turn),
    verdict: s.verdict,
  };
  return {
    ...m,
    reward: s.reward,
    correct: s.correct,
    promptTokens: t.promptTokens,
    responseTokens: t.modelTokens + t.toolTokens,
    toolTokens: t.toolTokens,
    turns: t.turns.length,
    toolErrors: stats.errors,
    finishReason: t.finishReason ?? 'engine_error',
    answer: s.verdict.extracted,
    content,
    tokens,
    toolCalls: t.turns.flatMap((turn) =>
      turn.tool
        ? [
            {
              turn: turn.index,
              code: turn.tool.arguments?.code ?? (turn.parse.kind === 'parse_error' ? turn.parse.raw : ''),
              stdin: turn.tool.arguments?.input ?? '',
              stdout: turn.tool.stdout ?? '',
              stderr: turn.tool.stderr ?? (turn.tool.status === 'parse_error' ? turn.tool.text : ''),
              status: turn.tool.status,
              exitCode: turn.tool.exitCode ?? null,
              errorType: turn.tool.errorType ?? null,
              queuedAt: turn.tool.queuedAt,
              startedAt: turn.tool.startedAt,
              finishedAt: turn.tool.finishedAt,
              durationMs: turn.tool.durationMs,
              queueMs: turn.tool.queueMs,
            },
          ]
        : [],
    ),
  };
}
