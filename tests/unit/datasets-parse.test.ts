import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ParseError, parseCsv, parseJsonl, readParquet } from '../../server/datasets/parse.ts';
import { writeParquet } from '../fixtures/datasets/parquet-writer.ts';

const fx = (f: string) => path.join(import.meta.dirname, '../fixtures/datasets', f);

function throwsAt(fn: () => unknown, line: number, re: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ParseError, String(e));
    assert.equal(e.line, line, e.message);
    assert.match(e.reason, re);
    return true;
  });
}

test('parseJsonl: objects with their line numbers; blank lines skipped; CRLF and BOM accepted', () => {
  const rows = parseJsonl('\ufeff{"a":1}\r\n\r\n{"a":2}\n');
  assert.deepEqual(rows, [
    { data: { a: 1 }, line: 1, row: 1 },
    { data: { a: 2 }, line: 3, row: 2 },
  ]);
  assert.equal(parseJsonl(fs.readFileSync(fx('basic.jsonl'), 'utf8')).length, 4);
});

test('parseJsonl: a malformed line is rejected with its number and the reason', () => {
  throwsAt(() => parseJsonl(fs.readFileSync(fx('bad-line3.jsonl'), 'utf8')), 3, /invalid JSON/);
  throwsAt(() => parseJsonl('{"a":1}\n[1,2]\n'), 2, /expected a JSON object, got an array/);
  throwsAt(() => parseJsonl('"x"'), 1, /got string/);
});

test('parseCsv: RFC 4180 quoting — commas, CRLF inside quotes, doubled quotes, empty last field', () => {
  const rows = parseCsv(fs.readFileSync(fx('quoting.csv'), 'utf8'));
  assert.deepEqual(
    rows.map((r) => r.data),
    [
      { problem: 'Simple, with a comma', solution: '1', source: 'a' },
      { problem: 'Multi\r\nline\r\nproblem', solution: '2', source: 'b' },
      { problem: 'He said "hi" twice', solution: '3', source: 'c' },
      { problem: 'plain problem', solution: '4, or four', source: '' },
    ],
  );
  assert.deepEqual(
    rows.map((r) => r.line),
    [2, 3, 6, 7],
  );
});

test('parseCsv: no trailing newline, LF endings, blank lines, quoted empty field', () => {
  assert.deepEqual(
    parseCsv('a,b\n1,2\n\n"",x').map((r) => r.data),
    [
      { a: '1', b: '2' },
      { a: '', b: 'x' },
    ],
  );
});

test('parseCsv: malformed files are rejected with the line and the reason', () => {
  throwsAt(() => parseCsv(fs.readFileSync(fx('bad-quote.csv'), 'utf8')), 3, /unterminated quoted field/);
  throwsAt(() => parseCsv(fs.readFileSync(fx('bad-fields.csv'), 'utf8')), 3, /expected 2 fields .* found 3/);
  throwsAt(() => parseCsv('a,b\n"x"y,1\n'), 2, /after a closing quote/);
  throwsAt(() => parseCsv('a,b\nx"y,1\n'), 2, /quote inside an unquoted field/);
  throwsAt(() => parseCsv('a,a\n1,2\n'), 1, /twice/);
  throwsAt(() => parseCsv('a,\n1,2\n'), 1, /no name/);
  throwsAt(() => parseCsv(''), 1, /empty/);
});

test('readParquet: verl-style nested columns come back as lists and structs; INT64 as numbers', async () => {
  const rows = await readParquet(fs.readFileSync(fx('verl.parquet')));
  assert.equal(rows.length, 4);
  assert.deepEqual(rows[1].data.prompt, [
    { content: 'Please reason step by step, and put your final answer within \\boxed{}.', role: 'system' },
    { content: 'Compute 7 * 6.', role: 'user' },
  ]);
  assert.deepEqual(rows[1].data.reward_model, { ground_truth: '42', style: 'rule' });
  assert.equal((rows[3].data.extra_info as { index: unknown }).index, 3);
  assert.equal(rows[3].row, 4);
});

test('readParquet: optional nulls and empty lists; garbage is a ParseError', async () => {
  const buf = writeParquet(
    [
      { name: 'q', type: 'string' },
      { name: 'tags', list: { name: 'element', type: 'string' } },
    ],
    [
      { q: 'a', tags: ['x', 'y'] },
      { q: null, tags: [] },
    ],
  );
  const rows = await readParquet(buf);
  assert.deepEqual(rows[0].data, { q: 'a', tags: ['x', 'y'] });
  assert.ok(rows[1].data.q == null);
  await assert.rejects(
    readParquet(Buffer.from('not parquet at all')),
    (e: unknown) => e instanceof ParseError && /not a readable Parquet file/.test(e.message),
  );
});
