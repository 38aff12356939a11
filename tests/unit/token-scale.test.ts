import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  legendOf,
  parseMode,
  scaleOf,
  tokenStyle,
  tokenTitle,
  tokensByTurn,
  tokenValue,
  turnPieces,
} from '../../components/trace/token-scale.ts';
import type { StoredTurn, TokenRecordWire } from '../../contracts/trajectory.ts';

// Turn 0: "ab" + "é" where é took two tokens (the first adds no character), then a 3-char tool response;
// turn 1: "ok" then EOS (no characters).
const rec = (over: Partial<TokenRecordWire> = {}): TokenRecordWire => ({
  ids: [10, 11, 200, 201, 7, 8, 9, 12, 13, 1],
  mask: [1, 1, 1, 1, 0, 0, 0, 1, 1, 1],
  turn: [0, 0, 0, 0, 0, 0, 0, 1, 1, 1],
  chars: [1, 1, 0, 1, 1, 1, 1, 1, 1, 0],
  rolloutLogprobs: [-0.1, -2, -0.5, -0.5, null, null, null, Math.log(0.5), -Infinity, -0.01],
  entropy: [0.5, 2, 1, 1, null, null, null, 0, 4, null],
  trainerLogprobs: [-0.2, -1.5, -0.5, null, null, null, null, Math.log(0.5), -1, -0.01],
  weights: [1, 2, 1, 1, null, null, null, 1, 0, 1],
  clip: [0, 4, 1, 2, 0, 0, 0, 3, 5, 0],
  advantage: -0.5,
  ...over,
});
const turn = (index: number, text: string, appendedText?: string) =>
  ({ index, text, tool: appendedText === undefined ? null : { appendedText } }) as Pick<
    StoredTurn,
    'index' | 'text' | 'tool'
  >;

test('pieces: model tokens take their share of the turn text in order, the tool response is one masked piece', () => {
  const r = rec();
  const by = tokensByTurn(r);
  assert.deepEqual(
    [...by.entries()],
    [
      [0, [0, 1, 2, 3, 4, 5, 6]],
      [1, [7, 8, 9]],
    ],
  );
  assert.deepEqual(turnPieces(turn(0, 'abé', '<r>'), r, by.get(0)!), [
    { i: 0, n: 1, text: 'a', kind: 'model' },
    { i: 1, n: 1, text: 'b', kind: 'model' },
    { i: 2, n: 1, text: '', kind: 'model' },
    { i: 3, n: 1, text: 'é', kind: 'model' },
    { i: 4, n: 3, text: '<r>', kind: 'tool' },
  ]);
  // Text the record does not cover is shown, not dropped.
  assert.deepEqual(
    turnPieces(turn(1, 'ok!'), r, by.get(1)!).map((p) => [p.text, p.kind]),
    [
      ['o', 'model'],
      ['k', 'model'],
      ['', 'model'],
      ['!', 'untokenised'],
    ],
  );
});

test('pieces: a record without text spans (an imported run: no tokenizer here) shows each token by its id', () => {
  const r = rec({ chars: new Array(10).fill(0) });
  assert.deepEqual(
    turnPieces(turn(1, 'ok!'), r, tokensByTurn(r).get(1)!).map((p) => [p.text, p.kind]),
    [
      ['⟨12⟩', 'model'],
      ['⟨13⟩', 'model'],
      ['⟨1⟩', 'model'],
      ['ok!', 'untokenised'],
    ],
  );
});

test('values: logprobs as stored, diff = trainer − rollout, advantage only where trained; tool tokens have none', () => {
  const r = rec();
  assert.equal(tokenValue(r, 1, 'rollout'), -2);
  assert.equal(tokenValue(r, 1, 'trainer'), -1.5);
  assert.ok(Math.abs(tokenValue(r, 1, 'diff')! - 0.5) < 1e-12);
  assert.equal(tokenValue(r, 3, 'diff'), null, 'no trainer logprob');
  assert.equal(tokenValue(r, 8, 'diff'), null, '−∞ makes no difference to show');
  assert.equal(tokenValue(r, 5, 'rollout'), null);
  assert.equal(tokenValue(r, 5, 'advclip'), null);
  assert.equal(tokenValue(r, 0, 'advclip'), -0.5);
  assert.equal(
    tokenValue(rec({ clip: null, trainerLogprobs: null, weights: null, advantage: null }), 0, 'advclip'),
    null,
  );
});

test('scales: diff and entropy relative to the record’s largest |value| (with a floor), logprobs absolute', () => {
  const r = rec();
  assert.ok(Math.abs(scaleOf(r, 'diff') - 0.5) < 1e-12);
  assert.equal(scaleOf(r, 'entropy'), 4);
  assert.equal(scaleOf(r, 'rollout'), 1);
  const flat = rec({ trainerLogprobs: rec().rolloutLogprobs.map((x) => x) });
  assert.equal(scaleOf(flat, 'diff'), 1e-3);
});

