/** Our benchmarks against the report's reference table. Pure. */

/** Benchmark names compare loosely: "aime24", "AIME 24" and "AIME-24" are one; "math500" matches "MATH-500". */
export const benchmarkKey = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** The reference score (percent) of `model` on a benchmark of ours, or null when the report has no such column. */
export function referenceScore(
  ref: { benchmarks: readonly string[]; models: readonly { name: string; scores: readonly number[] }[] },
  model: string,
  benchmark: string,
): number | null {
  const i = ref.benchmarks.findIndex((b) => benchmarkKey(b) === benchmarkKey(benchmark));
  const m = ref.models.find((x) => x.name === model);
  if (i < 0 || !m) return null;
  return m.scores[i] ?? null;
}
