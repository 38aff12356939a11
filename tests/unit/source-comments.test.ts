/**
 * Source files say what a thing is and why, not which issue asked for it, and they name only files that exist.
 *
 * Scanned: the files tests/helpers/source-files.ts lists, but README.md and docs/ (prose, checked by
 * tests/unit/doc-citations.test.ts) and npm's package-lock.json files (written by npm). Each rule reads the whole
 * text (comments, strings and code alike). A failure names file:line and what is wrong.
 *
 * (a) No issue numbers: `issue N`, `Issues N`, `issue #N` (any case, whatever follows: requirement, req) and `(#N)`
 *     fail. Another project's issue stays when it names that project: `owner/repo#N`, `owner/repo issue N` and URLs
 *     (`…/issues/N`) are not flagged. prisma/migrations/ is exempt: a migration's text is checksummed when it is
 *     applied (server/db/migrate.ts), so editing one would stop every database that has it from starting.
 * (b) No paths to missing files: a path into one of the top-level folders (FOLDERS in the helper: `server/…`,
 *     `tests/…`, `.ci/…`), not the tail of a longer path (`../server/…`, `@/server/…`, a URL), whose last part has a
 *     lowercase extension (`.ts`, `.test.ts`, `.py`; not `module.Class`), must exist. The path ends at the first
 *     character other than letters, digits, `_ . - / [ ]`, and a trailing `.` is dropped, so `:line`, `,` or a full
 *     stop after it do not count. Not checked:
 *     - patterns and templates: a path that runs into `*`, `<`, `{` or `$` (`tests/unit/*.test.ts`, `runs/<id>/`);
 *     - files made at run time: under a folder .gitignore names with a `/` at its end (`bench/out/`,
 *       `server/db/generated/`);
 *     - made-up examples: a one-letter file name (`server/x.ts`, `e2e/a.spec.ts`), as checkers' own tests use;
 *     - another repository's files: a path right after that repository's `owner/repo` (or `owner/repo's`), a
 *       comment's line break between them allowed (`laude-institute/harbor's docs/rfcs/…`), and a path pinned to
 *       a commit with `@` (`tests/test_all.py@cf14bc4`).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { FOLDERS, lineOf, ROOT, scannedFiles } from '../helpers/source-files.ts';

/** Source, as opposed to the prose and generated files the rules leave alone. */
const isSource = (f: string) => f !== 'README.md' && !f.startsWith('docs/') && !f.endsWith('package-lock.json');

