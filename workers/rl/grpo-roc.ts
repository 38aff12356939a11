/**
 * GRPO-RoC ("Resample-on-Correct") group selection and advantages (docs/method.md §5). Pure: no I/O; randomness only
 * from the stream passed in.
 *
 * Per question, 2G rollouts are sampled and G kept:
 * 1. A group whose rewards are all equal is dropped (no signal), unless dropEqualReward is false.
 * 2. Positives are rewards > 0 (as the released code; with binary rewards, r = 1), negatives the rest.
 * 3. Quotas (splitQuota): negatives ⌊|neg|·G/n⌋ (= ⌊|neg|/2⌋ when n = 2G), positives the rest, G − that
 *    (= ⌈|pos|/2⌉ when n = 2G), so the total is exactly G. Then each sign is raised to at least
 *    min(minPerSign, its count), taking the places from the other sign so that the total stays G; only when G is
 *    smaller than both minima together does the total exceed G (minima win: a group must not collapse to one sign).
 * 4. Negatives are sampled uniformly. Positives by successive sampling without replacement, each draw picking a
 *    remaining positive with probability ∝ 1 / (p_total + weightEps) ('weighted', the paper), or the quota with the
 *    lowest p_total, ties by index ('lowest', the released code). weightEps (1e-6) keeps a clean trajectory's
 *    weight finite; it is then ≥ 10⁴ times any penalised one's, so clean positives are in effect taken first — the
 *    limit of "inversely proportional" at p_total = 0.
 * 5. Advantages over the kept samples only (advantages()).
 * The stream is read for negatives first, then positives; the same seed and inputs give the same selection.
 *
 * roc = false is plain GRPO: every sample of a (non-dropped) group is kept; sample G rollouts instead of 2G upstream.
 */
import type { PositiveSelection } from '../../contracts/recipe.ts';
import { uniformSample, weightedSample, type Rng } from './sampling.ts';

export interface RocSample {
  reward: number;
  pErr: number;
  pFormat: number;
}

export type StdKind = 'population' | 'sample';

export interface RocOptions {
  /** G, the number kept per group; null = ⌊n/2⌋. Clamped to n. */
  keep: number | null;
  /** false = plain GRPO (keep every sample of a non-dropped group). */
  roc: boolean;
  positiveSelection: PositiveSelection;
  /** Keep at least min(minPerSign, count) of each sign (released code: 2). */
  minPerSign: number;
  dropEqualReward: boolean;
  /** Added to the standard deviation in the advantage. */
  eps: number;
  /** Added to p_total in the positive weight 1 / (p_total + weightEps). */
  weightEps: number;
  /** Population std (divide by n, our default) or sample std (n − 1, as torch.std in verl). */
  std: StdKind;
}

export const DEFAULT_ROC_OPTIONS: RocOptions = {
  keep: null,
  roc: true,
  positiveSelection: 'weighted',
  minPerSign: 2,
  dropEqualReward: true,
  eps: 1e-6,
  weightEps: 1e-6,
  std: 'population',
};

export interface SampleSelection {
  index: number;
  reward: number;
  sign: 'positive' | 'negative';
  pErr: number;
  pFormat: number;
  pTotal: number;
  /** Weighted positive selection: this sample's share of the positives' total weight (its first-draw probability). */
  weight: number | null;
  selected: boolean;
  reason: string;
  /** Over the kept samples; null when not kept. */
  advantage: number | null;
}

export interface GroupSelection {
  dropped: boolean;
  reason: string;
  /** Ascending. */
  keptIndices: number[];
  positives: number;
  negatives: number;
  keptPositives: number;
  keptNegatives: number;
  samples: SampleSelection[];
}

export const isPositive = (reward: number) => reward > 0;

/**
 * Advantages (r_i − mean) / (std + eps). Population std by default; sample std needs n ≥ 2 (a single reward gets
 * std 0, hence advantage 0, either way).
 */
export function advantages(
  rewards: readonly number[],
  eps = DEFAULT_ROC_OPTIONS.eps,
  std: StdKind = 'population',
): number[] {
  const n = rewards.length;
  if (n === 0) return [];
  const mean = rewards.reduce((s, r) => s + r, 0) / n;
  const ss = rewards.reduce((s, r) => s + (r - mean) ** 2, 0);
  const sd = std === 'sample' ? (n > 1 ? Math.sqrt(ss / (n - 1)) : 0) : Math.sqrt(ss / n);
  // Equal rewards with eps = 0 would give 0/0: they carry no signal, so 0.
  if (sd + eps === 0) return rewards.map(() => 0);
  return rewards.map((r) => (r - mean) / (sd + eps));
}

