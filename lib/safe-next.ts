/**
 * Where to go after sign-in: the `next` parameter when it is a path on this site, else `/`. Browsers drop tabs and
 * newlines from URLs and read `\` as `/`, so `/\evil.example` and `/<TAB>/evil.example` are `//evil.example` to them,
 * another site. The value must start with one `/`, hold no control character or backslash, and, resolved as a
 * browser resolves it, stay on this origin; what is returned is that resolved path (the checked form is the one
 * followed). tests/unit/safe-next.test.ts.
 */
const ORIGIN = 'http://toolsmith.invalid';

export function safeNextPath(next: string | null | undefined): string {
  if (!next || next.length > 2000 || next[0] !== '/') return '/';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(next)) return '/';
  let url: URL;
  try {
    url = new URL(next, ORIGIN);
  } catch {
    return '/';
  }
  if (url.origin !== ORIGIN) return '/';
  const path = `${url.pathname}${url.search}${url.hash}`;
  // A path such as `/.//evil.example` resolves to `//evil.example`, which a browser reads as another host.
  return path.startsWith('/') && !path.startsWith('//') && !path.startsWith('/\\') ? path : '/';
}
