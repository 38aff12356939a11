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

/** Scaled logits at a temperature other than 1: one buffer reused (sampling is synchronous), no garbage per token. */
let scratch = new Float64Array(0);

/** The log-sum-exp and entropy (nats) of a logits row's softmax at temperature 1, where the model's graph computed
 *  them (workers/trainer/export_onnx.py). */
export interface LogitStats {
  logSumExp: number;
  entropy: number;
}

/**
 * One draw from the top-p nucleus of softmax(lw) for a uniform u, where lw are log-weights (logits, or logits over a
 * temperature) whose largest is `max` and whose log-sum-exp is `logTotal`: the same set and order as `nucleus` above
 * — probability down, lower id first on ties — walked a band at a time (the tokens within 4 nats of the top first,
 * then 8, 16, 32, 64, then the rest, each band sorted on its own), since a draw usually ends in the first band and
 * sorting all 49,152 ids of a real vocabulary for every token cost more than the model's own decode step at batch 16;
 * only the tokens walked are exponentiated. Below p = 1 the nucleus's mass is summed in that order as `nucleus`
 * sums it; at p = 1 the nucleus is the whole vocabulary, of mass 1 (equal up to rounding).
 */
function drawFromLogWeights(
  lw: ArrayLike<number>,
  n: number,
  max: number,
  logTotal: number,
  topP: number,
  u: number,
): number {
  const p = Math.min(Math.max(topP, 0), 1);
  const ids: number[] = [];
  const probs: number[] = [];
  let mass = 0;
  let acc = 0;
  let last = 0;
  let upper = Infinity;
  for (const width of BAND_WIDTHS) {
    const lower = max - width; // -Infinity for the last band: every token left, masked ones included
    const band: number[] = [];
    for (let i = 0; i < n; i++) if (lw[i] >= lower && lw[i] < upper) band.push(i);
    band.sort((a, b) => lw[b] - lw[a] || a - b);
    for (const i of band) {
      const q = Math.exp(lw[i] - logTotal);
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
 * entropy in nats (the token view's "entropy"). With `stats` from the model's graph no exp runs over the vocabulary
 * at temperature 1 (only over the tokens the draw walks); without, one pass gives both. At batch 16 on SmolLM2 the
 * exp passes beside the model's decode step were two fifths of the engine's time.
 */
export function sampleToken(
  logits: ArrayLike<number>,
  params: SampleParams,
  rng: () => number,
  stats?: LogitStats,
): { id: number; logprob: number; entropy: number } {
  const n = logits.length;
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (logits[i] > max) max = logits[i];
  let lse: number;
  let entropy: number;
  if (stats) {
    lse = stats.logSumExp;
    entropy = stats.entropy;
  } else {
    // sum: Σ exp(l - max), as logSoftmax sums it; dot: Σ exp(l - max)(l - max), the entropy without cancellation.
    let sum = 0;
    let dot = 0;
    for (let i = 0; i < n; i++) {
      const d = logits[i] - max;
      const e = Math.exp(d);
      sum += e;
      if (e > 0) dot += e * d;
    }
    const logSum = Math.log(sum);
    lse = max + logSum;
    entropy = logSum - dot / sum;
  }
  const t = params.temperature;
  let id: number;
  if (!(t > 0)) {
    id = argmax(logits);
  } else if (t === 1) {
    id = drawFromLogWeights(logits, n, max, lse, params.topP, rng());
  } else {
    if (scratch.length < n) scratch = new Float64Array(n);
    let total = 0;
    for (let i = 0; i < n; i++) {
      scratch[i] = (logits[i] - max) / t;
      total += Math.exp(scratch[i]);
    }
    id = drawFromLogWeights(scratch, n, 0, Math.log(total), params.topP, rng());
  }
  return { id, logprob: logits[id] - lse, entropy };
}

/** Entropy (nats) of a distribution given as log-probabilities. */
export function entropyOf(lsm: ArrayLike<number>): number {
  let h = 0;
  for (let i = 0; i < lsm.length; i++) if (lsm[i] > -Infinity) h -= Math.exp(lsm[i]) * lsm[i];
  return h;
}