test('colours: unlikely tokens red, diff diverging blue/red, clip states by category, no colour without a value', () => {
  const r = rec();
  assert.equal(tokenStyle(r, 7, 'rollout', 1).background, 'rgba(239, 68, 68, 0.43)', 'p = 0.5 → half strength');
  assert.equal(tokenStyle(r, 8, 'rollout', 1).background, 'rgba(239, 68, 68, 0.85)', '−∞ → full red');
  assert.equal(tokenStyle(r, 9, 'rollout', 1).background, 'rgba(239, 68, 68, 0.01)');
  assert.equal(tokenStyle(r, 1, 'diff', 0.5).background, 'rgba(59, 130, 246, 0.85)', 'trainer higher → blue');
  assert.equal(
    tokenStyle(r, 0, 'diff', 0.5).background,
    'rgba(239, 68, 68, 0.17)',
    'engine higher → red, 0.1/0.5 of full',
  );
  assert.deepEqual(tokenStyle(r, 3, 'diff', 0.5), {});
  assert.equal(tokenStyle(r, 1, 'entropy', 4).background, 'rgba(249, 115, 22, 0.43)');
  // Advantage × clip: none → the advantage's sign (red for −0.5); the others by state.
  assert.equal(tokenStyle(r, 0, 'advclip', 1).background, 'rgba(239, 68, 68, 0.38)');
  assert.deepEqual(tokenStyle(r, 1, 'advclip', 1), {
    background: 'rgba(234, 179, 8, 0.55)',
    textDecoration: 'underline dotted',
  });
  assert.equal(tokenStyle(r, 2, 'advclip', 1).background, 'rgba(168, 85, 247, 0.6)');
  assert.equal(tokenStyle(r, 3, 'advclip', 1).background, 'rgba(236, 72, 153, 0.6)');
  assert.equal(tokenStyle(r, 7, 'advclip', 1).background, 'rgba(217, 70, 239, 0.6)');
  assert.deepEqual(tokenStyle(r, 8, 'advclip', 1), {
    background: 'rgba(107, 114, 128, 0.6)',
    textDecoration: 'line-through',
  });
  assert.equal(tokenStyle(rec({ advantage: 1 }), 0, 'advclip', 1).background, 'rgba(34, 197, 94, 0.6)');
  assert.deepEqual(tokenStyle(rec({ clip: null, trainerLogprobs: null, weights: null }), 0, 'advclip', 1), {});
});

test('legend: says why nothing is coloured when the trajectory was not trained on or the engine gave no values', () => {
  const untrained = rec({ clip: null, trainerLogprobs: null, weights: null, advantage: null });
  assert.match(legendOf(untrained, 'diff', 1).note!, /Not trained on/);
  assert.match(legendOf(untrained, 'advclip', 1).note!, /Not trained on/);
  assert.equal(legendOf(untrained, 'rollout', 1).note, null);
  assert.match(
    legendOf(rec({ entropy: rec().entropy.map(() => null) }), 'entropy', 1).note!,
    /engine reported no values/,
  );
  assert.deepEqual(
    legendOf(rec(), 'advclip', 1)
      .items.map((i) => i.label)
      .slice(0, 2),
    ['advantage -0.50', 'clipped low (Â < 0, ρ < 1−ε_low)'],
  );
  assert.deepEqual(
    legendOf(rec(), 'diff', 0.5).items.map((i) => i.label),
    ['engine higher (−0.50)', '0', 'trainer higher (+0.50)'],
  );
});

test('hover text: every value of a model token; a tool token says it is masked', () => {
  const r = rec();
  assert.equal(
    tokenTitle(r, 1, 'b'),
    'token 1 · id 11 · turn 1 · "b" · rollout logprob -2.0000 (p 0.135) · trainer logprob -1.5000 · trainer − rollout 0.5000 · entropy 2.000 · advantage -0.500 · TIS weight 2.000 · truncated by TIS (weight capped)',
  );
  assert.match(tokenTitle(r, 5, '>'), /^tool response, turn 1: masked out of the loss/);
  assert.equal(
    tokenTitle(rec({ clip: null, trainerLogprobs: null, weights: null }), 8, 'k'),
    'token 8 · id 13 · turn 2 · "k" · rollout logprob -Infinity · entropy 4.000 · not trained on',
  );
  assert.equal(parseMode('tokens'), 'tokens');
  assert.equal(parseMode('x'), 'turns');
  assert.equal(parseMode(null), 'turns');
});
