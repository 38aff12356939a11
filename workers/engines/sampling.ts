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

/** Band widths (nats below the most likely token) in which a draw walks the vocabulary, each band sorted on its own. */
const BAND_WIDTHS = [4, 8, 16, 32, 64, Infinity];

/** Per-token scratch for the draw's weights: one buffer reused (sampling is synchronous), no garbage per token. */
let scratch = new Float64Array(0);

/**
 * One draw from the top-p nucleus of the distribution with weights `w` (w[i] ∝ its probability, the largest 1,
 * `total` their sum in id order) for a uniform u: the same set and order as `nucleus` above — probability down,
 * lower id first on ties — walked a band at a time (the tokens within 4 nats of the top first, then 8, 16, 32, 64,
 * then the rest, each band sorted on its own), since a draw usually ends in the first band and sorting all 49,152 ids
 * of a real vocabulary for every token cost more than the model's own decode step at batch 16. Below p = 1 the
 * nucleus's mass is summed in that order as `nucleus` sums it; at p = 1 the nucleus is the whole vocabulary and its
 * mass is `total` (equal up to rounding).
 */
function drawFromWeights(w: Float64Array, n: number, total: number, topP: number, u: number): number {
  const p = Math.min(Math.max(topP, 0), 1);
  const ids: number[] = [];
  const probs: number[] = [];
  let mass = 0;
  let acc = 0;
  let last = 0;
  let upper = Infinity;
  for (const width of BAND_WIDTHS) {
    const lower = Math.exp(-width); // 0 for the last band: every token left, masked ones (weight 0) included
    const band: number[] = [];
    for (let i = 0; i < n; i++) if (w[i] >= lower && w[i] < upper) band.push(i);
    band.sort((a, b) => w[b] - w[a] || a - b);
    for (const i of band) {
      const q = w[i] / total;
      last = i;
      if (p >= 1) {
        acc += q;
        if (u < acc) return i;
        continue;
      }
      ids.push(i);
      probs.push(q);
      mass += q;
      if (mass >= p) return pick(ids, probs, mass, u);
    }
    upper = lower;
  }
  return p >= 1 ? last : pick(ids, probs, mass, u);
}

/** The nucleus's token for u: its probabilities renormalised over `mass`, accumulated in order. */
function pick(ids: number[], probs: number[], mass: number, u: number): number {
  let acc = 0;
  for (let k = 0; k < ids.length; k++) {
    acc += probs[k] / mass;
    if (u < acc) return ids[k];
  }
  return ids[ids.length - 1];
}

/**
 * Pick the next token. temperature <= 0 is greedy (argmax, no random draw); otherwise one draw from `rng`.
 * `logprob` is the log-probability of the chosen token under the model itself (log-softmax of the raw logits,
 * temperature 1, no top-p), i.e. what a trainer recomputes for the same tokens; `entropy` is that distribution's
 * entropy in nats (the token view's "entropy"). One pass of exp over the vocabulary gives all three at temperature 1
 * (one more at another temperature), into a reused buffer: at batch 16 this work beside the model's decode step was
 * two fifths of the engine's time.
 */
export function sampleToken(
  logits: ArrayLike<number>,
  params: SampleParams,
  rng: () => number,
): { id: number; logprob: number; entropy: number } {
  const n = logits.length;
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (logits[i] > max) max = logits[i];
  const t = params.temperature;
  const draw = t > 0;
  if (draw && scratch.length < n) scratch = new Float64Array(n);
  // sum: Σ exp(l - max), as logSoftmax sums it; dot: Σ exp(l - max)(l - max), for the entropy without cancellation.
  let sum = 0;
  let dot = 0;
  for (let i = 0; i < n; i++) {
    const d = logits[i] - max;
    const e = Math.exp(d);
    sum += e;
    if (e > 0) dot += e * d;
    if (draw && t === 1) scratch[i] = e;
  }
  const logSum = Math.log(sum);
  let id: number;
  if (!draw) {
    id = argmax(logits);
  } else {
    let total = sum;
    if (t !== 1) {
      total = 0;
      for (let i = 0; i < n; i++) {
        scratch[i] = Math.exp((logits[i] - max) / t);
        total += scratch[i];
      }
    }
    id = drawFromWeights(scratch, n, total, params.topP, rng());
  }
  return { id, logprob: logits[id] - (max + logSum), entropy: logSum - dot / sum };
}

/** Entropy (nats) of a distribution given as log-probabilities. */
export function entropyOf(lsm: ArrayLike<number>): number {
  let h = 0;
  for (let i = 0; i < lsm.length; i++) if (lsm[i] > -Infinity) h -= Math.exp(lsm[i]) * lsm[i];
  return h;
}
