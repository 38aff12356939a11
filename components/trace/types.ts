/**
 * The client's view of `trajectories.get` (server/trpc/root.ts). Typed here rather than inferred from AppRouter so
 * the inspector compiles whether or not the router is merged yet; keep in step with workers/rollout/to-store.ts.
 */
export type ToolStatus = 'ok' | 'error' | 'timeout' | 'memory' | 'output_limit' | 'internal' | 'parse_error';
export type EngineFinish = 'stop' | 'length' | 'abort' | 'error';

export interface ToolArguments { code: string; input: string }

export type TurnParse =
  | { kind: 'call'; name: string; arguments: ToolArguments; raw: string }
  | { kind: 'parse_error'; message: string; raw: string }
  | { kind: 'none' };

export interface ToolRecord {
  name: string | null;
  arguments: ToolArguments | null;
  status: ToolStatus;
  text: string;
  appendedText: string;
  tokens: number;
  appended: boolean;
  queuedAt: number;
  startedAt: number;
  finishedAt: number;
  durationMs: number | null;
  queueMs: number | null;
  stdout?: string;
  stderr?: string;
  exitCode?: number | null;
  errorType?: string | null;
}

export interface TraceTurn {
  index: number;
  text: string;
  tokens: number;
  engineFinish: EngineFinish;
  parse: TurnParse;
  tool: ToolRecord | null;
  genStartedAt: number;
  genFinishedAt: number;
}

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
