/**
 * The runs a comparison shows (pure, so the unit tests can reach it): run ids from the URL, the page's query string,
 * and adding or removing a run under the cap; and the link to their trajectories side by side.
 */
import { MAX_TRACE_RUNS } from '../../contracts/traces.ts';

export const MAX_COMPARE = 8;
export const MIN_COMPARE = 2;

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

/** `/compare/traces?runs=a,b&problem=p&pick=t1,t2` (picks may be empty: that column shows its default). */
export function tracesHref(runIds: string[], problemId?: string | null, picks?: (string | null)[]): string {
  const q = new URLSearchParams();
  if (runIds.length) q.set('runs', runIds.slice(0, MAX_TRACE_RUNS).join(','));
  if (problemId) q.set('problem', problemId);
  if (picks?.some(Boolean)) q.set('pick', picks.map((p) => p ?? '').join(','));
  const s = q.toString();
  return s ? `/compare/traces?${s.replace(/%2C/g, ',')}` : '/compare/traces';
}
