/** Several runs' series of one metric on a shared x axis, and which metrics to chart first. Pure. */

/** A metric point; `time` (epoch ms, when it was logged) where the server sent it. */
export type Point = { step: number; value: number; time?: number };
/** Series by run id, then by metric key. */
export type RunSeries = Record<string, Record<string, Point[]>>;

/** Sorted union of the keys of all runs that hold at least one point (keys with no data anywhere are dropped). */
export function unionKeys(series: RunSeries): string[] {
  const keys = new Set<string>();
  for (const perKey of Object.values(series))
    for (const [k, pts] of Object.entries(perKey)) if (pts.length) keys.add(k);
  return [...keys].sort();
}

/** Sorted keys every one of `runIds` holds points of: what a comparison can actually compare. */
export function sharedKeys(series: RunSeries, runIds: string[]): string[] {
  return unionKeys(series).filter((k) => runIds.every((id) => (series[id]?.[k]?.length ?? 0) > 0));
}

/** Keys to chart first: a reward/accuracy-like key when there is one, then the others in order, `n` in all. */
export function defaultKeys(keys: string[], n = 3): string[] {
  const score = (k: string) =>
    /reward/i.test(k) ? 0 : /pass|acc|correct/i.test(k) ? 1 : /loss/i.test(k) ? 2 : /len|token/i.test(k) ? 3 : 4;
  return [...keys].sort((a, b) => score(a) - score(b) || a.localeCompare(b)).slice(0, n);
}

/**
 * The charts a comparison opens with: among the keys all the runs share (a key only one run logged draws one line,
 * which compares nothing), else among all of them.
 */
export function defaultCompareKeys(series: RunSeries, runIds: string[], n = 3): string[] {
  const shared = sharedKeys(series, runIds);
  return defaultKeys(shared.length ? shared : unionKeys(series), n);
}

/**
 * What the x axis counts. Runs of different recipes line up differently: by the global step (stages included), by
 * steps since each run's first logged step (a resumed or imported run starting late), by RL step (from the start of
 * each run's first RL stage, after however long an SFT stage), or by wall time since each run's first point.
 */
export const X_AXES = [
  { id: 'step', label: 'step' },
  { id: 'relative', label: "steps since the run's first" },
  { id: 'rl', label: 'RL step' },
  { id: 'wall', label: 'wall time (minutes)' },
] as const;
export type XAxisKind = (typeof X_AXES)[number]['id'];

/** Where each run's axis starts. */
export interface AxisOrigin {
  firstStep: number;
  /** Epoch ms of its first point; null when no point has a time. */
  firstTime: number | null;
  /** Global step where its first RL stage starts; null when it has none. */
  rlStart: number | null;
}

export function axisOrigin(perKey: Record<string, Point[]>, stages: { type: string; startStep: number }[]): AxisOrigin {
  let firstStep = Number.POSITIVE_INFINITY;
  let firstTime = Number.POSITIVE_INFINITY;
  for (const pts of Object.values(perKey))
    for (const p of pts) {
      if (Number.isFinite(p.step)) firstStep = Math.min(firstStep, p.step);
      if (p.time !== undefined && Number.isFinite(p.time)) firstTime = Math.min(firstTime, p.time);
    }
  return {
    firstStep: Number.isFinite(firstStep) ? firstStep : 0,
    firstTime: Number.isFinite(firstTime) ? firstTime : null,
    rlStart: stages.find((s) => s.type === 'rl')?.startStep ?? null,
  };
}

/** A point's x on `axis`, or null when it has none there (before the RL stage, no time). */
export function axisX(axis: XAxisKind, p: Point, o: AxisOrigin): number | null {
  switch (axis) {
    case 'step':
      return p.step;
    case 'relative':
      return p.step - o.firstStep;
    case 'rl':
      return o.rlStart === null || p.step < o.rlStart ? null : p.step - o.rlStart + 1;
    case 'wall':
      return p.time === undefined || o.firstTime === null ? null : (p.time - o.firstTime) / 60_000;
  }
}

export type AlignedRow = { x: number } & Record<string, number | null>;

/**
 * One key of several runs as chart rows on a shared x axis: one row per x any run has a point at, with each run's
 * value under its id (null where that run has none there; the chart joins across gaps). When a run has two points
 * at one x, the last wins.
 */
export function alignBy(
  series: RunSeries,
  runIds: string[],
  key: string,
  x: (runId: string, p: Point) => number | null = (_, p) => p.step,
): AlignedRow[] {
  const rows = new Map<number, AlignedRow>();
  for (const id of runIds) {
    for (const p of series[id]?.[key] ?? []) {
      if (!Number.isFinite(p.step) || !Number.isFinite(p.value)) continue;
      const at = x(id, p);
      if (at === null || !Number.isFinite(at)) continue;
      let row = rows.get(at);
      if (!row) {
        row = { x: at } as AlignedRow;
        for (const r of runIds) row[r] = null;
        rows.set(at, row);
      }
      row[id] = p.value;
    }
  }
  return [...rows.values()].sort((a, b) => a.x - b.x);
}
