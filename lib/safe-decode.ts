/**
 * A route param, percent-decoded once. Next may hand params over still encoded; a malformed escape (`%zz`,
 * a cut UTF-8 sequence) is passed on as it is rather than thrown, so the page answers "not found", never a 500.
 * (The request gate, server/http/gate.ts, already refuses such paths with 400; this keeps pages safe without it.)
 */
export function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
