/**
 * Smoothing for run charts: the debiased ("time weighted") exponential moving average W&B draws by default.
 *
 * With smoothing weight w in [0, 1) and points v_1..v_n in step order:
 *
 *     last_0 = 0
 *     last_i = last_{i-1} · w_i + (1 − w_i) · v_i
 *     smoothed_i = last_i / (1 − Π_{j≤i} w_j)            (the debias: without it the curve starts pulled to 0)
 *
 * With evenly spaced steps every w_i = w, so the debias factor is the familiar 1 − w^i. "Time weighted" is how
 * uneven spacing is handled: a point that comes after a gap of Δ steps (in units of the series' smallest step
 * gap, its logging cadence) decays the history by w^Δ, so a gap counts as the Δ evenly spaced points it stands for. w = 0 returns the
 * values unchanged. Non-finite values are skipped (they keep their place with value null and do not move the
 * average). Pure.
 */
export interface Point {
  step: number;
  value: number;
}

export function smoothingWeight(w: number): number {
  if (!Number.isFinite(w) || w <= 0) return 0;
  return Math.min(w, 0.999);
}

export function debiasedEma<P extends Point>(
  points: readonly P[],
  weight: number,
): (P & { smoothed: number | null })[] {
  const w = smoothingWeight(weight);
  if (w === 0) return points.map((p) => ({ ...p, smoothed: Number.isFinite(p.value) ? p.value : null }));
  // The unit of "time": the smallest positive gap between consecutive points, the series' logging cadence
  // (1 for a dense series; a skipped non-finite point still counts towards it).
  let unit = Infinity;
  let prevStep: number | null = null;
  for (const p of points) {
    if (prevStep !== null && p.step > prevStep) unit = Math.min(unit, p.step - prevStep);
    prevStep = p.step;
  }
  if (!Number.isFinite(unit)) unit = 1;
  let last = 0;
  let decay = 1; // Π w_j so far: 1 − decay is the debias denominator
  prevStep = null;
  return points.map((p) => {
    if (!Number.isFinite(p.value)) return { ...p, smoothed: null };
    const gap = prevStep === null ? 1 : Math.max(0, p.step - prevStep) / unit;
    const wi = w ** gap;
    last = last * wi + (1 - wi) * p.value;
    decay *= wi;
    prevStep = p.step;
    const denom = 1 - decay;
    return { ...p, smoothed: denom > 0 ? last / denom : p.value };
  });
}
