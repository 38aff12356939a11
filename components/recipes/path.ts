/**
 * Path-based get/set on the designer's spec (a plain JSON object). A path is dotted like the validation errors'
 * ("stages.1.roc.enabled"); numeric parts index arrays. Setting returns a new object (the input is not mutated),
 * and setting `undefined` removes the key, so an emptied form field falls back to the schema's default.
 */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Spec = Record<string, unknown>;

export function splitPath(path: string): string[] {
  return path === '' ? [] : path.split('.');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The value at `path`, or undefined where any step is missing. */
export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const key of splitPath(path)) {
    if (Array.isArray(cur)) cur = cur[Number(key)];
    else if (isObject(cur)) cur = cur[key];
    else return undefined;
  }
  return cur;
}

/** A copy of `obj` with `path` set to `value` (removed when undefined); missing containers are created. */
export function setPath<T>(obj: T, path: string, value: unknown): T {
  return setAt(obj, splitPath(path), value) as T;
}

function setAt(cur: unknown, keys: string[], value: unknown): unknown {
  if (keys.length === 0) return value;
  const [key, ...rest] = keys as [string, ...string[]];
  if (Array.isArray(cur)) {
    const i = Number(key);
    const next = [...cur];
    if (rest.length === 0 && value === undefined) next.splice(i, 1);
    else next[i] = setAt(cur[i], rest, value);
    return next;
  }
  const base: Record<string, unknown> = isObject(cur) ? { ...cur } : {};
  if (rest.length === 0 && value === undefined) {
    delete base[key];
    return base;
  }
  const child = base[key];
  base[key] = setAt(child === undefined && /^\d+$/.test(rest[0] ?? '') ? [] : child, rest, value);
  return base;
}

/** Move array element `from` to `to` at `path` (stage reordering). */
export function movePath<T>(obj: T, path: string, from: number, to: number): T {
  const arr = getPath(obj, path);
  if (!Array.isArray(arr) || to < 0 || to >= arr.length || from === to) return obj;
  const next = [...arr];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item);
  return setPath(obj, path, next);
}

/** JSON with object keys sorted: two equal specs compare equal whatever their key order. */
export function stableJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    isObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );
}

/** The JSON view's text of a spec. */
export function specToJson(spec: unknown): string {
  return JSON.stringify(spec, null, 2);
}

/** Parse the JSON view's text: a spec must be one JSON object. */
export function parseSpecJson(text: string): { ok: true; spec: Spec } | { ok: false; error: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  if (!isObject(v)) return { ok: false, error: 'a recipe must be a JSON object ({ … })' };
  return { ok: true, spec: v };
}

/** Group validation errors by path (a field shows the ones at its own path). */
export function errorsByPath(errors: readonly { path: string; message: string }[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const e of errors) m.set(e.path, [...(m.get(e.path) ?? []), e.message]);
  return m;
}
