/**
 * GRPO-RoC trajectory penalties, exactly as the paper defines them (docs/method.md §5). Pure.
 *
 * - p_err = 0.5 when the trajectory made no tool call (to encourage tool use); else failed calls / calls, where
 *   every status but 'ok' is a failure: execution error, timeout, memory, output limit, internal error and parse
 *   error alike (the released code only counted responses containing the word "error", so timeouts and parse
 *   failures slipped through).
 * - p_format = 1 with no `<answer>`, else min(1, (answers − 1) / turns) — formatPenalty of rollout/stop.ts.
 * - p_total = p_err + p_format, in [0, 2].
 */
import { formatPenalty } from '../rollout/stop.ts';
import { answerFacts, toolStats } from '../rollout/trajectory.ts';
import type { Trajectory } from '../../contracts/trajectory.ts';
import { DEFAULT_TEMPLATE_SETTINGS, type TemplateSettings } from '../rollout/template.ts';

export interface PenaltyFacts {
  /** Tool-call records (parse errors included). */
  toolCalls: number;
  /** Calls whose status is not 'ok'. */
  toolErrors: number;
  /** `<answer>` blocks in model text. */
  answerBlocks: number;
  /** Assistant turns. */
  turns: number;
}

export interface Penalties {
  pErr: number;
  pFormat: number;
  pTotal: number;
}

/** p_err when no tool was called (paper). */
export const NO_TOOL_CALL_P_ERR = 0.5;

const count = (name: string, v: number) => {
  if (!Number.isInteger(v) || v < 0) throw new Error(`penalties: ${name} must be a non-negative integer, got ${v}`);
};

export function penalties(f: PenaltyFacts): Penalties {
  count('toolCalls', f.toolCalls);
  count('toolErrors', f.toolErrors);
  count('answerBlocks', f.answerBlocks);
  count('turns', f.turns);
  if (f.toolErrors > f.toolCalls) throw new Error(`penalties: ${f.toolErrors} errors > ${f.toolCalls} calls`);
  const pErr = f.toolCalls === 0 ? NO_TOOL_CALL_P_ERR : f.toolErrors / f.toolCalls;
  const pFormat = formatPenalty(f.answerBlocks, f.turns);
  return { pErr, pFormat, pTotal: pErr + pFormat };
}

/** The facts of a recorded trajectory (toolStats and answerFacts of rollout/trajectory.ts). */
export function trajectoryFacts(t: Trajectory, s: TemplateSettings = DEFAULT_TEMPLATE_SETTINGS): PenaltyFacts {
  const { calls, errors } = toolStats(t);
  const { answerBlocks, turns } = answerFacts(t, s);
  return { toolCalls: calls, toolErrors: errors, answerBlocks, turns };
}

export const trajectoryPenalties = (t: Trajectory, s: TemplateSettings = DEFAULT_TEMPLATE_SETTINGS): Penalties =>
  penalties(trajectoryFacts(t, s));
