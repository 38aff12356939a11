/**
 * Merge points into a series keyed by step: a point for a step already present replaces it, so the same point
 * arriving twice (snapshot, then stream) is harmless. Pure; returns a new array sorted by step.
 */
export function mergePoints<P extends { step: number }>(series: P[], points: P[]): P[] {
  if (points.length === 0) return series;
  const last = series[series.length - 1];
  // Fast path: live points usually come in order after the last one.
  if (points.every((p, i) => p.step > (i === 0 ? (last?.step ?? -Infinity) : points[i - 1].step)))
    return [...series, ...points];
  const byStep = new Map(series.map((p) => [p.step, p]));
  for (const p of points) byStep.set(p.step, p);
  return [...byStep.values()].sort((a, b) => a.step - b.step);
}
