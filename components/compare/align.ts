/**
 * Pure helpers of the comparison page, the evaluation page and the share dialog (no React, no network), so the
 * unit tests can reach them: run ids from the URL, series aligned by step, the recipe diff as a table, the
 * evaluation rows grouped for display, and the share dialog's expiry choices.
 */

export type Point = { step: number; value: number };
/** Series by run id, then by metric key. */
export type RunSeries = Record<string, Record<string, Point[]>>;

export const MAX_COMPARE = 8;
export const MIN_COMPARE = 2;

/** One line colour per run (8 at most), chosen to stay apart on the dark background. */
export const RUN_COLORS = ['#6aa9ff', '#f0883e', '#3fb950', '#d2a8ff', '#f85149', '#e3b341', '#39c5cf', '#ff7bc0'] as const;
export const runColor = (i: number) => RUN_COLORS[((i % RUN_COLORS.length) + RUN_COLORS.length) % RUN_COLORS.length];

/** `?runs=a,b,c` → distinct, non-empty ids in order, at most 8. Accepts repeated params too. */
export function parseRunIds(param: string | string[] | null | undefined): string[] {
  const raw = Array.isArray(param) ? param.join(',') : (param ?? '');
  const out: string[] = [];
  for (const part of raw.split(',')) {
    const id = part.trim();
    if (id && id.length <= 100 && !out.includes(id)) out.push(id);
    if (out.length >= MAX_COMPARE) break;
  }
  return out;
}

/** The query string of a comparison (ids are URL-safe by construction, but encode anyway). */
export function compareHref(runIds: string[]): string {
  return runIds.length ? `/compare?runs=${runIds.map(encodeURIComponent).join(',')}` : '/compare';
}

/** Add or remove a run from the selection, keeping order and the 8-run cap. */
export function toggleRun(selected: string[], id: string): string[] {
  if (selected.includes(id)) return selected.filter((x) => x !== id);
  if (selected.length >= MAX_COMPARE) return selected;
  return [...selected, id];
}

/** Sorted union of the keys of all runs that hold at least one point (keys with no data anywhere are dropped). */
export function unionKeys(series: RunSeries): string[] {
  const keys = new Set<string>();
  for (const perKey of Object.values(series)) for (const [k, pts] of Object.entries(perKey)) if (pts.length) keys.add(k);
  return [...keys].sort();
}

/** Keys to chart first: a reward/accuracy-like key when there is one, then the others in order, `n` in all. */
export function defaultKeys(keys: string[], n = 3): string[] {
  const score = (k: string) => (/reward/i.test(k) ? 0 : /pass|acc|correct/i.test(k) ? 1 : /loss/i.test(k) ? 2 : /len|token/i.test(k) ? 3 : 4);
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

export interface SpecDiffEntry { path: string; kind: 'changed' | 'added' | 'removed'; a?: unknown; b?: unknown }
export type DiffCell = { present: true; value: unknown; same: boolean } | { present: false; same: boolean };
export interface DiffRow { path: string; cells: DiffCell[] }

/** The value at a dotted path inside a JSON value; `found` false when any step of the path is missing. */
export function valueAt(root: unknown, path: string): { found: boolean; value?: unknown } {
  if (path === '') return { found: root !== undefined, value: root };
  let cur: unknown = root;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return { found: false };
    const next = (cur as Record<string, unknown>)[part];
    if (next === undefined) return { found: false };
    cur = next;
  }
  return { found: true, value: cur };
}

/**
 * The recipe differences of runs 2..n from run 1 (as `runs.compare` returns them) as rows: every path that
 * differs anywhere, with one cell per run, in run order. The first run's cell is its value; another run's cell
 * is its own value when its diff names the path, else the first run's value (marked `same`). Where one run's diff
 * names a whole subtree ("stages.2") and another a leaf inside it ("stages.2.lr"), the leaf is read inside.
 */
