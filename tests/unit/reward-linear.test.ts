import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalize } from '../../workers/reward/normalize.ts';
import { extractAnswer, findBoxed } from '../../workers/reward/extract.ts';
import { tokenize } from '../../components/trace/highlight.tsx';
import { workRatio } from '../helpers/linear.ts';

// Model output is adversarial: the verifier normalises whatever a policy boxes, and the trace view highlights
// whatever code it writes. Each family below was quadratic or cubic before (10 KB took milliseconds to seconds,
// 100 KB minutes to hours: the worker stalled, the tab froze). Asserted on work: CPU time of a 100 KB input over
// a 10 KB one, side by side (linear ≈ 10, quadratic ≈ 100). Bound 35: a loaded machine's noise, far from 100.
const BOUND = 35;
const fill = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

const NORMALISER: [string, (n: number) => string][] = [
  ['spaces between digits, no "and" (was cubic)', (n) => `1${fill(' ', n)}x`],
  ['a digit run without a decimal point (trailing-zeros rule)', (n) => `${fill('1', n)}x`],
  ['a decimal with zeros and a last digit', (n) => `1.${fill('0', n)}1`],
  ['punctuation before the end (sentence full stop rule)', (n) => `x${fill(',', n)}x`],
  ['words after a number (unit rule)', (n) => `1${fill(' a', n)}!`],
  ['dollars before the end', (n) => `${fill('$', n)}x`],
  ["a degree mark's spaces", (n) => `1^${fill(' ', n)}x`],
  ['spaces after a text unit', (n) => `1\\text{cm}${fill(' ', n)}x`],
  ['semicolon lists', (n) => `1${fill(' ', n)}x;`],
  ['comma-and lists', (n) => `1${fill(' ,', n)} x`],
  ['text wrappers', (n) => `\\text{${fill('1', n)}x`],
  ['digit tuples', (n) => `x${fill('1,', n)}1`],
];

for (const [name, make] of NORMALISER) {
  test(`normalize is linear: ${name}`, () => {
    const r = workRatio(normalize, make);
    assert.ok(r < BOUND, `10× the input cost ${r.toFixed(1)}× the work`);
  });
}

test('normalize keeps its answers on the rewritten rules', () => {
  assert.equal(normalize('\\frac{1}{3}.').s, '\\frac{1}{3}');
  assert.equal(normalize('3.').s, '3');
  assert.equal(normalize('x ,. ;').s, 'x,.'); // as before: only the last run and its spaces go
  assert.equal(normalize('5 dollars').s, '5');
  assert.equal(normalize('3 square feet.').s, '3');
  assert.equal(normalize('3.50').s, '3.5');
  assert.equal(normalize('3.000').s, '3');
  assert.equal(normalize('10.0500').s, '10.05');
  assert.equal(normalize('1, 2 and 3').s, '1,2,3');
  assert.equal(normalize('x=1 or x=2').s, 'x=1,x=2');
  assert.equal(normalize('1; 2').s, '1,2');
  assert.equal(normalize('$$5$$').s, '5');
  assert.deepEqual(normalize('30^{ \\circ}'), { s: '30', percent: false, degrees: true });
  assert.equal(normalize('5\\text{ cm}  ').s, '5');
});

const EXTRACT: [string, (n: number) => string][] = [
  ['unbalanced boxes', (n) => fill('\\boxed{', n)],
  ['brace-less boxes with no space', (n) => fill('\\boxed\\boxed', n)],
  ['unbalanced boxes in an answer block', (n) => `<answer>${fill('\\boxed{', n)}</answer>`],
];

for (const [name, make] of EXTRACT) {
  test(`extraction is linear: ${name}`, () => {
    for (const fn of [findBoxed, (s: string) => extractAnswer(s, 'answer'), (s: string) => extractAnswer(s, 'boxed')]) {
      const r = workRatio(fn, make);
      assert.ok(r < BOUND, `10× the input cost ${r.toFixed(1)}× the work`);
    }
  });
}

test('findBoxed keeps its answers: nested, escaped, unbalanced and brace-less boxes', () => {
  assert.deepEqual(findBoxed('\\boxed{\\frac{1}{2}} and \\fbox{3}'), ['\\frac{1}{2}', '3']);
  assert.deepEqual(findBoxed('\\boxed{a\\}b} \\boxed{c}'), ['a\\}b', 'c']);
  assert.deepEqual(findBoxed('\\boxed{\\boxed{4}}'), ['\\boxed{4}']);
  assert.deepEqual(findBoxed('\\boxed{1 \\boxed{2}'), ['2']);
  assert.deepEqual(findBoxed('\\boxed 5 and \\boxed 6$'), ['5', '6']);
  assert.deepEqual(findBoxed('\\boxed\\boxed x'), ['\\boxed', 'x']);
  assert.deepEqual(findBoxed('\\boxed{'), []);
});

const HIGHLIGHT: [string, (n: number) => string][] = [
  ['a digit run followed by a letter (was quadratic)', (n) => `${fill('1', n)}x`],
  ['digits and underscores followed by a letter', (n) => `${fill('1_', n)}x`],
  ['an unterminated string', (n) => `'${fill('a', n)}`],
  ['an unterminated triple-quoted string', (n) => `'''${fill("'a", n)}`],
];

for (const [name, make] of HIGHLIGHT) {
  test(`the trace highlighter is linear: ${name}`, () => {
    const r = workRatio(tokenize, make);
    assert.ok(r < BOUND, `10× the input cost ${r.toFixed(1)}× the work`);
  });
}

test('the highlighter still reads numbers', () => {
  const kinds = (code: string) =>
    tokenize(code)
      .filter((t) => t.kind !== 'plain')
      .map((t) => `${t.kind}:${t.text}`);
  assert.deepEqual(kinds('x = 1_000.5e3 + 3j + 0x1F + 7_7'), ['num:1_000.5e3', 'num:3j', 'num:0x1F', 'num:7_7']);
  assert.deepEqual(kinds('print(12.5)'), ['builtin:print', 'num:12.5']);
  assert.deepEqual(kinds('a1 = 11b'), []);
});
