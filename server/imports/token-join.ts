/**
 * prime-rl's token exports (`token_exports/step_N/rank_R.jsonl`) name no episode or trace: a line joins the imported
 * trajectory of its step that has the same token sequence (prompt and completion ids), and brings what the traces
 * lack, the trainer's side of it: its log-probs (π_old) and the entropies. Pure.
 */
import { createHash } from 'node:crypto';
import type { ForeignTokens } from '../../contracts/foreign.ts';
import type { TokenRecord } from '../../contracts/trajectory.ts';

/** What a token sequence is known by in its step: a hash of its prompt ids and completion ids. */
export function tokenSequenceKey(promptIds: readonly number[] | undefined, ids: readonly number[]): string {
  return createHash('sha256')
    .update(`${(promptIds ?? []).join(',')}|${ids.join(',')}`)
    .digest('hex');
}

/**
 * The stored record with the export's trainer log-probs, and its entropies where the record has none; null when the
 * export adds nothing or its arrays do not cover the record's tokens. A record gets no importance weights or clip
 * states from a source (the trainer's side is kept whole: "no value" and "not clipped", as the import stores them).
 */
export function withTrainerSide(record: TokenRecord, exported: ForeignTokens): TokenRecord | null {
  const n = record.ids.length;
  if (exported.ids.length !== n) return null;
  const trainer = exported.trainerLogprobs?.length === n ? exported.trainerLogprobs : undefined;
  const entropy =
    exported.entropies?.length === n && record.entropy.every((x) => Number.isNaN(x)) ? exported.entropies : undefined;
  if (!trainer && !entropy) return null;
  return {
    ...record,
    ...(entropy ? { entropy } : {}),
    ...(trainer
      ? {
          trainerLogprobs: trainer,
          weights: record.weights ?? new Array<number>(n).fill(Number.NaN),
          clip: record.clip ?? new Array<0>(n).fill(0),
        }
      : {}),
  };
}