export function recipeDiffRows(runIds: string[], recipeDiff: { runId: string; diff: SpecDiffEntry[] }[], specs?: Record<string, unknown>): DiffRow[] {
  const base = runIds[0];
  const diffs = new Map(recipeDiff.map((d) => [d.runId, d.diff]));
  const paths = [...new Set(recipeDiff.flatMap((d) => d.diff.map((e) => e.path)))].sort(comparePaths);
  // The first run's value at a path: its spec when given, else what any diff entry says it is.
  const baseValue = (path: string): { found: boolean; value?: unknown } => {
    if (specs && base !== undefined && base in specs) return valueAt(specs[base], path);
    for (const d of recipeDiff) {
      const hit = lookup(d.diff, path, 'a');
      if (hit) return hit;
    }
    return { found: false };
  };
  return paths.map((path) => {
    const b0 = baseValue(path);
    const cells: DiffCell[] = runIds.map((id, i) => {
      if (i === 0) return b0.found ? { present: true, value: b0.value, same: false } : { present: false, same: false };
      if (specs && id in specs) {
        // Each run's own spec says best what it holds there.
        const v = valueAt(specs[id], path);
        const same = v.found === b0.found && (!v.found || JSON.stringify(v.value) === JSON.stringify(b0.value));
        return v.found ? { present: true, value: v.value, same } : { present: false, same };
      }
      const diff = diffs.get(id) ?? [];
      const own = lookup(diff, path, 'b');
      if (own) return own.found ? { present: true, value: own.value, same: false } : { present: false, same: false };
      // The run differs only below this path (another run's diff names the whole subtree): patch the base value.
      const below = diff.filter((e) => e.path.startsWith(`${path}.`) || (path === '' && e.path !== ''));
      if (below.length && b0.found) {
        const patched = JSON.parse(JSON.stringify(b0.value ?? null)) as unknown;
        for (const e of below) setAt(patched, path === '' ? e.path : e.path.slice(path.length + 1), e.kind === 'removed' ? undefined : e.b);
        return { present: true, value: patched, same: false };
      }
      return b0.found ? { present: true, value: b0.value, same: true } : { present: false, same: true };
    });
    return { path, cells };
  });
}

/** The `side` value at `path` from a diff, looking inside an entry for a prefix of the path; null if no entry covers it. */
function lookup(diff: SpecDiffEntry[], path: string, side: 'a' | 'b'): { found: boolean; value?: unknown } | null {
  let best: SpecDiffEntry | null = null;
  for (const e of diff) {
    const covers = e.path === path || e.path === '' || path.startsWith(`${e.path}.`);
    if (covers && (!best || e.path.length > best.path.length)) best = e;
  }
  if (!best) return null;
  const v = best[side];
  const absent = (side === 'a' && best.kind === 'added') || (side === 'b' && best.kind === 'removed');
  if (absent) return { found: false };
  const rest = best.path === path ? '' : best.path === '' ? path : path.slice(best.path.length + 1);
  return valueAt(v, rest);
}

/** Set (or, with undefined, delete) the value at a dotted path inside a JSON object, making containers as needed. */
function setAt(root: unknown, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = root as Record<string, unknown> | null;
  for (const part of parts.slice(0, -1)) {
    if (cur === null || typeof cur !== 'object') return;
    if (cur[part] === undefined || cur[part] === null || typeof cur[part] !== 'object') cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  if (cur === null || typeof cur !== 'object') return;
  const last = parts[parts.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(cur) && /^\d+$/.test(last)) cur.splice(Number(last), 1);
    else delete cur[last];
  } else cur[last] = value;
}

/** Dotted paths in natural order: numeric parts compare as numbers ("stages.2" before "stages.10"). */
export function comparePaths(a: string, b: string): number {
  const pa = a.split('.'), pb = b.split('.');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i]!, y = pb[i]!;
    if (x === y) continue;
    const nx = /^\d+$/.test(x) ? Number(x) : NaN, ny = /^\d+$/.test(y) ? Number(y) : NaN;
    if (!Number.isNaN(nx) && !Number.isNaN(ny)) return nx - ny;
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

/** A JSON value as one short line for a table cell. */
export function formatValue(v: unknown, max = 120): string {
  let s: string;
  if (typeof v === 'string') s = JSON.stringify(v);
  else if (v === undefined) s = '—';
  else {
    try { s = JSON.stringify(v) ?? String(v); } catch { s = String(v); }
  }
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A metric value for a tooltip or table: integers as is, others with 4 significant digits. */
export function formatNumber(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(3) : String(Number(v.toPrecision(4)));
}

// ---- evaluation page ---------------------------------------------------------------------------------------

export const pct = (x: number | null | undefined, digits = 1) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : `${(100 * x).toFixed(digits)}%`);