export interface Quota {
  positives: number;
  negatives: number;
  /** The minimum per sign raised this sign's quota above its proportional share. */
  raisedPositives: boolean;
  raisedNegatives: boolean;
}

/** How many of each sign to keep (rounding and minima as in the module comment). */
export function splitQuota(nPos: number, nNeg: number, keep: number, minPerSign: number): Quota {
  const n = nPos + nNeg;
  const g = Math.min(keep, n);
  if (n === 0) return { positives: 0, negatives: 0, raisedPositives: false, raisedNegatives: false };
  const minPos = Math.min(minPerSign, nPos);
  const minNeg = Math.min(minPerSign, nNeg);
  const shareNeg = Math.floor((nNeg * g) / n);
  let neg = shareNeg;
  let pos = g - neg;
  const sharePos = pos;
  if (neg < minNeg) {
    neg = minNeg;
    pos = Math.max(g - neg, minPos);
  }
  if (pos < minPos) {
    pos = minPos;
    neg = Math.max(g - pos, minNeg);
  }
  pos = Math.min(pos, nPos);
  neg = Math.min(neg, nNeg);
  return { positives: pos, negatives: neg, raisedPositives: pos > sharePos, raisedNegatives: neg > shareNeg };
}

function checkSample(s: RocSample, i: number) {
  if (!Number.isFinite(s.reward)) throw new Error(`sample ${i}: reward ${s.reward} is not finite`);
  for (const [k, v] of [
    ['pErr', s.pErr],
    ['pFormat', s.pFormat],
  ] as const) {
    if (!(Number.isFinite(v) && v >= 0)) throw new Error(`sample ${i}: ${k} ${v} must be finite and ≥ 0`);
  }
}

function checkOptions(o: RocOptions) {
  if (o.keep !== null && !(Number.isInteger(o.keep) && o.keep >= 0))
    throw new Error(`keep ${o.keep} must be a non-negative integer`);
  if (!(Number.isInteger(o.minPerSign) && o.minPerSign >= 0))
    throw new Error(`minPerSign ${o.minPerSign} must be a non-negative integer`);
  if (!(o.eps >= 0) || !(o.weightEps > 0)) throw new Error('eps must be ≥ 0 and weightEps > 0');
}

const fmt = (x: number) => x.toFixed(2);

