import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { extractAnswer, findBoxed } from '../../workers/reward/extract.ts';
import { normalize, structure } from '../../workers/reward/normalize.ts';
import { Verifier } from '../../workers/reward/verifier.ts';

test('\\boxed{} with nested braces, \\fbox, several boxes', () => {
  assert.deepEqual(findBoxed('a \\boxed{\\frac{1}{2}} b \\fbox{x^{2}} c \\boxed{\\{1,2\\}}'), [
    '\\frac{1}{2}',
    'x^{2}',
    '\\{1,2\\}',
  ]);
  assert.deepEqual(findBoxed('\\boxed{\\left(\\frac{a}{b}, {c}\\right)}'), ['\\left(\\frac{a}{b}, {c}\\right)']);
  assert.deepEqual(findBoxed('\\boxed 5 and'), ['5']);
  assert.deepEqual(findBoxed('\\boxed{unbalanced'), []);
  assert.deepEqual(findBoxed('\\boxedx{1}'), []);
});

test('default mode: the box inside the last <answer> block; several different boxes there are a hedge, no answer', () => {
  const r = '<think>try \\boxed{1}</think> text \\boxed{2} <answer>so \\boxed{4}, that is \\boxed{ 4 }</answer>';
  assert.equal(extractAnswer(r).answer, '4');
  const hedge = extractAnswer('<answer>so \\boxed{3} or rather \\boxed{4}</answer>');
  assert.equal(hedge.answer, null);
  assert.match(hedge.reason, /2 different answers/);
  assert.equal(extractAnswer('<answer>7</answer>').answer, '7');
  assert.equal(extractAnswer('<answer>\\boxed{8}').answer, '8'); // unterminated block
  const none = extractAnswer('<think>x</think>\nthe answer is \\boxed{5}');
  assert.equal(none.answer, null);
  assert.match(none.reason, /no <answer> block/);
  assert.equal(extractAnswer('<answer>I give up, sorry, no idea\nreally</answer>').answer, null);
  assert.equal(extractAnswer('').answer, null);
});

test('boxed mode: the last box anywhere; bare answers pass in both modes', () => {
  assert.equal(extractAnswer('<think>\\boxed{1}</think> final \\boxed{2}', 'boxed').answer, '2');
  assert.equal(extractAnswer('no box here\nat all', 'boxed').answer, null);
  assert.equal(extractAnswer('x = 3').answer, 'x = 3');
  assert.equal(extractAnswer('\\frac{1}{2}', 'boxed').answer, '\\frac{1}{2}');
});

test('normalisation', () => {
  assert.equal(normalize('\\dfrac{1}{2}').s, '\\frac{1}{2}');
  assert.equal(normalize('\\left( 1 , 2 \\right)').s, '(1,2)');
  assert.equal(normalize('1,000').s, '1000');
  assert.equal(normalize('(1,000)').s, '(1,000)');
  assert.equal(normalize('3.50').s, '3.5');
  assert.equal(normalize('x = 3').s, '3');
  assert.equal(normalize('5\\text{ cm}').s, '5');
  assert.deepEqual(normalize('30^\\circ'), { s: '30', percent: false, degrees: true });
  assert.deepEqual(normalize('50\\%'), { s: '50', percent: true, degrees: false });
  assert.equal(structure('[1,2)').kind, 'seq');
  assert.equal(structure('\\{1,2\\}').kind, 'set');
  assert.equal(structure('\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}').kind, 'matrix');
});

test('a response with no extractable answer is a verdict, not an error', async () => {
  const v = new Verifier();
  after(() => v.close());
  const r = await v.verify('5', '<think>long thoughts</think>\nno answer given');
  assert.deepEqual(
    { correct: r.correct, method: r.method, extracted: r.extracted },
    { correct: false, method: 'none', extracted: null },
  );
  assert.match(r.reason, /no answer extracted/);
});
