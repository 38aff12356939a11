/**
 * The pass-rate curriculum (docs/method.md §5 "Dynamic sampling and the pass-rate curriculum"). Pure: the outcomes
 * come in (workers/train/prompt-draw.ts reads them from the run's stored rollouts and evaluation samples of the last
 * `windowSteps` steps), the order goes out.
 *
 * A problem's pass rate under the current policy is estimated as c / n over its stored outcomes. It is
 * - `sometimes` when 0 < c < n: the policy solves it sometimes, its group is likely to have mixed rewards (this
 *   needs no minimum: one right and one wrong outcome prove it);
 * - `unknown` when n < minSamples (never tried, or too few outcomes to call it);
 * - `always` (c = n) or `never` (c = 0) with n ≥ minSamples: a group of it is likely all right or all wrong.
 * The step draws the `sometimes` problems first, then the `unknown` ones, each in the step's shuffled order, and the
 * `always`/`never` ones only once everything else is drawn: those are the prompts the curriculum skips. Since only
 * recent outcomes count, a skipped problem comes back as `unknown` once its outcomes age out of the window.
 */
import type { Rng } from './sampling.ts';

export interface Outcomes {
  /** Stored outcomes (rollouts and evaluation samples) of the problem in the window. */
  n: number;
  /** How many were correct. */
  correct: number;
}

export type PassTier = 'sometimes' | 'unknown' | 'always' | 'never';

export function passTier(o: Outcomes | undefined, minSamples: number): PassTier {
  if (o && o.correct > 0 && o.correct < o.n) return 'sometimes';
  if (!o || o.n < minSamples) return 'unknown';
  return o.correct >= o.n ? 'always' : 'never';
}

/** The estimated pass rate c / n, null without outcomes. */
export const passRate = (o: Outcomes | undefined): number | null => (o && o.n > 0 ? o.correct / o.n : null);

export interface CurriculumOrder<T> {
  /** The pool in draw order: sometimes, unknown, then always/never. */
  order: T[];
  /** Where the always/never problems start in `order`. */
  skipFrom: number;
  counts: Record<PassTier, number>;
}

/**
 * The step's draw order: a seeded shuffle of the pool (Fisher–Yates over all of it), then stably grouped by tier.
 */
export function curriculumOrder<T extends { id: string }>(
  pool: readonly T[],
  outcomes: ReadonlyMap<string, Outcomes>,
  minSamples: number,
  rng: Rng,
): CurriculumOrder<T> {
  const shuffled = [...pool];
  for (let i = 0; i < shuffled.length - 1; i++) {
    const j = i + Math.floor(rng() * (shuffled.length - i));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  const by: Record<PassTier, T[]> = { sometimes: [], unknown: [], always: [], never: [] };
  for (const p of shuffled) by[passTier(outcomes.get(p.id), minSamples)].push(p);
  // always and never interleaved in shuffled order: neither kind is preferred when the rest runs out.
  const skipped = shuffled.filter((p) => {
    const t = passTier(outcomes.get(p.id), minSamples);
    return t === 'always' || t === 'never';
  });
  return {
    order: [...by.sometimes, ...by.unknown, ...skipped],
    skipFrom: by.sometimes.length + by.unknown.length,
    counts: {
      sometimes: by.sometimes.length,
      unknown: by.unknown.length,
      always: by.always.length,
      never: by.never.length,
    },
  };
}

/** Outcome rows (one per problem, as a store's group-by gives them) as a map by problem id. */
export function outcomesById(
  rows: readonly { problemId: string; n: number; correct: number }[],
): Map<string, Outcomes> {
  return new Map(rows.map((r) => [r.problemId, { n: r.n, correct: r.correct }]));
}
