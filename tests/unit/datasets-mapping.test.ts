import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dedupe, getPath, mapRows, normaliseProblem, resolveMapping } from '../../server/datasets/mapping.ts';
import { assignSplits, contentHash } from '../../server/datasets/import.ts';
import { UserError } from '../../contracts/errors.ts';
import type { SourceRow } from '../../server/datasets/parse.ts';

const rows = (...data: Record<string, unknown>[]): SourceRow[] =>
  data.map((d, i) => ({ data: d, line: i + 1, row: i + 1 }));

test('auto-detection: problem|question|prompt and answer|solution|ground_truth|reward_model.ground_truth', () => {
  assert.deepEqual(resolveMapping(rows({ question: 'q', answer: 'a' })), {
    problemField: 'question',
    answerField: 'answer',
    idField: undefined,
  });
  assert.deepEqual(resolveMapping(rows({ problem: 'q', solution: 's', id: 1 })), {
    problemField: 'problem',
    answerField: 'solution',
    idField: 'id',
  });
  const verl = resolveMapping(
    rows({
      prompt: [{ role: 'user', content: 'q' }],
      reward_model: { ground_truth: '1', style: 'rule' },
      extra_info: { index: 0 },
    }),
  );
  assert.deepEqual(verl, {
    problemField: 'prompt',
    answerField: 'reward_model.ground_truth',
    idField: 'extra_info.index',
  });
});

test('mapping errors name the field and list what the file has', () => {
  assert.throws(
    () => resolveMapping(rows({ text: 'q', answer: 'a' })),
    (e: unknown) =>
      e instanceof UserError && /which field holds the problem/.test(e.message) && /text, answer/.test(e.message),
  );
  assert.throws(
    () => resolveMapping(rows({ question: 'q', answer: 'a' }), { answerField: 'nope' }),
    /answer field "nope" is not in the file/,
  );
});

test('mapRows: verl chat prompt → last user message; system prompt and extra_info kept as metadata', () => {
  const r = rows({
    data_source: 'gsm8k',
    prompt: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is 2+2?' },
    ],
    reward_model: { ground_truth: '4', style: 'rule' },
    extra_info: { index: 7, split: 'train' },
  });
  const [p] = mapRows(r, resolveMapping(r), 'f.parquet');
  assert.equal(p.question, 'What is 2+2?');
  assert.equal(p.answer, '4');
  assert.equal(p.externalId, '7');
  assert.deepEqual(p.metadata, {
    data_source: 'gsm8k',
    reward_model: { style: 'rule' },
    extra_info: { index: 7, split: 'train' },
    system_prompt: 'Be brief.',
  });
});

test('mapRows: missing or empty problem/answer names the file, the line and the field', () => {
  const m = { problemField: 'question', answerField: 'answer' };
  assert.throws(
    () => mapRows(rows({ question: 'a', answer: '1' }, { question: 'b' }), m, 'x.jsonl'),
    /^UserError: x\.jsonl, line 2: the answer field "answer" is missing/,
  );
  assert.throws(
    () => mapRows(rows({ question: '  ', answer: '1' }), m, 'x.jsonl'),
    /x\.jsonl, line 1: the problem field "question" is empty/,
  );
  assert.throws(
    () =>
      mapRows(
        [{ data: { prompt: [{ role: 'system', content: 's' }], answer: 1 }, row: 5 }],
        { problemField: 'prompt', answerField: 'answer' },
        'v.parquet',
      ),
    /v\.parquet, row 5: the problem field "prompt" is a chat prompt with no user message/,
  );
});

test('getPath: a literal dotted key wins, else nested; numbers and one-element lists become text answers', () => {
  assert.equal(getPath({ 'a.b': 1, a: { b: 2 } }, 'a.b'), 1);
  assert.equal(getPath({ a: { b: 2 } }, 'a.b'), 2);
  assert.equal(getPath({ a: 'x' }, 'a.b'), undefined);
  const [p] = mapRows(
    rows({ question: 'q', answer: ['42'] }),
    { problemField: 'question', answerField: 'answer' },
    'f',
  );
  assert.equal(p.answer, '42');
});

test('dedupe on normalised problem text, counting conflicting answers', () => {
  assert.equal(normaliseProblem('  a \n\t b  '), 'a b');
  const r = dedupe([
    { question: 'x  y', answer: '1' },
    { question: ' x y ', answer: '1' },
    { question: 'x\ny', answer: '2' },
    { question: 'z', answer: '3' },
  ]);
  assert.deepEqual(
    r.kept.map((k) => k.question),
    ['x  y', 'z'],
  );
  assert.equal(r.duplicates, 2);
  assert.equal(r.conflicting, 1);
});

test('seeded split: deterministic, order-independent, the requested size', () => {
  const qs = Array.from({ length: 100 }, (_, i) => `problem ${i}`);
  const a = assignSplits(qs, 0.2, 1);
  assert.equal(a.filter((s) => s === 'test').length, 20);
  assert.deepEqual(assignSplits(qs, 0.2, 1), a);
  const reversed = assignSplits([...qs].reverse(), 0.2, 1).reverse();
  assert.deepEqual(reversed, a);
  assert.notDeepEqual(assignSplits(qs, 0.2, 2), a);
  assert.equal(assignSplits(qs, 0, 1).includes('test'), false);
});

test('content hash changes with content', () => {
  const base = [{ question: 'q', answer: 'a', split: 'train', externalId: null, metadata: null }];
  assert.equal(contentHash(base), contentHash(structuredClone(base)));
  assert.notEqual(contentHash(base), contentHash([{ ...base[0], split: 'test' }]));
});
