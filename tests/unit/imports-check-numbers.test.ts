/**
 * The one number check every format's mapped trajectories pass (server/imports/check-numbers.ts, through readerOf
 * and the ingest API) and the one text cleaning before storing (server/imports/clean-text.ts). The database cases:
 * tests/integration/imports-values.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ForeignTrajectory } from '../../contracts/foreign.ts';
import { numberProblem } from '../../server/imports/check-numbers.ts';
import { storableStrings, storableText } from '../../server/imports/clean-text.ts';
import { ingestItem } from '../../server/imports/ingest.ts';
import { readerOf } from '../../server/imports/readers.ts';

const base: ForeignTrajectory = {
  id: 't',
  step: 2,
  split: 'train',
  groupId: 'g',
  messages: [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: 'a' },
  ],
  promptMessages: 1,
  metadata: {},
  source: { file: 'f.jsonl', line: 3 },
};

test('a step or policy version is a non-negative safe integer; rewards, advantages and times are finite', () => {
  assert.equal(numberProblem(base), undefined);
  for (const step of [-7, 1.5, 1e300, Number.NaN, 2 ** 53])
    assert.match(numberProblem({ ...base, step }) ?? '', /^step .* is not a non-negative whole number$/);
  assert.equal(numberProblem({ ...base, reward: Number.POSITIVE_INFINITY }), 'reward Infinity is not a finite number');
  assert.equal(numberProblem({ ...base, advantage: Number.NaN }), 'advantage NaN is not a finite number');
  assert.equal(numberProblem({ ...base, rewards: { acc: -Infinity } }), 'rewards.acc -Infinity is not a finite number');
  assert.equal(numberProblem({ ...base, policy: { end: -1 } }), 'policy.end -1 is not a non-negative whole number');
  const timed = { ...base, messages: [{ role: 'user' as const, content: 'q', time: Infinity }] };
  assert.equal(numberProblem(timed), 'messages[0].time Infinity is not a finite number');
});

test('token ids are whole numbers; float arrays may hold NaN (no value) but no infinity', () => {
  assert.equal(numberProblem({ ...base, tokens: { ids: [1, 2], rolloutLogprobs: [Number.NaN, -0.5] } }), undefined);
  assert.equal(
    numberProblem({ ...base, tokens: { ids: [1, -2] } }),
    'tokens.ids holds -2, not a non-negative whole number',
  );
  assert.equal(
    numberProblem({ ...base, tokens: { ids: [1], entropies: [Infinity] } }),
    'tokens.entropies holds Infinity, not a finite number',
  );
});

test("every format's reader checks the numbers: ATIF's extra.step of -7 is a problem with its file", () => {
  const doc = {
    schema_version: 'ATIF-v1.4',
    session_id: 's',
    agent: { name: 'a', version: '1' },
    steps: [
      { step_id: 1, source: 'user', message: 'q' },
      { step_id: 2, source: 'agent', message: 'a' },
    ],
    extra: { step: -7 },
  };
  assert.deepEqual(readerOf('atif').map(doc, { file: 'x/agent/trajectory.json', line: 0, split: 'train' }), {
    ok: false,
    problem: { file: 'x/agent/trajectory.json', line: 0, reason: 'step -7 is not a non-negative whole number' },
  });
  assert.deepEqual(ingestItem(doc, 4), { reason: 'step -7 is not a non-negative whole number' });
  const ok = readerOf('atif').map({ ...doc, extra: { step: 5 } }, { file: 'x', line: 0, split: 'train' });
  assert.ok(ok.ok && ok.trajectories[0]!.step === 5);
});

test('NUL and lone surrogates become U+FFFD in every string and key; other values stay', () => {
  assert.equal(storableText('a\u0000b\uD800c\uDC00d\uD83D\uDE00'), 'a\uFFFDb\uFFFDc\uFFFDd\uD83D\uDE00');
  assert.deepEqual(storableStrings({ 'k\u0000': ['v\u0000', 1, null, true], n: 2 }), {
    'k\uFFFD': ['v\uFFFD', 1, null, true],
    n: 2,
  });
});
