/**
 * Groups that carry a signal (docs/method.md §5 "Dynamic sampling and the pass-rate curriculum"). Pure: no I/O;
 * randomness only from the streams passed in.
 *
 * A GRPO group whose rewards are all equal has advantage 0 for every sample: it trains nothing. Dynamic sampling
 * (DAPO; verl's `algorithm.filter_groups`) draws more prompts until the step has its number of groups with mixed
 * rewards, at most `maxGenBatches` rounds of generation (verl's `max_num_gen_batches`, the first round included);
 * the first `target` mixed groups in draw order train, as verl truncates the filled batch to its size, and any
 * mixed group past them is stored but not trained (`surplusGroup`). Where the cap or the pool runs out first, the
 * step trains on the mixed groups it has (verl raises an error instead; a run here goes on and reports it).
 */
import type { GroupSelection, RocSample } from './grpo-roc.ts';
import { isPositive } from './grpo-roc.ts';
import type { Rng } from './sampling.ts';

/** A group's rewards are not all equal: it has a nonzero advantage to learn from. */
export const isMixed = (rewards: readonly number[]): boolean => rewards.some((r) => r !== rewards[0]);

export interface RoundState {
  /** The step's number of groups (promptsPerStep). */
  target: number;
  /** Groups drawn and rolled out so far, and how many of them had mixed rewards. */
  drawn: number;
  mixed: number;
  /** Rounds of generation so far. */
  rounds: number;
  /** The cap on rounds (1: no extra round). */
  maxRounds: number;
  /** Prompts of the pool not drawn yet this step. */
  available: number;
}

/**
 * How many prompts the next round draws; 0: stop. The first round draws `target`. A later one draws enough to fill
 * the missing groups at the mixed share seen so far in this step (all `target` while none was mixed), never fewer
 * than are missing and never more than `target`: a round is never larger than the first, so a step holds at most
 * maxRounds × target groups (the bound recipe-bounds.ts checks).
 */
export function nextRoundSize(s: RoundState): number {
  if (s.rounds >= s.maxRounds || s.available <= 0 || s.mixed >= s.target) return 0;
  const missing = s.target - s.mixed;
  const want = s.drawn > 0 && s.mixed > 0 ? Math.ceil(missing / (s.mixed / s.drawn)) : s.target;
  return Math.min(Math.max(want, missing), s.target, s.available);
}

/**
 * Which drawn groups train: the first `target` with mixed rewards, in draw order (all of them with `target` null:
 * dynamic sampling off, RoC drops the equal ones itself). The others with mixed rewards are surplus.
 */
export function trainedGroups(mixed: readonly boolean[], target: number | null): boolean[] {
  if (target === null) return mixed.map(() => true);
  let n = 0;
  return mixed.map((m) => !m || n++ < target);
}

/** The stored selection of a mixed group past the step's target: nothing kept, every sample saying why. */
export function surplusGroup(samples: readonly RocSample[]): GroupSelection {
  const reason = 'dropped: surplus (dynamic sampling already had its groups)';
  const out = samples.map((s, index) => ({
    index,
    reward: s.reward,
    sign: isPositive(s.reward) ? ('positive' as const) : ('negative' as const),
    pErr: s.pErr,
    pFormat: s.pFormat,
    pTotal: s.pErr + s.pFormat,
    weight: null,
    selected: false,
    reason,
    advantage: null,
  }));
  const positives = out.filter((s) => s.sign === 'positive').length;
  return {
    dropped: true,
    reason,
    keptIndices: [],
    positives,
    negatives: out.length - positives,
    keptPositives: 0,
    keptNegatives: 0,
    samples: out,
  };
}

/**
 * The prompts of one step in the order they are drawn, taken a round at a time. Without a curriculum the order is a
 * partial Fisher–Yates shuffle continued as far as the rounds need: its first `take(n, rng)` with the step's stream
 * is exactly `samplePrompts(pool, n, rng)` (rl-stage.ts), so a step without extra rounds draws what it always drew.
 * With a curriculum the order is fixed up front (`curriculumOrder`) and problems from `skipFrom` on (solved always
 * or never) are drawn only once everything before them is.
 */
export class PromptDraw<T> {
  private readonly idx: number[];
  private pos = 0;
  constructor(
    private readonly pool: readonly T[],
    private readonly ordered = false,
    private readonly skipFrom = pool.length,
  ) {
    this.idx = pool.map((_, i) => i);
  }

  /** A draw in the pool's own order (a curriculum's), problems from `skipFrom` on last. */
  static inOrder<T>(order: readonly T[], skipFrom: number): PromptDraw<T> {
    return new PromptDraw(order, true, skipFrom);
  }

  get available(): number {
    return this.pool.length - this.pos;
  }

  /** Of the problems a curriculum set aside, how many were never drawn (all of them unless the rest ran out). */
  get skipped(): number {
    return this.pool.length - Math.max(this.skipFrom, this.pos);
  }

  /** The next `n` prompts (fewer when the pool runs out); `rng` shuffles when the draw is not in a fixed order. */
  take(n: number, rng: Rng): T[] {
    const end = Math.min(this.pos + n, this.pool.length);
    if (!this.ordered)
      for (let i = this.pos; i < end; i++) {
        const j = i + Math.floor(rng() * (this.idx.length - i));
        [this.idx[i], this.idx[j]] = [this.idx[j]!, this.idx[i]!];
      }
    const out = this.idx.slice(this.pos, end).map((i) => this.pool[i]!);
    this.pos = end;
    return out;
  }
}
