/**
 * Citations of the documentation, checked everywhere they are written: code, comments, tests, the README and docs/.
 *
 * The grammar (one citation; whitespace between the parts may include one line break, and a comment's leading
 * `*`, `//` or `#` on the next line is dropped):
 *
 *   citation := target [ §number ] whitespace '"' heading '"' [ anything ]
 *   target   := README | README.md | docs/<name>.md        (name: letters, digits, ".", "_", "-")
 *   heading  := up to 120 characters, no double quote
 *
 * e.g. `docs/scaling-out.md "Ray"`, `docs/deploying-and-security.md "Sign-in": why Better Auth` (what follows the
 * closing quote, a colon clause or an arrow, is free text), `docs/method.md §5 "TIS"`.
 *
 * - Without §: the heading must be a heading of that file (a Markdown `#` line outside code fences), compared as
 *   GitHub compares them: lowercased, punctuation dropped, spaces as hyphens (so case, backticks and a trailing
 *   colon do not matter).
 * - With §N: the file must have a heading numbered N (`## N. …`), and the quoted text must begin a heading or a
 *   bold paragraph lead (`**Text.**`) of the file: the section-numbered files cite their sub-parts by their opening
 *   words.
 * - Any mention of a `docs/<name>.md` path must name a file that exists.
 * - Relative Markdown links in README.md and docs/*.md must point to files that exist, and a `#anchor` to a heading
 *   of the file it names (GitHub's slug, `-1`, `-2` for repeated headings).
 *
 * A failure names file:line and what is missing. Scanned: the files tests/helpers/source-files.ts lists (the source
 * folders and root files; not node_modules, .next, data, generated code or build output).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { lineOf, ROOT, scannedFiles } from '../helpers/source-files.ts';

/** GitHub's anchor for a heading: lowercased, every character but letters, digits, spaces, `-` and `_` dropped. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

interface Heading {
  text: string;
  line: number;
}

function headingsOf(markdown: string): Heading[] {
  const out: Heading[] = [];
  let fence: string | null = null;
  markdown.split('\n').forEach((l, i) => {
    const f = /^\s*(```|~~~)/.exec(l);
    if (f) {
      if (fence === null) fence = f[1];
      else if (fence === f[1]) fence = null;
      return;
    }
    if (fence !== null) return;
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(l);
    if (m) out.push({ text: m[1], line: i + 1 });
  });
  return out;
}

/** Anchors of a file's headings, repeated ones numbered as GitHub numbers them. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const h of headingsOf(markdown)) {
    const s = slug(h.text);
    const n = seen.get(s) ?? 0;
    out.add(n === 0 ? s : `${s}-${n}`);
    seen.set(s, n + 1);
  }
  return out;
}

const cache = new Map<string, string | null>();
function readDoc(rel: string): string | null {
  if (!cache.has(rel)) {
    const abs = path.join(ROOT, rel);
    cache.set(rel, fs.existsSync(abs) && fs.statSync(abs).isFile() ? fs.readFileSync(abs, 'utf8') : null);
  }
  return cache.get(rel) ?? null;
}

/** A line break inside a citation, with the next line's comment marker. */
const BREAK = String.raw`\r?\n[ \t]*(?:\*|\/\/+|#+)?[ \t]*`;
const CITATION = new RegExp(
  String.raw`(?<![\w/.-])(README(?:\.md)?|docs\/[A-Za-z0-9._-]+\.md)(?:[ \t]+§[ \t]*(\d+))?(?:[ \t]+|[ \t]*${BREAK})"([^"\n]{1,120}(?:${BREAK}[^"\n]{0,120})?)"`,
  'g',
);
const DOC_PATH = /(?<![\w/.-])docs\/[A-Za-z0-9._-]+\.md\b/g;
const MD_LINK = /\[[^\]\n]*\]\(([^)\s]+)\)/g;

