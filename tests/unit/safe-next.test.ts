// The sign-in page's `next` (lib/safe-next.ts): same-origin paths only. Each vector is given as the page receives it
// (useSearchParams has already percent-decoded the query once), and the answer is checked the way a browser would
// follow it: resolved against the page's origin, the result must stay on that origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { safeNextPath } from '../../lib/safe-next.ts';

const ORIGIN = 'https://toolsmith.example';
/** Where `location.href = value` takes a browser on ORIGIN (the WHATWG parser: tabs/newlines dropped, `\` as `/`). */
const followed = (value: string) => new URL(value, `${ORIGIN}/sign-in?next=x`).origin;

/** The query as a link carries it → what the page reads. */
const fromQuery = (query: string) => new URLSearchParams(query).get('next');

test('same-origin paths are kept, query and fragment included', () => {
  for (const p of [
    '/',
    '/recipes',
    '/runs/r_abc/explorer?step=3#t1',
    '/s/tok',
    '/a%20b',
    '/%5C',
    '/javascript:alert(1)',
    '/recipes/a..b',
  ]) {
    assert.equal(safeNextPath(p), p, p);
  }
  assert.equal(safeNextPath('/runs/../recipes'), '/recipes', 'the resolved form is what is followed');
});

test('anything that would leave the origin, or is not a path, becomes /', () => {
  const vectors = [
    null,
    undefined,
    '',
    'recipes',
    './recipes',
    '../x',
    '//evil.example',
    '///evil.example',
    '//evil.example/%2F..',
    '/\\evil.example',
    '\\\\evil.example',
    '/\\/evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    '/\r\n/evil.example',
    '\t//evil.example',
    ' //evil.example',
    '/ /evil.example'.replace(' ', '\u0000'),
    '/.//evil.example',
    '/x/..//evil.example',
    '/%2e/..//evil.example',
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    ' javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:x',
    'https://evil.example',
    'http:evil.example',
    'https:/evil.example',
    'http://toolsmith.invalid/x',
    'mailto:a@b',
    '/\u007f/evil.example',
    `/${'a'.repeat(3000)}`,
  ];
  for (const v of vectors) assert.equal(safeNextPath(v), '/', JSON.stringify(v));
});

test("the reviewer's vectors and encoded variants, as a link delivers them", () => {
  const queries = [
    'next=/%5Cevil.example',
    'next=/%09/evil.example',
    'next=%2F%2Fevil.example',
    'next=/%0A/evil.example',
    'next=/%0D/evil.example',
    'next=%2F%5Cevil.example',
    'next=%5C%5Cevil.example',
    'next=/%5C/evil.example',
    'next=%09%2F%2Fevil.example',
    'next=/.%2F%2Fevil.example',
    'next=javascript%3Aalert(1)',
    'next=%6A%61%76%61script:alert(1)',
    'next=https%3A%2F%2Fevil.example',
    'next=/%00/evil.example',
  ];
  for (const q of queries) {
    const raw = fromQuery(q)!;
    const out = safeNextPath(raw);
    assert.equal(followed(out), ORIGIN, `${q} → ${JSON.stringify(out)}`);
    assert.equal(out, '/', `${q} → ${JSON.stringify(out)}`);
  }
  // Encoded twice: the page reads a literal %5C, which a browser keeps in the path (same origin), so it may stay.
  const twice = safeNextPath(fromQuery('next=/%255Cevil.example'));
  assert.equal(twice, '/%5Cevil.example');
  assert.equal(followed(twice), ORIGIN);
});

test('whatever it returns, a browser following it stays on the origin', () => {
  // A brute sweep: two-character prefixes of troublesome characters in front of a host.
  const parts = ['/', '\\', '\t', '\n', '%2F', '%5C', '.', ':', '@', ' ', '#', '?', '%09'];
  for (const a of parts)
    for (const b of parts)
      for (const c of parts) {
        const v = `${a}${b}${c}evil.example`;
        for (const candidate of [
          v,
          (() => {
            try {
              return decodeURIComponent(v);
            } catch {
              return v;
            }
          })(),
        ]) {
          const out = safeNextPath(candidate);
          assert.equal(followed(out), ORIGIN, `${JSON.stringify(candidate)} → ${JSON.stringify(out)}`);
          assert.ok(out.startsWith('/') && !out.startsWith('//'), JSON.stringify(out));
        }
      }
});
