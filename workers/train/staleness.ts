/**
 * How off-policy a step's batch is (docs/method.md §5 "Asynchronous steps"): per model token, the updates the trainer
 * had made since the weights the token was sampled with. Pure.
 */

/** What a turn says about its generation: its model tokens and the engine's weight version (null: none given). */
export interface TurnVersion {
  tokens: number;
  weightVersion?: number | null;
}

export interface Staleness {
  /** Token-weighted mean staleness. */
  mean: number;
  max: number;
  /** Share of the model tokens sampled with weights older than the trainer's when it trained on them. */
  offPolicyShare: number;
}

/**
 * The staleness of the turns of a batch trained at run step `trainedAt` (the trainer's weights before the update:
 * the step before the batch's own). `stepOf` maps an engine weight version to the run step whose weights it served;
 * a turn whose version is unknown counts as generated at `fallbackStep` (where its generation started).
 */
export function batchStaleness(
  turns: TurnVersion[],
  trainedAt: number,
  stepOf: (version: number) => number | undefined,
  fallbackStep: number,
): Staleness {
  let tokens = 0;
  let weighted = 0;
  let off = 0;
  let max = 0;
  for (const t of turns) {
    const at = (t.weightVersion == null ? undefined : stepOf(t.weightVersion)) ?? fallbackStep;
    const lag = Math.max(0, trainedAt - at);
    tokens += t.tokens;
    weighted += lag * t.tokens;
    if (lag > 0) off += t.tokens;
    max = Math.max(max, lag);
  }
  return tokens === 0
    ? { mean: Math.max(0, trainedAt - fallbackStep), max: Math.max(0, trainedAt - fallbackStep), offPolicyShare: 0 }
    : { mean: weighted / tokens, max, offPolicyShare: off / tokens };
}
