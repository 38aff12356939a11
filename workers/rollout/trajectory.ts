/**
 * The record of one rollout, complete enough to replay it (docs/method.md §2). Pure helpers, immutable updates.
 *
 * Token accounting: the response is everything after the prompt, i.e. the assistant generations (model tokens,
 * response mask 1) interleaved with the strings the rollout appends after a call (`toolResponseTurn(text)`, tool
 * tokens, mask 0). Both count against the length budget. A tool response that would overflow the budget is recorded
 * with `appended: false` and contributes no tokens.
 */
import type {
  EngineFinish,
  ParseResult,
  Trajectory,
  Turn,
  ToolCallRecord,
  ToolStatus,
  FinishReason,
} from '../../contracts/trajectory.ts';
import { DEFAULT_TEMPLATE_SETTINGS, type TemplateSettings } from './template.ts';
import { countAnswerBlocks, parseTurn } from './parser.ts';

export function newTrajectory(prompt: string, promptTokens: number): Trajectory {
  return {
    prompt,
    promptTokens,
    turns: [],
    modelTokens: 0,
    toolTokens: 0,
    finishReason: null,
    finishedAt: null,
    error: null,
  };
}

/** Response tokens used so far (model + appended tool tokens; the prompt is not counted). */
export const usedTokens = (t: Trajectory) => t.modelTokens + t.toolTokens;

export interface AssistantTurnInput {
  text: string;
  tokens: number;
  tokenIds?: number[] | null;
  logprobs?: number[] | null;
  /** Per-token entropies when the engine reports them (length === tokens). */
  entropies?: number[] | null;
  /** The weight version the engine generated the turn with (GenerateResult.weightVersion). */
  weightVersion?: number | null;
  engineFinish: EngineFinish;
  genStartedAt: number;
  genFinishedAt: number;
  /** Precomputed parse; otherwise parseTurn(text, settings). */
  parse?: ParseResult;
}

export function appendAssistantTurn(
  t: Trajectory,
  a: AssistantTurnInput,
  s: TemplateSettings = DEFAULT_TEMPLATE_SETTINGS,
): Trajectory {
  if (t.finishReason) throw new Error('trajectory already finished');
  if (!Number.isInteger(a.tokens) || a.tokens < 0) throw new Error(`bad token count ${a.tokens}`);
  if (a.tokenIds && a.tokenIds.length !== a.tokens)
    throw new Error(`tokenIds length ${a.tokenIds.length} != tokens ${a.tokens}`);
  if (a.logprobs && a.logprobs.length !== a.tokens)
    throw new Error(`logprobs length ${a.logprobs.length} != tokens ${a.tokens}`);
  if (a.entropies && a.entropies.length !== a.tokens)
    throw new Error(`entropies length ${a.entropies.length} != tokens ${a.tokens}`);
  const turn: Turn = {
    index: t.turns.length,
    text: a.text,
    tokens: a.tokens,
    tokenIds: a.tokenIds ?? null,
    logprobs: a.logprobs ?? null,
    entropies: a.entropies ?? null,
    weightVersion: a.weightVersion ?? null,
    engineFinish: a.engineFinish,
    parse: a.parse ?? parseTurn(a.text, s),
    tool: null,
    genStartedAt: a.genStartedAt,
    genFinishedAt: a.genFinishedAt,
  };
  return { ...t, turns: [...t.turns, turn], modelTokens: t.modelTokens + a.tokens };
}

/** Attach the tool result to the last turn; its tokens count only if `appended`. */
export function appendToolResult(t: Trajectory, r: ToolCallRecord): Trajectory {
  if (t.finishReason) throw new Error('trajectory already finished');
  const last = t.turns[t.turns.length - 1];
  if (!last) throw new Error('no assistant turn to attach a tool result to');
  if (last.tool) throw new Error(`turn ${last.index} already has a tool result`);
  if (last.parse.kind === 'none') throw new Error(`turn ${last.index} made no tool call`);
  const turns = [...t.turns.slice(0, -1), { ...last, tool: r }];
  return { ...t, turns, toolTokens: t.toolTokens + (r.appended ? r.tokens : 0) };
}

/** A record for a parse error: the error message is the tool text; no sandbox involved. */
export function parseErrorRecord(
  message: string,
  appendedText: string,
  tokens: number,
  at: number,
  appended = true,
): ToolCallRecord {
  return {
    name: null,
    arguments: null,
    status: 'parse_error',
    text: message,
    appendedText,
    tokens,
    appended,
    queuedAt: at,
    startedAt: at,
    finishedAt: at,
    durationMs: null,
    queueMs: null,
  };
}

export function finishTrajectory(
  t: Trajectory,
  reason: FinishReason,
  at: number,
  error: string | null = null,
): Trajectory {
  if (t.finishReason) throw new Error(`trajectory already finished (${t.finishReason})`);
  return { ...t, finishReason: reason, finishedAt: at, error };
}

export interface Segment {
  kind: 'model' | 'tool';
  text: string;
  tokens: number;
  logprobs?: number[] | null;
}

/** The response as alternating segments, in context order (appended tool texts only). */
export function segments(t: Trajectory): Segment[] {
  const out: Segment[] = [];
  for (const turn of t.turns) {
    out.push({ kind: 'model', text: turn.text, tokens: turn.tokens, logprobs: turn.logprobs });
    if (turn.tool?.appended) out.push({ kind: 'tool', text: turn.tool.appendedText, tokens: turn.tool.tokens });
  }
  return out;
}

/** The response text (everything after the prompt). prompt + responseText is the full context. */
export const responseText = (t: Trajectory) =>
  segments(t)
    .map((x) => x.text)
    .join('');

/** Response mask from per-segment token counts: model tokens 1, tool tokens 0. */
export function responseMask(segs: Pick<Segment, 'kind' | 'tokens'>[]): number[] {
  const mask: number[] = [];
  for (const s of segs) for (let i = 0; i < s.tokens; i++) mask.push(s.kind === 'model' ? 1 : 0);
  return mask;
}

export const trajectoryMask = (t: Trajectory) => responseMask(segments(t));

/**
 * Per-token logprobs aligned with the response mask (tool tokens → null); null when any model turn lacks them.
 */
export function responseLogprobs(t: Trajectory): (number | null)[] | null {
  const out: (number | null)[] = [];
  for (const s of segments(t)) {
    if (s.kind === 'tool') for (let i = 0; i < s.tokens; i++) out.push(null);
    else if (!s.logprobs) return null;
    else out.push(...s.logprobs);
  }
  return out;
}

/** Tool-call counts for p_err: every call record (parse errors included, overflowed ones too) is a call; non-ok is an error. */
export function toolStats(t: Trajectory): { calls: number; errors: number; parseErrors: number } {
  let calls = 0;
  let errors = 0;
  let parseErrors = 0;
  for (const turn of t.turns) {
    if (!turn.tool) continue;
    calls++;
    if (turn.tool.status !== 'ok') errors++;
    if (turn.tool.status === 'parse_error') parseErrors++;
  }
  return { calls, errors, parseErrors };
}

/** Answer-format facts for p_format: `<answer>` blocks in model text only (tool output is excluded), and turns. */
export function answerFacts(
  t: Trajectory,
  s: TemplateSettings = DEFAULT_TEMPLATE_SETTINGS,
): { answerBlocks: number; turns: number } {
  let answerBlocks = 0;
  for (const turn of t.turns) answerBlocks += countAnswerBlocks(turn.text, s);
  return { answerBlocks, turns: t.turns.length };
}
