/**
 * Leaf differences between two JSON values (two recipe specs): what the designer's "compare versions" and the
 * run comparison show. Pure; no database.
 */

export interface SpecDiff {
  /** Dotted path from the root: "stages.1.lr", "eval.datasets.0.n"; "" for the root itself. */
  path: string;
  /** `changed`: both sides have a value; `added`: only b has one; `removed`: only a has one. */
  kind: 'changed' | 'added' | 'removed';
  /** The value in a (absent when kind is 'added'). */
  a?: unknown;
  /** The value in b (absent when kind is 'removed'). */
  b?: unknown;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Every leaf where `a` and `b` differ. Objects are compared key by key (keys sorted, so key order never matters;
 * a key whose value is undefined counts as absent), arrays index by index (an extra element on one side is
 * `added`/`removed`). Where both sides are objects, or both arrays, the walk goes inside; anywhere else the two
 * values are compared as a whole, so a stage that exists on one side only is one entry holding the whole stage,
 * and a value that changes type (number → object) is one `changed` entry.
 */
export function diffSpecs(a: unknown, b: unknown): SpecDiff[] {
  const out: SpecDiff[] = [];
  walk(a, b, [], out);
  return out;
}

function walk(a: unknown, b: unknown, path: string[], out: SpecDiff[]): void {
  const p = path.join('.');
  if (a === undefined && b === undefined) return;
  if (a === undefined) {
    out.push({ path: p, kind: 'added', b });
    return;
  }
  if (b === undefined) {
    out.push({ path: p, kind: 'removed', a });
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++)
      walk(i < a.length ? a[i] : undefined, i < b.length ? b[i] : undefined, [...path, String(i)], out);
    return;
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) walk(a[k], b[k], [...path, k], out);
    return;
  }
  if (!sameLeaf(a, b)) out.push({ path: p, kind: 'changed', a, b });
}

function sameLeaf(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  // 0 and -0 are the same number in JSON; an array against an object (never entered by the walk) always differs.
  return typeof a === 'number' && typeof b === 'number' && a === b;
}
