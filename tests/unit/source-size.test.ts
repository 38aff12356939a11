/**
 * Source stays readable in pieces: no source file over 600 lines, and no function over 100 lines unless a sentence at
 * its top says why it is one piece (a loop meant to be read in one sitting, a table of checks in their order).
 *
 * Source: the TypeScript, JavaScript and Python files tests/helpers/source-files.ts lists, but tests/ and e2e/ (a
 * test file is a list of cases) and type declarations (`.d.mts`). A function is any function-like node with a body
 * (declarations, methods, arrows, callbacks) or a Python `def`, measured from its first line to its last. Its "why one
 * piece" is a comment or docstring containing the words `one piece`: the comment just before it (or before the
 * statement, property or call it is part of), or the first comment or docstring inside its body.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { ROOT, scannedFiles } from '../helpers/source-files.ts';

const MAX_FILE_LINES = 600;
const MAX_FUNCTION_LINES = 100;
const WHY = /\bone piece\b/i;

const sources = scannedFiles().filter(
  (f) => /\.(ts|tsx|mts|mjs|js|py)$/.test(f) && !/^(tests|e2e)\//.test(f) && !f.endsWith('.d.mts'),
);
const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

test(`no source file is over ${MAX_FILE_LINES} lines`, () => {
  const long = sources
    .map((f) => ({ f, n: lineCount(fs.readFileSync(path.join(ROOT, f), 'utf8')) }))
    .filter(({ n }) => n > MAX_FILE_LINES)
    .map(({ f, n }) => `${f}: ${n} lines`);
  assert.deepEqual(long, [], 'split these files by concern');
});

/** The comments just before `pos` (a node's full start), as text. */
const commentsBefore = (text: string, pos: number) =>
  (ts.getLeadingCommentRanges(text, pos) ?? []).map((r) => text.slice(r.pos, r.end)).join('\n');

/** Whether a long TypeScript function says why it is one piece (see the header for where it may say so). */
function saysWhy(fn: ts.FunctionLikeDeclaration, text: string): boolean {
  // The function, then the statement, property or call argument holding it, up to the first statement.
  for (let n: ts.Node | undefined = fn; n && !ts.isSourceFile(n); n = n.parent) {
    if (WHY.test(commentsBefore(text, n.getFullStart()))) return true;
    if (ts.isStatement(n) || ts.isClassElement(n)) break;
  }
  const body = fn.body;
  if (!body) return false;
  if (ts.isBlock(body)) {
    const first = body.statements[0];
    const inside = first ? commentsBefore(text, first.getFullStart()) : text.slice(body.getStart() + 1, body.getEnd());
    return WHY.test(inside);
  }
  return WHY.test(commentsBefore(text, body.getFullStart()));
}

function longTsFunctions(f: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
  const kind = f.endsWith('.tsx')
    ? ts.ScriptKind.TSX
    : f.endsWith('.ts') || f.endsWith('.mts')
      ? ts.ScriptKind.TS
      : ts.ScriptKind.JS;
  const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true, kind);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && 'body' in n && n.body) {
      const fn = n as ts.FunctionLikeDeclaration;
      const first = sf.getLineAndCharacterOfPosition(fn.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(fn.getEnd()).line;
      if (last - first + 1 > MAX_FUNCTION_LINES && !saysWhy(fn, text))
        out.push(`${f}:${first + 1} ${nameOf(fn, sf)}: ${last - first + 1} lines`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function nameOf(fn: ts.FunctionLikeDeclaration, sf: ts.SourceFile): string {
  if (fn.name) return fn.name.getText(sf);
  const p = fn.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p))
    return p.name.getText(sf);
  if (ts.isCallExpression(p)) return `a callback of ${p.expression.getText(sf).slice(0, 40)}`;
  return '(anonymous)';
}

/** Python's own parser: each `def` over the limit whose docstring or the comment lines right above it do not say why. */
const PYTHON_CHECK = String.raw`
import ast, json, re, sys
why = re.compile(r'\bone piece\b', re.I)
out = []
for f in sys.argv[2:]:
    src = open(f).read()
    lines = src.split('\n')
    for n in ast.walk(ast.parse(src)):
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = min([n.lineno] + [d.lineno for d in n.decorator_list])
        size = n.end_lineno - first + 1
        if size <= int(sys.argv[1]):
            continue
        above, i = [], first - 2
        while i >= 0 and lines[i].strip().startswith('#'):
            above.append(lines[i])
            i -= 1
        if why.search(ast.get_docstring(n) or '') or why.search('\n'.join(above)):
            continue
        out.append('%s:%d %s: %d lines' % (f, first, n.name, size))
print(json.dumps(out))
`;

test(`no function is over ${MAX_FUNCTION_LINES} lines without a sentence at its top saying why it is one piece`, () => {
  const long = sources.filter((f) => !f.endsWith('.py')).flatMap(longTsFunctions);
  const py = sources.filter((f) => f.endsWith('.py'));
  const r = spawnSync('python3', ['-c', PYTHON_CHECK, String(MAX_FUNCTION_LINES), ...py], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  long.push(...(JSON.parse(r.stdout) as string[]));
  assert.deepEqual(long, [], 'split these functions, or say at their top why each is one piece');
});
