/**
 * Pure logic of the rollout explorer: which rows of a fixed-row-height list are on screen, which pages of the
 * server's limit/offset list cover them, and how the filter form becomes trajectories.list's filter.
 */
import type { TrajectoryFilter } from '../../contracts/trajectory-query.ts';

/** Rows [start, end) to render: those in the viewport plus `overscan` either side, clamped to [0, total). */
export function visibleRange(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  total: number,
  overscan = 8,
): { start: number; end: number } {
  if (total <= 0 || rowHeight <= 0) return { start: 0, end: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const count = Math.ceil(Math.max(0, viewportHeight) / rowHeight) + 1;
  const start = Math.max(0, Math.min(total - 1, first) - overscan);
  const end = Math.min(total, first + count + overscan);
  return { start, end: Math.max(start, end) };
}

/** The page indexes (of `pageSize` rows each) that hold rows [start, end). */
export function pagesFor(range: { start: number; end: number }, pageSize: number): number[] {
  if (range.end <= range.start || pageSize <= 0) return [];
  const first = Math.floor(range.start / pageSize);
  const last = Math.floor((range.end - 1) / pageSize);
  const out: number[] = [];
  for (let p = first; p <= last; p++) out.push(p);
  return out;
}

/** Row `index` from loaded pages, or undefined while its page is not loaded. */
export function rowAt<T>(pages: ReadonlyMap<number, readonly T[]>, pageSize: number, index: number): T | undefined {
  return pages.get(Math.floor(index / pageSize))?.[index % pageSize];
}

/**
 * Keep at most `max` pages in the cache, those nearest the pages in view (a long scroll through 100,000 rows does
 * not keep them all). Returns the page indexes to drop.
 */
export function pagesToEvict(cached: Iterable<number>, inView: number[], max: number): number[] {
  const pages = [...cached];
  if (pages.length <= max) return [];
  const centre = inView.length ? (inView[0]! + inView[inView.length - 1]!) / 2 : 0;
  const keep = new Set(inView);
  const rest = pages.filter((p) => !keep.has(p)).sort((a, b) => Math.abs(b - centre) - Math.abs(a - centre));
  return rest.slice(0, pages.length - max);
}

export interface FilterForm {
  minReward: string;
  maxReward: string;
  selected: 'any' | 'yes' | 'no';
  toolError: 'any' | 'yes' | 'no';
  finishReason: string;
  search: string;
}

export const EMPTY_FILTER: FilterForm = {
  minReward: '',
  maxReward: '',
  selected: 'any',
  toolError: 'any',
  finishReason: '',
  search: '',
};

/** The form as trajectories.list's filter, and the fields that do not parse (shown next to them). */
export function toListFilter(f: FilterForm): {
  filter: TrajectoryFilter;
  errors: Partial<Record<keyof FilterForm, string>>;
} {
  const filter: TrajectoryFilter = {};
  const errors: Partial<Record<keyof FilterForm, string>> = {};
  const num = (field: 'minReward' | 'maxReward') => {
    const s = f[field].trim();
    if (s === '') return undefined;
    const n = Number(s);
    if (!Number.isFinite(n)) {
      errors[field] = 'not a number';
      return undefined;
    }
    return n;
  };
  const min = num('minReward'),
    max = num('maxReward');
  if (min !== undefined) filter.minReward = min;
  if (max !== undefined) filter.maxReward = max;
  if (min !== undefined && max !== undefined && min > max) errors.maxReward = 'below the minimum';
  if (f.selected !== 'any') filter.selected = f.selected === 'yes';
  if (f.toolError !== 'any') filter.hasToolError = f.toolError === 'yes';
  if (f.finishReason.trim()) filter.finishReason = f.finishReason.trim().slice(0, 100);
  if (f.search.trim()) filter.search = f.search.trim().slice(0, 500);
  return { filter, errors };
}

/** A stable key of a query (step, filter, sort): the page cache is dropped when it changes. */
export function queryKeyOf(q: { step: number | null; filter: TrajectoryFilter; sort: string }): string {
  const f = q.filter;
  return JSON.stringify([
    q.step,
    q.sort,
    f.minReward ?? null,
    f.maxReward ?? null,
    f.selected ?? null,
    f.hasToolError ?? null,
    f.finishReason ?? null,
    f.search ?? null,
  ]);
}

/** The two picked rows as the trace inspector's compare link, or null unless exactly two are picked. */
export function compareHref(picked: readonly string[]): string | null {
  if (picked.length !== 2) return null;
  return `/trajectories/${encodeURIComponent(picked[0]!)}?compare=${encodeURIComponent(picked[1]!)}`;
}

/** Toggle a row in the picked list, keeping the two most recent picks. */
export function togglePick(picked: readonly string[], id: string): string[] {
  if (picked.includes(id)) return picked.filter((p) => p !== id);
  return [...picked, id].slice(-2);
}
