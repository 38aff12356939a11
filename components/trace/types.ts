/**
 * The client's view of `trajectories.get` (server/trpc/routers/trajectories.ts): the router returns `content` as
 * parsed JSON (unknown), so the inspector names its shape here, built from the rollout's record types.
 */
import type { EngineFinish, ToolCallRecord, ToolStatus, Turn } from '../../contracts/trajectory.ts';
import type { ParseResult, ToolArguments } from '../../contracts/trajectory.ts';

// The rollout's own record types (type-only imports: nothing from workers/ reaches the browser bundle). Stored
// content drops token ids and logprobs (workers/rollout/to-store.ts).
export type { EngineFinish, ToolArguments, ToolStatus };
export type TurnParse = ParseResult;
export type ToolRecord = ToolCallRecord;
export type TraceTurn = Omit<Turn, 'tokenIds' | 'logprobs'>;

export interface Verdict { correct: boolean; method: string; extracted: string | null; reason: string }

export interface TraceContent {
  prompt: string;
  finishReason: string | null;
  finishedAt: number | null;
  error: string | null;
  modelTokens: number;
  turns: TraceTurn[];
  verdict: Verdict;
}

export interface ToolCallRow {
  id: string | number;
  turn: number;
  code: string;
  stdin: string;
  stdout: string;
  stderr: string;
  status: string;
  exitCode: number | null;
  errorType: string | null;
  queuedAt: number | string | Date;
  startedAt: number | string | Date;
  finishedAt: number | string | Date;
  durationMs: number | null;
  queueMs: number | null;
}

export interface TrajectoryDetail {
  id: string;
  runId: string;
  step: number;
  stage: number;
  split: string;
  problemId: string | null;
  groupId: string;
  sampleIndex: number;
  reward: number;
  correct: boolean;
  selected: boolean;
  selectReason: string | null;
  pErr: number | null;
  pFormat: number | null;
  promptTokens: number;
  responseTokens: number;
  toolTokens: number;
  turns: number;
  toolErrors: number;
  finishReason: string;
  answer: string | null;
  createdAt: number | string | Date;
  content: TraceContent;
  /** The contract names both a summary count and the row array `toolCalls`; the array is what reaches the client. */
  toolCalls: ToolCallRow[];
}