/** The problems with the citations in one file's text: `file:line: why`. */
export function citationProblems(file: string, text: string, read: (rel: string) => string | null = readDoc): string[] {
  const problems: string[] = [];
  for (const m of text.matchAll(CITATION)) {
    const target = m[1].startsWith('README') ? 'README.md' : m[1];
    const section = m[2];
    const quoted = m[3].replace(new RegExp(BREAK, 'g'), ' ').trim();
    const at = `${file}:${lineOf(text, m.index ?? 0)}`;
    const doc = read(target);
    if (doc === null) {
      problems.push(`${at}: cites ${target}, which does not exist`);
      continue;
    }
    const headings = headingsOf(doc);
    if (section === undefined) {
      if (!headings.some((h) => slug(h.text) === slug(quoted)))
        problems.push(`${at}: cites ${target} "${quoted}", which is not a heading of ${target}`);
      continue;
    }
    if (!headings.some((h) => new RegExp(`^${section}\\.\\s`).test(h.text)))
      problems.push(`${at}: cites ${target} §${section}, which ${target} has no heading for`);
    const starts = [...headings.map((h) => h.text), ...[...doc.matchAll(/^\*\*([^*\n]+)\*\*/gm)].map((b) => b[1])].map(
      (s) => s.toLowerCase(),
    );
    if (!starts.some((s) => s.startsWith(quoted.toLowerCase())))
      problems.push(
        `${at}: cites ${target} §${section} "${quoted}", which begins no heading or bold lead of ${target}`,
      );
  }
  for (const m of text.matchAll(DOC_PATH)) {
    if (read(m[0]) === null)
      problems.push(`${file}:${lineOf(text, m.index ?? 0)}: names ${m[0]}, which does not exist`);
  }
  if (file.endsWith('.md')) {
    for (const m of text.matchAll(MD_LINK)) {
      const href = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:
      const at = `${file}:${lineOf(text, m.index ?? 0)}`;
      const [p, anchor] = href.split('#', 2);
      const rel = p === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), p));
      const doc = read(rel);
      if (doc === null) {
        const abs = path.join(ROOT, rel);
        if (!(p !== '' && fs.existsSync(abs))) problems.push(`${at}: links to ${rel}, which does not exist`);
        continue;
      }
      if (anchor !== undefined && rel.endsWith('.md') && !anchorsOf(doc).has(anchor))
        problems.push(`${at}: links to ${rel}#${anchor}, which is not a heading of ${rel}`);
    }
  }
  return problems;
}

test('every citation of the README or docs/ names a file and a heading that exist', () => {
  const files = scannedFiles();
  assert.ok(files.includes('README.md') && files.some((f) => f.startsWith('docs/')), 'the scan sees the docs');
  const problems = files.flatMap((f) => citationProblems(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));
  assert.deepEqual(problems, [], `citations that point nowhere:\n${problems.join('\n')}`);
});

test('the checker finds what it must find', () => {
  const R = 'README';
  const D = `${'docs/'}x.md`; // written so that the scan of this file does not take it for a path
  const docs: Record<string, string> = {
    'README.md': '# Toolsmith\n\n## Sign in\n\n```bash\n# not a heading\n```\n',
    [D]: '# X\n\n## 5. GRPO-RoC\n\n### TIS: the mismatch\n\n**Why it matters.** text\n\n## `serve-model` nodes\n\n## Dup\n\n## Dup\n',
  };
  const read = (rel: string) => docs[rel] ?? null;
  const ok = [
    `${R} "Sign in"`,
    `${R}.md "sign in": and why`,
    `${D} "serve-model nodes"`,
    `${D} §5 "TIS"`,
    `${D} §5 "Why it matters"`,
    `// see ${D}\n// "5. GRPO-RoC"`,
    `${R}.md "Sign in"`,
    `${D} "Dup" → more`,
  ];
  for (const c of ok) assert.deepEqual(citationProblems('a.ts', c, read), [], c);
  const bad: [string, RegExp][] = [
    [`x\n${R} "First run"`, /^a\.ts:2: cites README\.md "First run", which is not a heading/],
    [`${R} "not a heading"`, /not a heading of README\.md/],
    [`${'docs/'}none.md "X"`, /cites docs\/none\.md, which does not exist/],
    [`${D} §7 "TIS"`, /has no heading for/],
    [`${D} §5 "Nothing"`, /begins no heading or bold lead/],
    [`mentions ${'docs/'}gone.md here`, /names docs\/gone\.md, which does not exist/],
  ];
  for (const [c, want] of bad) {
    const p = citationProblems('a.ts', c, read);
    assert.ok(
      p.some((x) => want.test(x)),
      `${c}: ${p.join('; ') || 'no problem found'}`,
    );
  }
  const md = (s: string) => citationProblems(`${'docs/'}y.md`, s, read);
  assert.deepEqual(md('[x](x.md#tis-the-mismatch) [y](../README.md#sign-in) [z](x.md#dup-1) [w](https://a.b/c)'), []);
  assert.match(md('[x](x.md#nope)').join(), /links to docs\/x\.md#nope, which is not a heading/);
  assert.match(md('[x](missing.md)').join(), /links to docs\/missing\.md, which does not exist/);
  assert.equal(slug('`serve-model` and sandbox nodes'), 'serve-model-and-sandbox-nodes');
  assert.equal(slug('bench:sandbox'), 'benchsandbox');
});
