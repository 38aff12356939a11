/**
 * Imported text made storable on both databases, in one place before storing (store-foreign.ts, the importer's
 * problems): PostgreSQL refuses a NUL in a text or JSON field (and a lone UTF-16 surrogate in JSON), which failed
 * the whole batch and every resend of it; SQLite kept them and the viewers choked later. A NUL and a lone surrogate
 * become U+FFFD; invalid UTF-8 bytes already did when the file's bytes were decoded. Pure.
 */

const REPLACEMENT = '\uFFFD';
// A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function storableText(s: string): string {
  return s.replace(UNSTORABLE, REPLACEMENT);
}

/** Every string of a JSON-like value (object keys included) made storable; numbers, booleans and null as they are. */
export function storableStrings<T>(v: T): T {
  if (typeof v === 'string') return storableText(v) as T;
  if (Array.isArray(v)) return v.map((x) => storableStrings(x)) as T;
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [storableText(k), storableStrings(x)])) as T;
  return v;
}
