/**
 * The recipe differences of the compared runs (as `runs.compare` returns them) as a table: one row per differing
 * dotted path, one cell per run. Pure.
 */
import type { SpecDiff } from '../../contracts/recipe-diff.ts';

export type DiffCell = { present: true; value: unknown; same: boolean } | { present: false; same: boolean };
export interface DiffRow {
  path: string;
  cells: DiffCell[];
}

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
export function recipeDiffRows(
  runIds: string[],
  recipeDiff: { runId: string; diff: SpecDiff[] }[],
  specs?: Record<string, unknown>,
): DiffRow[] {
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
        for (const e of below)
          setAt(patched, path === '' ? e.path : e.path.slice(path.length + 1), e.kind === 'removed' ? undefined : e.b);
        return { present: true, value: patched, same: false };
      }
      return b0.found ? { present: true, value: b0.value, same: true } : { present: false, same: true };
    });
    return { path, cells };
  });
}

/** The `side` value at `path` from a diff, looking inside an entry for a prefix of the path; null if no entry covers it. */
function lookup(diff: SpecDiff[], path: string, side: 'a' | 'b'): { found: boolean; value?: unknown } | null {
  let best: SpecDiff | null = null;
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
  const pa = a.split('.'),
    pb = b.split('.');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i]!,
      y = pb[i]!;
    if (x === y) continue;
    const nx = /^\d+$/.test(x) ? Number(x) : NaN,
      ny = /^\d+$/.test(y) ? Number(y) : NaN;
    if (!Number.isNaN(nx) && !Number.isNaN(ny)) return nx - ny;
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}
