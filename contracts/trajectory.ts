/**
 * A trajectory as every part sees it: the agent loop builds it (workers/rollout/trajectory.ts), the store keeps
 * its content (workers/rollout/to-store.ts → Trajectory.content, ToolCall rows), the trajectories router returns
 * it and the trace inspector renders it. Types only (docs/method.md §2).
 */

/** How a sandboxed call ended (workers/sandbox/). Everything but 'ok' is a tool error. */
export type CallStatus = 'ok' | 'error' | 'timeout' | 'memory' | 'output_limit' | 'internal';

/** What the parser made of one assistant turn (workers/rollout/parser.ts). */
export interface ToolArguments {
  code: string;
  input: string;
}

/** Why a call was unterminated: the text ended inside a JSON string, inside the object, or before the close tag. */
export type Unterminated = 'in_string' | 'in_object' | 'no_close_tag';

export type ParseResult =
  | { kind: 'call'; name: string; arguments: ToolArguments; raw: string }
  | { kind: 'parse_error'; message: string; raw: string; unterminated?: Unterminated }
  | { kind: 'none' };

/** The verifier's verdict on the final answer (workers/reward/verifier.ts): which step decided, and why. */
export type Method = 'exact' | 'numeric' | 'symbolic' | 'sampling' | 'sympy' | 'math-verify' | 'none';
export interface Verdict {
  correct: boolean;
  method: Method;
  extracted: string | null;
  reason: string;
  /** With `explain`: each step the cascade took, in order, with what it decided. */
  steps?: { step: string; detail: string }[];
}

/**
 * A verdict as stored with a trajectory. correct null: no verdict — an imported trajectory keeps its source's reward,
 * which Toolsmith did not check, and a reward above 0 is not a correct answer (a partial or shaped reward).
 */
export type StoredVerdict = Omit<Verdict, 'correct'> & { correct: boolean | null };

export type FinishReason = 'no_tool_call' | 'length' | 'max_turns' | 'tool_overflow' | 'engine_error';
/** How the engine ended one generation: its stop condition (stop string / EOS), max_tokens, or a failure. */
export type EngineFinish = 'stop' | 'length' | 'abort' | 'error';
/** Sandbox statuses plus a parse error (the call never reached the sandbox). Everything but 'ok' is a tool error. */
export type ToolStatus = CallStatus | 'parse_error';

export interface ToolCallRecord {
  /** The parsed call; null for a parse error. */
  name: string | null;
  arguments: ToolArguments | null;
  status: ToolStatus;
  /** The tool text the model sees inside `<tool_response>` (formatted result, or the parse-error message). */
  text: string;
  /** The exact string appended to the context (toolResponseTurn(text)). */
  appendedText: string;
  /** Tokens of appendedText (known even when it was not appended). */
  tokens: number;
  /** False when appending would have overflowed the budget (finish reason tool_overflow). */
  appended: boolean;
  /** Epoch ms: submitted to the code environment, started running, result received. Equal for parse errors. */
  queuedAt: number;
  startedAt: number;
  finishedAt: number;
  /** As the sandbox reports them (run time and queue wait), ms; null for parse errors. */
  durationMs: number | null;
  queueMs: number | null;
  /** The sandbox's raw result (absent for parse errors), kept for the trace inspector. */
  stdout?: string;
  stderr?: string;
  exitCode?: number | null;
  errorType?: string | null;
  /** The seed the call's random generators started from (recipe tool.seedCalls); absent: fresh entropy. */
  seed?: number;
  /** A call of a `trajectory` session (recipe tool.session): it ran in a new interpreter (`new`: the first call, or
   *  the first after a limit ended the last one), it ended the session (`ended`); absent: not a session's call. */
  session?: { new: boolean; ended: boolean };
  /** What an imported call's source did not keep: shown as "—", never as 0. */
  absent?: Absent;
}

/** Values a foreign source did not record (server/imports/to-store.ts); a native turn or call has them all. */
export interface Absent {
  tokens?: true;
  timing?: true;
}

