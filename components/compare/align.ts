/** Several runs' series of one metric on a shared step axis, and which metrics to chart first. Pure. */

export type Point = { step: number; value: number };
/** Series by run id, then by metric key. */
export type RunSeries = Record<string, Record<string, Point[]>>;

/** Sorted union of the keys of all runs that hold at least one point (keys with no data anywhere are dropped). */
export function unionKeys(series: RunSeries): string[] {
  const keys = new Set<string>();
  for (const perKey of Object.values(series))
    for (const [k, pts] of Object.entries(perKey)) if (pts.length) keys.add(k);
  return [...keys].sort();
}

/** Keys to chart first: a reward/accuracy-like key when there is one, then the others in order, `n` in all. */
export function defaultKeys(keys: string[], n = 3): string[] {
  const score = (k: string) =>
    /reward/i.test(k) ? 0 : /pass|acc|correct/i.test(k) ? 1 : /loss/i.test(k) ? 2 : /len|token/i.test(k) ? 3 : 4;
  return [...keys].sort((a, b) => score(a) - score(b) || a.localeCompare(b)).slice(0, n);
}

export type AlignedRow = { step: number } & Record<string, number | null>;

/**
 * One key of several runs as chart rows on a shared step axis: one row per step any run logged, with each run's
 * value under its id (null where that run has no point at that step; the chart joins across gaps). When a run
 * logged a step twice, the last point wins.
 */
export function alignByStep(series: RunSeries, runIds: string[], key: string): AlignedRow[] {
  const rows = new Map<number, AlignedRow>();
  for (const id of runIds) {
    for (const p of series[id]?.[key] ?? []) {
      if (!Number.isFinite(p.step) || !Number.isFinite(p.value)) continue;
      let row = rows.get(p.step);
      if (!row) {
        row = { step: p.step } as AlignedRow;
        for (const r of runIds) row[r] = null;
        rows.set(p.step, row);
      }
      row[id] = p.value;
    }
  }
  return [...rows.values()].sort((a, b) => a.step - b.step);
}
