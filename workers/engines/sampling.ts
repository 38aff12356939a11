/**
 * Token sampling for in-process engines, pure. Each request owns its PRNG (mulberry32, seeded), and draws exactly
 * one number per sampled token, so a seeded request gives the same tokens whatever else shares its batch.
 */

export { mulberry32 } from '../../contracts/random.ts';

/** log-softmax of a logits row (numerically stable), as float64. */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  const lse = max + Math.log(sum);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] - lse;
  return out;
}

/** Index of the largest logit; the lowest index wins ties. */
export function argmax(logits: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}

/**
 * The distribution sampled from: softmax(logits / temperature) restricted to the top-p nucleus (the smallest set
 * of most likely tokens whose probability reaches topP; ties broken by lower id), renormalised.
 * Returns [ids, probs] with probs summing to 1, most likely first.
 */
export function nucleus(
  logits: ArrayLike<number>,
  temperature: number,
  topP: number,
): { ids: number[]; probs: number[] } {
  const scaled = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) scaled[i] = logits[i] / temperature;
  const lp = logSoftmax(scaled);
  const order = Array.from({ length: logits.length }, (_, i) => i).sort((a, b) => lp[b] - lp[a] || a - b);
  const p = Math.min(Math.max(topP, 0), 1);
  const ids: number[] = [];
  const probs: number[] = [];
  let mass = 0;
  for (const i of order) {
    const q = Math.exp(lp[i]);
    ids.push(i);
    probs.push(q);
    mass += q;
    if (mass >= p) break;
  }
  return { ids, probs: probs.map((q) => q / mass) };
}

export interface SampleParams {
  temperature: number;
  topP: number;
}

/**
 * Pick the next token. temperature <= 0 is greedy (argmax, no random draw); otherwise one draw from `rng`.
 * `logprob` is the log-probability of the chosen token under the model itself (log-softmax of the raw logits,
 * temperature 1, no top-p), i.e. what a trainer recomputes for the same tokens; `entropy` is that distribution's
 * entropy in nats (the token view's "entropy").
 */
export function sampleToken(
  logits: ArrayLike<number>,
  params: SampleParams,
  rng: () => number,
): { id: number; logprob: number; entropy: number } {
  let id: number;
  if (!(params.temperature > 0)) {
    id = argmax(logits);
  } else {
    const { ids, probs } = nucleus(logits, params.temperature, params.topP);
    const u = rng();
    let acc = 0;
    id = ids[ids.length - 1];
    for (let k = 0; k < ids.length; k++) {
      acc += probs[k];
      if (u < acc) {
        id = ids[k];
        break;
      }
    }
  }
  const lsm = logSoftmax(logits);
  return { id, logprob: lsm[id], entropy: entropyOf(lsm) };
}

/** Entropy (nats) of a distribution given as log-probabilities. */
export function entropyOf(lsm: ArrayLike<number>): number {
  let h = 0;
  for (let i = 0; i < lsm.length; i++) if (lsm[i] > -Infinity) h -= Math.exp(lsm[i]) * lsm[i];
  return h;
}
