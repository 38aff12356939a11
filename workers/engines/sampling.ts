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
 * The most likely tokens of `lp` in nucleus order (log-probability down, lower id first on ties), a band at a time:
 * the tokens within 4 nats of the top first, then within 8, 16, 32, 64, then the rest, each band sorted on its own.
 * The bands' concatenation is the whole vocabulary's sorted order, but a draw usually ends in the first band, so
 * sorting all 49,152 ids of a real vocabulary for every token (which cost more than the model's own decode step at
 * batch 16) is left for the rare draw that reaches the tail.
 */
function* bandsInOrder(lp: Float64Array): Generator<number> {
  let max = -Infinity;
  for (let i = 0; i < lp.length; i++) if (lp[i] > max) max = lp[i];
  let upper = Infinity;
  for (const width of [4, 8, 16, 32, 64, Infinity]) {
    const lower = max - width;
    const band: number[] = [];
    for (let i = 0; i < lp.length; i++) if (lp[i] >= lower && lp[i] < upper) band.push(i);
    band.sort((a, b) => lp[b] - lp[a] || a - b);
    yield* band;
    upper = lower;
  }
}

/**
 * One draw from the top-p nucleus of softmax(lp) (`nucleus` above, the same set and order) for a uniform u. Below
 * p = 1 the nucleus's mass is summed in that order as `nucleus` sums it, so the draw is the one `nucleus` gives; at
 * p = 1 the nucleus is the whole vocabulary and its mass is summed in id order (equal up to rounding).
 */
function drawFromNucleus(lp: Float64Array, topP: number, u: number): number {
  const p = Math.min(Math.max(topP, 0), 1);
  const ids: number[] = [];
  const probs: number[] = [];
  let mass = 0;
  if (p < 1) {
    for (const i of bandsInOrder(lp)) {
      const q = Math.exp(lp[i]);
      ids.push(i);
      probs.push(q);
      mass += q;
      if (mass >= p) break;
    }
    let acc = 0;
    for (let k = 0; k < ids.length; k++) {
      acc += probs[k] / mass;
      if (u < acc) return ids[k];
    }
    return ids[ids.length - 1];
  }
  for (let i = 0; i < lp.length; i++) mass += Math.exp(lp[i]);
  let acc = 0;
  let last = 0;
  for (const i of bandsInOrder(lp)) {
    acc += Math.exp(lp[i]) / mass;
    last = i;
    if (u < acc) return i;
  }
  return last;
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
  const lsm = logSoftmax(logits);
  let id: number;
  if (!(params.temperature > 0)) {
    id = argmax(logits);
  } else {
    let lp = lsm;
    if (params.temperature !== 1) {
      const scaled = new Float64Array(logits.length);
      for (let i = 0; i < logits.length; i++) scaled[i] = logits[i] / params.temperature;
      lp = logSoftmax(scaled);
    }
    id = drawFromNucleus(lp, params.topP, rng());
  }
  return { id, logprob: lsm[id], entropy: entropyOf(lsm) };
}

/** Entropy (nats) of a distribution given as log-probabilities. */
export function entropyOf(lsm: ArrayLike<number>): number {
  let h = 0;
  for (let i = 0; i < lsm.length; i++) if (lsm[i] > -Infinity) h -= Math.exp(lsm[i]) * lsm[i];
  return h;
}
