/**
 * The token-level record of a trajectory (contracts/trajectory.ts TokenRecord), pure: the response as the trainer
 * sees it (policySample: model tokens are the engine's own ids, tool text tokenised as appended), each token's turn
 * and its share of the text, the engine's logprobs and entropies, and — for a trajectory trained on — what the
 * update did with each token.
 */
import type { ClipState, TokenRecord, Trajectory } from '../../contracts/trajectory.ts';
import type { Tokenizer } from '../engines/tokenizer.ts';
import { detokStep, newDetok } from '../engines/detokenize.ts';

/** What the policy update reports per response token (response-aligned; tool positions are ignored). */
export interface TrainedTokens {
  trainerLogprobs: (number | null)[];
  weights: number[];
  clip: ClipState[];
  advantage: number;
}

/**
 * Characters of text each token adds, by incremental detokenisation (workers/engines/detokenize.ts: a token that
 * ends inside a multi-byte character adds 0 and the token completing it adds the character). Linear in the length.
 */
export function charShares(ids: number[], tok: Tokenizer, eosId?: number): number[] {
  const kept: number[] = [];
  const s = newDetok();
  return ids.map((id, i) => {
    if (eosId !== undefined && id === eosId) return 0;
    kept.push(id);
    return detokStep(tok, kept, s, i === ids.length - 1).length;
  });
}

export function tokenRecord(t: Trajectory, tok: Tokenizer, trained: TrainedTokens | null = null): TokenRecord {
  const r: TokenRecord = {
    ids: [],
    mask: [],
    turn: [],
    chars: [],
    rolloutLogprobs: [],
    entropy: [],
    trainerLogprobs: null,
    weights: null,
    clip: null,
    advantage: trained?.advantage ?? null,
  };
  for (const turn of t.turns) {
    const m = turn.tokenIds ?? tok.encode(turn.text);
    r.ids.push(...m);
    r.chars.push(...charShares(m, tok, tok.eosId));
    m.forEach((_, i) => {
      r.mask.push(1);
      r.turn.push(turn.index);
      r.rolloutLogprobs.push(turn.logprobs?.[i] ?? NaN);
      r.entropy.push(turn.entropies?.[i] ?? NaN);
    });
    if (turn.tool?.appended) {
      const x = tok.encode(turn.tool.appendedText);
      r.ids.push(...x);
      r.chars.push(...charShares(x, tok));
      x.forEach(() => {
        r.mask.push(0);
        r.turn.push(turn.index);
        r.rolloutLogprobs.push(NaN);
        r.entropy.push(NaN);
      });
    }
  }
  if (trained) {
    const n = r.ids.length;
    if (trained.trainerLogprobs.length !== n || trained.weights.length !== n || trained.clip.length !== n) {
      throw new Error(
        `trained token arrays have ${trained.trainerLogprobs.length}/${trained.weights.length}/${trained.clip.length} entries for ${n} response tokens`,
      );
    }
    r.trainerLogprobs = trained.trainerLogprobs.map((x, i) => (r.mask[i] && x !== null ? x : NaN));
    r.weights = trained.weights.map((w, i) => (r.mask[i] ? w : NaN));
    r.clip = trained.clip.map((c, i) => (r.mask[i] ? c : 0));
  }
  return r;
}
