/** Student t quantiles (two-sided 95%) by degrees of freedom: with 3 seeds the interval is honest, and wide. */
const T95 = [Number.NaN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];

/** The mean of xs and its 95% t interval (n − 1 degrees of freedom; 1.96 past 10), for the seed-level benches. */
export function tInterval(xs: number[]): { mean: number; lo: number; hi: number } {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean, lo: Number.NaN, hi: Number.NaN };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  const h = ((T95[n - 1] ?? 1.96) * sd) / Math.sqrt(n);
  return { mean, lo: mean - h, hi: mean + h };
}
