/** The evaluation page's rows grouped for display: steps, pass@1 over steps, finish reasons, percentages. Pure. */

export const pct = (x: number | null | undefined, digits = 1) =>
  x === null || x === undefined || !Number.isFinite(x) ? '—' : `${(100 * x).toFixed(digits)}%`;

export interface EvalRowLike {
  step: number;
  benchmark: string;
  pass1: number;
}

/** Distinct eval steps, ascending. */
export function evalSteps(rows: EvalRowLike[]): number[] {
  return [...new Set(rows.map((r) => r.step))].sort((a, b) => a - b);
}

/** pass@1 over steps as chart rows: one row per step, one column per benchmark (in percent; null where missing). */
export function pass1OverSteps(rows: EvalRowLike[]): {
  benchmarks: string[];
  data: ({ step: number } & Record<string, number | null>)[];
} {
  const benchmarks = [...new Set(rows.map((r) => r.benchmark))].sort();
  const data = evalSteps(rows).map((step) => {
    const row = { step } as { step: number } & Record<string, number | null>;
    for (const b of benchmarks) row[b] = null;
    for (const r of rows) if (r.step === step) row[r.benchmark] = Number((100 * r.pass1).toFixed(2));
    return row;
  });
  return { benchmarks, data };
}

/** Finish reasons as "stop 90% · length 10%" (largest first), from counts. */
export function finishReasonsText(counts: Record<string, number> | null | undefined): string {
  if (!counts) return '—';
  const total = Object.values(counts).reduce((s, n) => s + n, 0);
  if (!total) return '—';
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => `${k} ${Math.round((100 * n) / total)}%`)
    .join(' · ');
}
