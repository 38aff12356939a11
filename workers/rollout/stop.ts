/**
 * Stop rules of a rollout (docs/method.md §2). Pure. Two decision points per turn:
 *
 * 1. afterGeneration (the assistant turn has been appended; usedTokens and turns include it):
 *    engine failure → engine_error; the engine hit max_tokens or the budget is used up → length; no tool call →
 *    no_tool_call; turns ≥ maxTurns → max_turns (the call is NOT run); otherwise run the tool (or, for a parse error,
 *    use the error text as the tool response).
 * 2. afterTool (the tokenized length of toolResponseTurn(text) is known): appending it must leave room for at least one
 *    more generated token, i.e. usedTokens + toolTokens < maxResponseTokens (verl's `>=` rule); otherwise stop with
 *    tool_overflow and do not append it.
 *
 * The budget counts model and tool tokens of the response, not the prompt. The next generation's max_tokens is the
 * remaining budget (maxTokensForNextTurn).
 */
import type { ParseResult, EngineFinish, FinishReason } from '../../contracts/trajectory.ts';

export interface StopLimits {
  /** Response budget in tokens, tool tokens included. */
  maxResponseTokens: number;
  /** Maximum assistant turns (paper: 10 in stages 1–2, 15 in stage 3, 30 at evaluation; released code: 5). */
  maxTurns: number;
}

export interface AfterGenerationInput {
  /** Response tokens used including this turn's generation. */
  usedTokens: number;
  /** Assistant turns so far including this one. */
  turns: number;
  engineFinish: EngineFinish;
  parse: ParseResult;
}

export type Decision = { action: 'continue' } | { action: 'stop'; reason: FinishReason };
const stop = (reason: FinishReason): Decision => ({ action: 'stop', reason });
const go: Decision = { action: 'continue' };

/** `continue` here means: produce the tool response (run the call, or take the parse-error text). */
export function afterGeneration(l: StopLimits, g: AfterGenerationInput): Decision {
  if (g.engineFinish === 'error' || g.engineFinish === 'abort') return stop('engine_error');
  if (g.engineFinish === 'length' || g.usedTokens >= l.maxResponseTokens) return stop('length');
  if (g.parse.kind === 'none') return stop('no_tool_call');
  if (g.turns >= l.maxTurns) return stop('max_turns');
  return go;
}

/** `continue` here means: append the tool response and generate the next turn. */
export function afterTool(l: StopLimits, usedTokens: number, toolTokens: number): Decision {
  return usedTokens + toolTokens >= l.maxResponseTokens ? stop('tool_overflow') : go;
}

/**
 * Both decisions in one call: after a turn, given (when the turn made a call) the tokenized length of the tool
 * response about to be appended.
 */
export function decideTurn(l: StopLimits, g: AfterGenerationInput & { toolTokens?: number }): Decision {
  const first = afterGeneration(l, g);
  if (first.action === 'stop') return first;
  if (g.toolTokens == null) throw new Error('decideTurn: toolTokens is required when the turn made a call');
  return afterTool(l, g.usedTokens, g.toolTokens);
}

/** max_tokens for the next generation: the remaining budget (≥ 0). */
export function maxTokensForNextTurn(l: StopLimits, usedTokens: number): number {
  return Math.max(0, l.maxResponseTokens - usedTokens);
}

/** p_format of GRPO-RoC (paper): 1 with no `<answer>`, else min(1, (answers − 1) / turns). */
export function formatPenalty(answerBlocks: number, turns: number): number {
  if (answerBlocks === 0) return 1;
  return Math.min(1, (answerBlocks - 1) / Math.max(1, turns));
}