export interface Turn {
  index: number;
  /** The assistant text generated in this turn (after the `<reason>` prefix, which is part of the prompt/tool text). */
  text: string;
  tokens: number;
  tokenIds: number[] | null;
  /** Per-token logprobs when the engine returns them (length === tokens). */
  logprobs: number[] | null;
  /** Per-token entropy of the engine's distribution when the engine reports it (length === tokens). */
  entropies?: number[] | null;
  /** The policy weight version the engine generated this turn with (null: unknown). */
  weightVersion?: number | null;
  engineFinish: EngineFinish;
  parse: ParseResult;
  tool: ToolCallRecord | null;
  /** Epoch ms of the generation request and of its completion. */
  genStartedAt: number;
  genFinishedAt: number;
}

export interface Trajectory {
  prompt: string;
  promptTokens: number;
  turns: Turn[];
  /** Sum of turn tokens (mask 1). */
  modelTokens: number;
  /** Sum of appended tool tokens (mask 0). */
  toolTokens: number;
  finishReason: FinishReason | null;
  finishedAt: number | null;
  /** Engine error text when finishReason is engine_error. */
  error: string | null;
}

/** A turn as stored in Trajectory.content: its per-token arrays live in the binary side table (TokenRecord). */
/** A turn as stored; `absent`: what an imported turn's source did not keep (token count, generation time). */
export type StoredTurn = Omit<Turn, 'tokenIds' | 'logprobs' | 'entropies'> & { absent?: Absent };

/**
 * Per-token clip state of a token in the policy update: 0 none, 1 clipped low (Â < 0, ρ < 1-ε_low), 2 clipped high
 * (Â > 0, ρ > 1+ε_high), 3 dual-clipped, 4 truncated by TIS (weight capped at C), 5 masked by TIS (weight 0).
 */
export type ClipState = 0 | 1 | 2 | 3 | 4 | 5;

/**
 * The token-level record of one trajectory's response (docs/method.md §5): aligned arrays with one entry
 * per response token, model turns and appended tool responses in order, as the trainer saw them (PolicySample).
 * Stored compactly in a side table (binary columns), read by the token view. NaN marks "no value" inside the
 * float arrays (tool tokens; an engine without logprobs).
 */
export interface TokenRecord {
  ids: number[];
  /** 1 = model token (trained on), 0 = tool-response token (masked out). */
  mask: number[];
  /** Turn index of each token. */
  turn: number[];
  /**
   * Characters of text each token accounts for, in order within its segment (the turn's text, then its appended
   * tool text): token i shows the next chars[i] characters. 0 for a token whose bytes complete in a later token
   * (multi-byte characters) and for EOS.
   */
  chars: number[];
  /** The rollout engine's log-prob of each sampled token (π_rollout). */
  rolloutLogprobs: number[];
  /** Entropy (nats) of the engine's distribution at each sampled token. */
  entropy: number[];
  /** The trainer's log-probs before the update (π_old); null when the trajectory was not trained on. */
  trainerLogprobs: number[] | null;
  /** The per-token importance weight the update applied (TIS; 1 when off, 0 when masked); null when not trained on. */
  weights: number[] | null;
  /** ClipState per token; null when not trained on. */
  clip: ClipState[] | null;
  /** The sequence's advantage; null when not trained on. */
  advantage: number | null;
}

/**
 * A TokenRecord as the API returns it (trajectories.tokens, share.view.trajectoryTokens): JSON has no NaN, so the
 * float arrays hold null where the record holds NaN (no value).
 */
export interface TokenRecordWire {
  ids: number[];
  mask: number[];
  turn: number[];
  chars: number[];
  rolloutLogprobs: (number | null)[];
  entropy: (number | null)[];
  trainerLogprobs: (number | null)[] | null;
  weights: (number | null)[] | null;
  clip: ClipState[] | null;
  advantage: number | null;
}

/** Trajectory.content: everything needed to replay a trajectory. */
export interface StoredTrajectoryContent {
  prompt: string;
  finishReason: FinishReason | null;
  finishedAt: number | null;
  error: string | null;
  modelTokens: number;
  turns: StoredTurn[];
  verdict: StoredVerdict;
}

/** One stored tool call (a ToolCall row) as the API returns it. */
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

/** A stored trajectory with its content and tool calls (trajectories.get, share views). */
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
  /** The verdict every view shows (the header, the answer box, the explorer, share views); null: none. */
  correct: boolean | null;
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
  content: StoredTrajectoryContent;
  toolCalls: ToolCallRow[];
}
