/**
 * Sampling without replacement from a seeded stream (e.g. mulberry32 of workers/engines/sampling.ts). Pure given
 * the stream: the same seed and inputs give the same picks. Each function draws exactly k numbers.
 */

/** A source of uniform floats in [0, 1). */
export type Rng = () => number;

const checkK = (k: number, n: number) => {
  if (!Number.isInteger(k) || k < 0 || k > n) throw new Error(`cannot pick ${k} of ${n}`);
};

/** k distinct indices of 0..n-1, uniformly (partial Fisher–Yates), in pick order. */
export function uniformSample(n: number, k: number, rng: Rng): number[] {
  checkK(k, n);
  const pool = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(rng() * (n - i));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, k);
}

/**
 * k distinct indices by successive sampling: each draw picks a remaining index with probability proportional to its
 * weight among the remaining ones. Weights must be finite and > 0. Returns indices in pick order.
 */
export function weightedSample(weights: readonly number[], k: number, rng: Rng): number[] {
  checkK(k, weights.length);
  for (const w of weights) if (!(Number.isFinite(w) && w > 0)) throw new Error(`weightedSample: bad weight ${w}`);
  const left = weights.map((_, i) => i);
  const out: number[] = [];
  for (let d = 0; d < k; d++) {
    const total = left.reduce((s, i) => s + weights[i], 0);
    let u = rng() * total;
    // Fall back to the last remaining index if rounding leaves u ≥ the running sum.
    let at = left.length - 1;
    for (let j = 0; j < left.length; j++) {
      u -= weights[left[j]];
      if (u < 0) {
        at = j;
        break;
      }
    }
    out.push(left[at]);
    left.splice(at, 1);
  }
  return out;
}

/**
 * Exact inclusion probabilities of successive weighted sampling of k of n (exponential in n: for tests and small
 * diagnostics only, n ≤ 12).
 */
export function inclusionProbabilities(weights: readonly number[], k: number): number[] {
  checkK(k, weights.length);
  if (weights.length > 12) throw new Error('inclusionProbabilities: n > 12');
  const p = weights.map(() => 0);
  const walk = (left: number[], picks: number, prob: number) => {
    if (picks === 0) return;
    const total = left.reduce((s, i) => s + weights[i], 0);
    for (const i of left) {
      const q = prob * (weights[i] / total);
      p[i] += q;
      walk(
        left.filter((j) => j !== i),
        picks - 1,
        q,
      );
    }
  };
  walk(
    weights.map((_, i) => i),
    k,
    1,
  );
  return p;
}