export function selectGroup(samples: readonly RocSample[], options: Partial<RocOptions>, rng: Rng): GroupSelection {
  const o: RocOptions = { ...DEFAULT_ROC_OPTIONS, ...options };
  checkOptions(o);
  samples.forEach(checkSample);
  const out: SampleSelection[] = samples.map((s, index) => ({
    index,
    reward: s.reward,
    sign: isPositive(s.reward) ? 'positive' : 'negative',
    pErr: s.pErr,
    pFormat: s.pFormat,
    pTotal: s.pErr + s.pFormat,
    weight: null,
    selected: false,
    reason: '',
    advantage: null,
  }));
  const pos = out.filter((s) => s.sign === 'positive').map((s) => s.index);
  const neg = out.filter((s) => s.sign === 'negative').map((s) => s.index);
  const group = (dropped: boolean, reason: string): GroupSelection => {
    const kept = out.filter((s) => s.selected);
    const adv = advantages(
      kept.map((s) => s.reward),
      o.eps,
      o.std,
    );
    kept.forEach((s, j) => {
      s.advantage = adv[j];
    });
    return {
      dropped,
      reason,
      keptIndices: kept.map((s) => s.index),
      positives: pos.length,
      negatives: neg.length,
      keptPositives: kept.filter((s) => s.sign === 'positive').length,
      keptNegatives: kept.filter((s) => s.sign === 'negative').length,
      samples: out,
    };
  };

  if (samples.length === 0) return group(true, 'dropped: empty group');
  if (o.dropEqualReward && samples.every((s) => s.reward === samples[0].reward)) {
    for (const s of out) s.reason = 'dropped: equal rewards';
    return group(true, `dropped: equal rewards (all ${samples[0].reward})`);
  }
  if (!o.roc) {
    for (const s of out) {
      s.selected = true;
      s.reason = 'kept: plain GRPO';
    }
    return group(false, `kept: all ${out.length} (plain GRPO)`);
  }

  const g = Math.min(o.keep ?? Math.floor(samples.length / 2), samples.length);
  const q = splitQuota(pos.length, neg.length, g, o.minPerSign);

  // Negatives: uniform.
  const keptNeg = new Set(uniformSample(neg.length, q.negatives, rng).map((j) => neg[j]));
  for (const i of neg) {
    const s = out[i];
    s.selected = keptNeg.has(i);
    if (!s.selected) s.reason = 'not kept: negative sampled out';
    else if (q.raisedNegatives && q.negatives === neg.length) s.reason = 'kept: below minimum';
    else if (q.negatives === neg.length) s.reason = 'kept: negative (all kept)';
    else s.reason = q.raisedNegatives ? 'kept: negative (uniform, raised to minimum)' : 'kept: negative (uniform)';
  }

  // Positives: weighted by 1 / (p_total + weightEps), or the lowest p_total.
  const posLabel = (i: number) => {
    const s = out[i];
    if (o.positiveSelection === 'lowest') return `lowest p_total ${fmt(s.pTotal)}`;
    return `weight ${fmt(s.weight ?? 0)}`;
  };
  let keptPos: Set<number>;
  if (o.positiveSelection === 'lowest') {
    const order = [...pos].sort((a, b) => out[a].pTotal - out[b].pTotal || a - b);
    keptPos = new Set(order.slice(0, q.positives));
  } else {
    const w = pos.map((i) => 1 / (out[i].pTotal + o.weightEps));
    const total = w.reduce((a, b) => a + b, 0);
    pos.forEach((i, j) => {
      out[i].weight = w[j] / total;
    });
    keptPos = new Set(weightedSample(w, q.positives, rng).map((j) => pos[j]));
  }
  for (const i of pos) {
    const s = out[i];
    s.selected = keptPos.has(i);
    if (!s.selected) s.reason = 'not kept: positive sampled out';
    else if (q.raisedPositives && q.positives === pos.length) s.reason = 'kept: below minimum';
    else if (q.positives === pos.length) s.reason = 'kept: positive (all kept)';
    else s.reason = `kept: positive (${posLabel(i)}${q.raisedPositives ? ', raised to minimum' : ''})`;
  }
  return group(false, `kept: ${q.positives} of ${pos.length} positives, ${q.negatives} of ${neg.length} negatives`);
}

export interface StepSummary {
  groups: number;
  /** Dropped for equal rewards, split by the sign of the common reward. */
  droppedEqualReward: number;
  droppedAllPositive: number;
  droppedAllNegative: number;
  keptGroups: number;
  samples: number;
  keptSamples: number;
  /** Over every group, dropped ones included. */
  positives: number;
  negatives: number;
  keptPositives: number;
  keptNegatives: number;
  /** Mean p_err / p_total of all positives and of the kept ones (RoC should make kept < all); null when none. */
  meanPErrPositives: number | null;
  meanPErrKeptPositives: number | null;
  meanPTotalPositives: number | null;
  meanPTotalKeptPositives: number | null;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** selectGroup over every group of a step (one stream, groups in order), with counts for the step's metrics. */
export function selectStep(
  groups: readonly (readonly RocSample[])[],
  options: Partial<RocOptions>,
  rng: Rng,
): { groups: GroupSelection[]; summary: StepSummary } {
  const res = groups.map((g) => selectGroup(g, options, rng));
  const all = res.flatMap((r) => r.samples);
  const positives = all.filter((s) => s.sign === 'positive');
  const keptPositives = positives.filter((s) => s.selected);
  const equal = res.filter((r) => r.dropped && r.samples.length > 0);
  return {
    groups: res,
    summary: {
      groups: res.length,
      droppedEqualReward: equal.length,
      droppedAllPositive: equal.filter((r) => r.samples[0].sign === 'positive').length,
      droppedAllNegative: equal.filter((r) => r.samples[0].sign === 'negative').length,
      keptGroups: res.filter((r) => !r.dropped).length,
      samples: all.length,
      keptSamples: all.filter((s) => s.selected).length,
      positives: positives.length,
      negatives: all.length - positives.length,
      keptPositives: keptPositives.length,
      keptNegatives: all.filter((s) => s.selected && s.sign === 'negative').length,
      meanPErrPositives: mean(positives.map((s) => s.pErr)),
      meanPErrKeptPositives: mean(keptPositives.map((s) => s.pErr)),
      meanPTotalPositives: mean(positives.map((s) => s.pTotal)),
      meanPTotalKeptPositives: mean(keptPositives.map((s) => s.pTotal)),
    },
  };
}
