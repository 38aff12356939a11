// The answer shapes of real datasets, each equal and unequal, decided by the fast path
// alone (no Math-Verify: these must not depend on the last step, which gets several of them wrong — see
// docs/verifier-parity.md).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Verifier } from '../../workers/reward/verifier.ts';
import { asInterval } from '../../workers/reward/normalize.ts';

// Each symbolic check's time limit (2 s by default) is one these verdicts never mean to reach: generous, so that a check
// stalled on a busy machine is still decided by what it computes (tests/unit/reward-timeout.test.ts tests the limit).
const v = new Verifier({ workers: 1, timeoutMs: 60_000 });
after(() => v.close());

async function expect(cases: [gold: string, pred: string, equal: boolean][]) {
  const wrong: string[] = [];
  for (const [gold, pred, equal] of cases) {
    const r = await v.verify(gold, pred);
    if (r.correct !== equal)
      wrong.push(`${JSON.stringify(gold)} vs ${JSON.stringify(pred)}: ${r.correct} (${r.method}: ${r.reason})`);
  }
  assert.deepEqual(wrong, []);
}

test('labelled answers: the label is dropped against a bare value, kept against another label', () =>
  expect([
    ['3', 'x=3', true],
    ['3', 'x = 4', false],
    ['(3,2)', '(p,q)=(3,2)', true],
    ['(3,2)', '(p,q)=(2,3)', false],
    ['2x+1', 'f(x)=2x+1', true],
    ['2x+1', 'f(x)=2x+2', false],
    ['12', '\\text{Area}=12', true],
    ['12', '\\text{Area} = 13', false],
    ['1', '|AB|=1', true],
    ['1', '|AB|=2', false],
    ['x=3', '3', true],
  ]));

test('equations equal up to rearrangement and scaling', () =>
  expect([
    ['y=2x+1', '2x-y+1=0', true],
    ['y=2x+1', 'y-2x=1', true],
    ['y=2x+1', '3y=6x+3', true],
    ['2x+2y=2', 'x+y=1', true],
    ['y=2x+1', '2x-y-1=0', false],
    ['y=2x+1', '3y=6x+4', false],
    ['x^2+y^2=4', 'x^2+y^2-4=0', true],
    ['x^2+y^2=4', 'x^2+y^2=2', false],
  ]));

test('trailing punctuation inside the math', () =>
  expect([
    ['\\frac{1}{3}', '\\frac{1}{3}.', true],
    ['5', '5.', true],
    ['5', '5 .', true],
    ['(1,2)', '(1,2).', true],
    ['7', '7;', true],
    ['\\frac{1}{3}', '\\frac{2}{3}.', false],
    ['10!', '3628800', true],
  ]));

test('mixed numbers', () =>
  expect([
    ['\\frac{40}{9}', '4 4/9', true],
    ['\\frac{40}{9}', '4\\frac{4}{9}', true],
    ['4\\frac{4}{9}', '40/9', true],
    ['-\\frac{9}{2}', '-4 1/2', true],
    ['\\frac{40}{9}', '4 5/9', false],
    ['\\frac{9}{2}', '5 1/2', false],
  ]));

test('\\frac, \\dfrac, \\tfrac and \\cfrac', () =>
  expect([
    ['\\frac{1}{2}', '\\dfrac{1}{2}', true],
    ['\\frac{1}{2}', '\\tfrac12', true],
    ['\\frac{1}{2}', '\\cfrac{1}{2}', true],
    ['\\frac{1}{2}', '\\cfrac{2}{4}', true],
    ['\\frac{1}{2}', '\\cfrac{1}{3}', false],
  ]));

test('matrices: pmatrix against bmatrix', () =>
  expect([
    ['\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}', '\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}', true],
    ['\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}', '\\begin{bmatrix}1&2\\\\3&5\\end{bmatrix}', false],
    ['\\begin{pmatrix}1\\\\2\\end{pmatrix}', '\\begin{bmatrix}1&2\\end{bmatrix}', false],
  ]));

test('tuples and sets with any separator; lists joined with words', () =>
  expect([
    ['\\{1,2,3\\}', '\\{3, 2, 1\\}', true],
    ['1,2,3', '1; 2; 3', true],
    ['(1,2,3)', '(1, 2, 3)', true],
    ['(1,2,3)', '(3,2,1)', false],
    ['1,2', '1 \\text{ and } 2', true],
    ['1,2', 'x=1 \\text{ or } x=2', true],
    ['1,2,3', '1, 2 and 3', true],
    ['1,2', '2 or 1', true],
    ['1,2', '1 \\text{ and } 3', false],
    ['1,2,3', '1, 2 and 4', false],
  ]));

