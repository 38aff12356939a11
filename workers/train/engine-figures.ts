import type { BatchCounters } from '../engines/types.ts';

/**
 * What an engine's batch counters say about one rollout phase (docs/method.md §6), from their values before and
 * after it and the seconds it spent inside the model: rows per batched decode step (how full its batch stayed: rows
 * leave it when they finish or wait on a tool call) and the share of those seconds spent prefilling prompts and tool
 * results. Each is left out where nothing of its kind ran. Pure.
 */
export function batchFigures(
  before: BatchCounters,
  after: BatchCounters,
  computeS: number,
): { meanBatch?: number; prefillFraction?: number } {
  const steps = after.decodeSteps - before.decodeSteps;
  const prefillS = (after.prefillMs - before.prefillMs) / 1000;
  return {
    ...(steps > 0 ? { meanBatch: (after.decodeRows - before.decodeRows) / steps } : {}),
    ...(computeS > 0 ? { prefillFraction: Math.min(1, prefillS / computeS) } : {}),
  };
}