/** Benchmark names compare loosely: "aime24", "AIME 24" and "AIME-24" are one; "math500" matches "MATH-500". */
export const benchmarkKey = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** The reference score (percent) of `model` on a benchmark of ours, or null when the report has no such column. */
export function referenceScore(ref: { benchmarks: readonly string[]; models: readonly { name: string; scores: readonly number[] }[] }, model: string, benchmark: string): number | null {
  const i = ref.benchmarks.findIndex((b) => benchmarkKey(b) === benchmarkKey(benchmark));
  const m = ref.models.find((x) => x.name === model);
  if (i < 0 || !m) return null;
  return m.scores[i] ?? null;
}

export interface EvalRowLike { step: number; benchmark: string; pass1: number }

/** Distinct eval steps, ascending. */
export function evalSteps(rows: EvalRowLike[]): number[] {
  return [...new Set(rows.map((r) => r.step))].sort((a, b) => a - b);
}

/** pass@1 over steps as chart rows: one row per step, one column per benchmark (in percent; null where missing). */
export function pass1OverSteps(rows: EvalRowLike[]): { benchmarks: string[]; data: ({ step: number } & Record<string, number | null>)[] } {
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

// ---- share dialog -----------------------------------------------------------------------------------------

export const EXPIRY_OPTIONS = [
  { value: 'none', label: 'Never expires', seconds: undefined },
  { value: '1d', label: '1 day', seconds: 24 * 3600 },
  { value: '7d', label: '7 days', seconds: 7 * 24 * 3600 },
  { value: '30d', label: '30 days', seconds: 30 * 24 * 3600 },
] as const;
export type ExpiryChoice = (typeof EXPIRY_OPTIONS)[number]['value'];

export function expirySeconds(choice: string): number | undefined {
  return EXPIRY_OPTIONS.find((o) => o.value === choice)?.seconds;
}

/** The full URL of a share path on this origin, without a doubled slash. */
export function shareUrl(origin: string, path: string): string {
  return `${origin.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

export type ShareScope = 'run' | 'step' | 'trajectory' | 'compare';
export type ShareTargetInput =
  | { scope: 'run'; target: { runId: string } }
  | { scope: 'step'; target: { runId: string; step: number } }
  | { scope: 'trajectory'; target: { trajectoryId: string } }
  | { scope: 'compare'; target: { runIds: string[] } };

/** Whether a listed link (its stored target) is a link to the same thing the dialog shares. */
export function sameTarget(want: ShareTargetInput, link: { scope: string; target: unknown }): boolean {
  if (link.scope !== want.scope) return false;
  const t = (link.target ?? {}) as Record<string, unknown>;
  switch (want.scope) {
    case 'run': return t.runId === want.target.runId;
    case 'step': return t.runId === want.target.runId && t.step === want.target.step;
    case 'trajectory': return t.trajectoryId === want.target.trajectoryId;
    case 'compare': {
      const ids = Array.isArray(t.runIds) ? (t.runIds as unknown[]) : [];
      return ids.length === want.target.runIds.length && want.target.runIds.every((id) => ids.includes(id));
    }
  }
}

/** The run a dialog's list can be narrowed to on the server (`share.list({runId})`); none for a trajectory. */
export function listRunId(want: ShareTargetInput): string | undefined {
  switch (want.scope) {
    case 'run': case 'step': return want.target.runId;
    case 'compare': return want.target.runIds[0];
    case 'trajectory': return undefined;
  }
}

/** What the link shares, in words. */
export function describeTarget(scope: string, target: unknown): string {
  const t = (target ?? {}) as Record<string, unknown>;
  switch (scope) {
    case 'run': return `run ${String(t.runId)}`;
    case 'step': return `run ${String(t.runId)}, step ${String(t.step)}`;
    case 'trajectory': return `trajectory ${String(t.trajectoryId)}`;
    case 'compare': return `${Array.isArray(t.runIds) ? t.runIds.length : '?'} runs: ${Array.isArray(t.runIds) ? t.runIds.join(', ') : ''}`;
    default: return scope;
  }
}

/** A tRPC error's code, if it has one. */
export const errorCode = (e: unknown): string | undefined => (e as { data?: { code?: string } } | null)?.data?.code;