test('intervals against inequalities', () => {
  assert.equal(asInterval('-6\\le x<-4'), '[-6,-4)');
  assert.equal(asInterval('x>3'), '(3,\\infty)');
  assert.equal(asInterval('5\\ge x'), '(-\\infty,5]');
  assert.equal(asInterval('1<2'), null);
  return expect([
    ['[1,2)', '1 \\le x < 2', true],
    ['(3,\\infty)', 'x > 3', true],
    ['(-\\infty,5]', 'x \\leq 5', true],
    ['1 \\le x \\le 2', '[1,2]', true],
    ['[1,2]', 'x \\in [1,2]', true],
    ['(3,\\infty)', '3 < x', true],
    ['[1,2)', '1 < x < 2', false],
    ['(3,\\infty)', 'x \\ge 3', false],
    ['(-\\infty,5]', 'x < 5', false],
    ['[1,2]', '(1,2]', false],
  ]);
});

test('degrees, percents and percent words', () =>
  expect([
    ['30^\\circ', '30', true],
    ['30^\\circ', '30^{\\circ}', true],
    ['30^\\circ', '30 \\text{ degrees}', true],
    ['30^\\circ', '30\\degree', true],
    ['30^\\circ', '35^\\circ', false],
    ['25\\%', '25', true],
    ['25\\%', '0.25', true],
    ['25\\%', '25 percent', true],
    ['25\\%', '25\\text{ percent}', true],
    ['25\\%', '26\\%', false],
  ]));

test('units in \\text{} and \\mbox{}', () =>
  expect([
    ['12', '12\\text{ cm}', true],
    ['12', '12\\mbox{ cm}', true],
    ['12', '12 \\text{cm}^2', true],
    ['12', '12 \\mbox{square units}', true],
    ['12', '13\\text{ cm}', false],
  ]));

test('base subscripts', () =>
  expect([
    ['1010_2', '1010_{2}', true],
    ['1010_2', '1010', true],
    ['1010_2', '1011_2', false],
    ['1010_2', '1011_{2}', false],
  ]));

test('\\approx', () =>
  expect([
    ['3.14', '\\approx 3.14', true],
    ['3.14', '\\approx3.14', true],
    ['3.14', '≈ 3.14', true],
    ['3.14', '\\approx 3.15', false],
  ]));

test('text answers: case, articles and \\text{} wrappers', () =>
  expect([
    ['\\text{east}', 'East', true],
    ['\\text{east}', '\\text{East}', true],
    ['\\text{east}', 'the east', true],
    ['\\text{Tuesday}', '\\text{the Tuesday}', true],
    ['\\text{east}', 'west', false],
    ['\\text{yes}', '\\text{no}', false],
  ]));

test('irregular digit grouping: Indian lakh and crore groups are one number; other comma lists are not', () =>
  expect([
    ['100000', '1,00,000', true],
    ['10000000', '1,00,00,000', true],
    ['123456', '1,23,456', true],
    ['100001', '1,00,000', false],
    ['12', '1,2', false],
    ['1000', '10,00', false],
  ]));

test('multiple-choice letters', () =>
  expect([
    ['\\text{(C)}', 'C', true],
    ['\\text{(C)}', '(C)', true],
    ['\\text{(C)}', '\\textbf{(C)}', true],
    ['\\text{(C)}', 'C)', true],
    ['C', '(c)', true],
    ['\\text{(C)}', '(D)', false],
    ['C', 'B', false],
  ]));

test("MATH's thousands written with `,\\!` (regular groups or not) are one number, never a list", () =>
  expect([
    ['10,\\!000', '10000', true],
    ['10000', '10,\\!000', true],
    ['1,\\!234,\\!567', '1234567', true],
    ['1,\\!234,\\!567', '1234568', false],
    ['1,\\!00,\\!000', '100000', true],
    ['10,\\!000', '10,000', true],
    ['10,\\!000', '10', false],
    ['\\$1,\\!250', '1250', true],
  ]));

test('choices in a math font and golds that list alternatives with "or"', () =>
  expect([
    ['\\text{(B)}', '\\mathrm{(B)}', true],
    ['B', '\\mathbf{B}', true],
    ['(C)', '\\textbf{(C)}', true],
    ['(C)', '\\mathrm{(D)}', false],
    ['2 \\text{ or } 3', '\\{2, 3\\}', true],
    ['2 or 3', '3, 2', true],
    ['2 or 3', '2', false],
    ['2 or 3', '\\{2, 4\\}', false],
  ]));

test('an answer that merely contains the gold, or differs from it in a sign, is wrong', () =>
  expect([
    ['2', '2^3', false],
    ['3', '3\\frac{1}{2}', false],
    ['A', "A'", false],
    ['-x', 'x', false],
    ['x-1', '1-x', false],
    ['\\frac{1}{2}', '-\\frac{1}{2}', false],
  ]));