/** A line break inside a comment, with the next line's comment marker. */
const BREAK = String.raw`\r?\n[ \t]*(?:\*|\/\/+|#+|--)?[ \t]*`;
const ISSUE = new RegExp(String.raw`\bissues?(?:[ \t]+|[ \t]*${BREAK})#?\d+|\(#\d+\)`, 'gi');
/** Text ending in another repository's name (`owner/repo`, `owner/repo's`), the owner not one of our folders. */
const AFTER_REPO = /(?<![\w./-])([\w.-]+)\/[\w.-]+(?:'s)?[ \t]*$/;
const afterUpstreamRepo = (before: string) => {
  const m = AFTER_REPO.exec(before.replace(new RegExp(`${BREAK}$`), ' '));
  return m !== null && !FOLDERS.includes(m[1]!);
};

/** The issue numbers in one file's text: `file:line: why`. */
export function issueProblems(file: string, text: string): string[] {
  if (file.startsWith('prisma/migrations/')) return [];
  const problems: string[] = [];
  for (const m of text.matchAll(ISSUE)) {
    const index = m.index ?? 0;
    const lineStart = text.lastIndexOf('\n', index - 1) + 1;
    if (afterUpstreamRepo(text.slice(lineStart, index))) continue;
    problems.push(`${file}:${lineOf(text, index)}: names an issue number ("${m[0].replace(/\s+/g, ' ')}")`);
  }
  return problems;
}

const PATH = new RegExp(
  String.raw`(?<![\w./@~-])(?:${FOLDERS.map((f) => f.replace('.', '\\.')).join('|')})\/[\w.\-/\[\]]*`,
  'g',
);

/** Folders .gitignore names (`x/`): anchored when they hold a `/` (`bench/out/`), else a folder of that name anywhere. */
function ignoredFolders(gitignore: string): (p: string) => boolean {
  const dirs = gitignore
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.endsWith('/') && !l.startsWith('#') && !l.startsWith('!'))
    .map((l) => l.replace(/^\//, ''));
  return (p) =>
    dirs.some((d) =>
      d.slice(0, -1).includes('/') ? p.startsWith(d) : p.split('/').slice(0, -1).includes(d.slice(0, -1)),
    );
}
const gitignored = ignoredFolders(fs.readFileSync(path.join(ROOT, '.gitignore'), 'utf8'));
const onDisk = (rel: string) => fs.existsSync(path.join(ROOT, rel));

/** The paths to missing files in one file's text: `file:line: why`. */
export function pathProblems(
  file: string,
  text: string,
  exists: (rel: string) => boolean = onDisk,
  ignored: (rel: string) => boolean = gitignored,
): string[] {
  const problems: string[] = [];
  for (const m of text.matchAll(PATH)) {
    const index = m.index ?? 0;
    const next = text[index + m[0].length] ?? '';
    if ('*<{$'.includes(next) && next !== '') continue;
    if (next === '@' && /^@[0-9a-f]{7,40}\b/.test(text.slice(index + m[0].length, index + m[0].length + 42))) continue;
    const p = m[0].replace(/\.+$/, '');
    const name = p.slice(p.lastIndexOf('/') + 1);
    if (!/^[^.]+.*\.[a-z][a-z0-9]{0,5}$/.test(name)) continue;
    if (name.split('.')[0]!.length === 1) continue;
    if (ignored(p) || exists(p)) continue;
    if (afterUpstreamRepo(text.slice(Math.max(0, index - 200), index))) continue;
    problems.push(`${file}:${lineOf(text, index)}: names ${p}, which does not exist`);
  }
  return problems;
}

test('no issue numbers in source, and every path a source file names exists', () => {
  const files = scannedFiles().filter(isSource);
  assert.ok(
    files.includes('server/config.ts') && files.includes('workers/trainer/requirements.txt'),
    'the scan sees the sources',
  );
  const problems = files.flatMap((f) => {
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
    return [...issueProblems(f, text), ...pathProblems(f, text)];
  });
  assert.deepEqual(problems, [], `\n${problems.join('\n')}`);
});

test('the checks find what they must find', () => {
  const I = 'issue'; // written apart, so that the scan of this file does not take the cases for the real thing
  const bad = [
    `// ${I} 12`,
    `/* (${I} 41 requirement 3) */`,
    `# ${I.toUpperCase()} #7: x`,
    `'${I}s 12 and 13'`,
    `x\n// The thing (${I}\n// 40).`,
    `fixed (#${'1'}23)`,
  ];
  for (const c of bad) assert.equal(issueProblems('a.ts', c).length, 1, c);
  assert.deepEqual(issueProblems('a.ts', `x\ny // ${I} 28`), [`a.ts:2: names an issue number ("${I} 28")`]);
  const ok = [
    `ray-project/ray#7418`,
    `see ray-project/ray ${I} 7418`,
    `https://github.com/ray-project/ray/${I}s/7418`,
    `the ${I}'s example`,
    `error.${I}s[0]`,
    `color: '#123456'`,
  ];
  for (const c of ok) assert.deepEqual(issueProblems('a.ts', c), [], c);
  assert.deepEqual(issueProblems(`${'prisma/'}migrations/0001.sql`, `-- ${I} 12`), []);

  const S = 'server/'; // as above
  const exists = (p: string) => p === `${S}real.ts` || p === `${S}[id]/page.tsx`;
  const ignored = ignoredFolders('bench/out/\nnode_modules/\n');
  const paths = (t: string) => pathProblems('a.ts', t, exists, ignored);
  assert.deepEqual(paths(`x\n// see ${S}gone.ts:12.`), [`a.ts:2: names ${S}gone.ts, which does not exist`]);
  assert.equal(paths(`'${'workers/'}old/task.py'`).length, 1);
  assert.equal(paths(`(${'.ci/'}helper.sh)`).length, 1);
  for (const c of [
    `${S}real.ts, ${S}real.ts:3 and ${S}real.ts.`,
    `${S}[id]/page.tsx`,
    `../../${S}gone.ts`,
    `@/${S}gone.ts`,
    `https://example.com/${S}gone.ts`,
    `${S}folder/ and ${S}folder`,
    `${S}mod.Class`,
    `${'tests/'}unit/*.test.ts, ${S}<name>.ts, ${S}{a,b}.ts, ${S}\${name}.ts, ${S}gone.*`,
    `${'bench/'}out/roc.svg, ${S}node_modules/p/index.js`,
    `${S}x.ts, ${'e2e/'}a.spec.ts`,
    `owner/repo ${S}gone.ts, owner/repo's ${S}gone.ts`,
    `of owner/repo's\n * ${S}gone.ts`,
    `Math-Verify ${'tests/'}test_all.py@cf14bc4 test_x`,
    `data/${S}gone.ts`,
  ])
    assert.deepEqual(paths(c), [], c);
});
