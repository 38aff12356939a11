// @postgresql: also on PostgreSQL, because dataset versions and batched imports run in transactions, whose locking differs between the databases.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshDatabase } from '../helpers/db.ts';
import type { Database } from '../../server/db/client.ts';
import { UserError } from '../../contracts/errors.ts';
import { importDatasetFile } from '../../server/datasets/import.ts';
import { getDataset, listDatasets, listProblemRows, listProblems } from '../../server/store/datasets.ts';
import { datasetsRouter } from '../../server/trpc/routers/datasets.ts';
import { createCallerFactory, router } from '../../server/trpc/init.ts';
import { TEST_ADMIN } from '../helpers/principals.ts';

const fx = (f: string) => path.join(import.meta.dirname, '../fixtures/datasets', f);
let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
});
afterEach(async () => {
  await fresh.close();
});

test('JSONL: imported, deduplicated, stored with metadata and external ids', async () => {
  const r = await importDatasetFile(db, fx('basic.jsonl'), { name: 'basic' });
  assert.equal(r.status, 'created');
  assert.equal(r.rows, 4);
  assert.equal(r.duplicates, 1);
  assert.equal(r.dataset.count, 3);
  assert.equal(r.dataset.version, 1);
  const page = await listProblems(db, { datasetId: r.dataset.id });
  assert.deepEqual(
    page.items.map((p) => [p.index, p.question, p.answer, p.externalId, p.split]),
    [
      [0, 'What is 1 + 1?', '2', 'p1', 'train'],
      [1, 'Compute 3 * 4.', '12', 'p3', 'train'],
      [2, 'Name the capital of France.', 'Paris', 'p4', 'train'],
    ],
  );
  assert.deepEqual(page.items[0].metadata, { id: 'p1', level: 1 });
  assert.equal(page.nextCursor, null);
  const d = await getDataset(db, { name: 'basic' });
  assert.equal(d?.metadata?.duplicates, 1);
  assert.deepEqual(d?.splits, { train: 3 });
});

test('re-import: same content is detected by hash; new content makes version 2', async () => {
  const a = await importDatasetFile(db, fx('basic.jsonl'), { name: 'set' });
  const again = await importDatasetFile(db, fx('basic.jsonl'), { name: 'set' });
  assert.equal(again.status, 'unchanged');
  assert.equal(again.dataset.id, a.dataset.id);
  assert.equal(await db.prisma.dataset.count(), 1);
  assert.equal(await db.prisma.problem.count(), 3);
  const b = await importDatasetFile(db, fx('basic.jsonl'), { name: 'set', split: 'test' });
  assert.equal(b.status, 'created');
  assert.equal(b.dataset.version, 2);
  assert.notEqual(b.dataset.hash, a.dataset.hash);
  const latest = await listDatasets(db, { latestOnly: true });
  assert.deepEqual(
    latest.map((d) => [d.name, d.version, d.splits]),
    [['set', 2, { test: 3 }]],
  );
  assert.equal((await listDatasets(db)).length, 2);
  // Same content under another name is its own dataset.
  assert.equal((await importDatasetFile(db, fx('basic.jsonl'), { name: 'other' })).status, 'created');
});

test('CSV with quoting edge cases and explicit mapping; seeded test split', async () => {
  const r = await importDatasetFile(db, fx('quoting.csv'), { name: 'csv', testFraction: 0.5, seed: 3 });
  assert.deepEqual(r.mapping, { problemField: 'problem', answerField: 'solution', idField: undefined });
  assert.deepEqual(r.splits, { train: 2, test: 2 });
  const all = await listProblems(db, { datasetId: r.dataset.id });
  assert.deepEqual(
    all.items.map((p) => p.question),
    ['Simple, with a comma', 'Multi\r\nline\r\nproblem', 'He said "hi" twice', 'plain problem'],
  );
  assert.equal(all.items[3].answer, '4, or four');
  const test = await listProblems(db, { datasetId: r.dataset.id, split: 'test' });
  assert.equal(test.items.length, 2);
  const again = await importDatasetFile(db, fx('quoting.csv'), { name: 'csv', testFraction: 0.5, seed: 3 });
  assert.equal(again.status, 'unchanged');
});

test('verl-style Parquet: user content, reward_model.ground_truth, extra_info as metadata', async () => {
  const r = await importDatasetFile(db, fx('verl.parquet'), { name: 'gsm8k' });
  assert.deepEqual(r.mapping, {
    problemField: 'prompt',
    answerField: 'reward_model.ground_truth',
    idField: 'extra_info.index',
  });
  assert.equal(r.duplicates, 1);
  const page = await listProblems(db, { datasetId: r.dataset.id, limit: 2 });
  assert.deepEqual(
    page.items.map((p) => [p.question, p.answer, p.externalId]),
    [
      ['What is 2 + 3?', '5', '0'],
      ['Compute 7 * 6.', '42', '1'],
    ],
  );
  assert.equal(page.nextCursor, 2);
  const meta = page.items[1].metadata as Record<string, unknown>;
  assert.deepEqual(meta.extra_info, { answer: '#### 42', index: 1, question: 'Compute 7 * 6.', split: 'train' });
  assert.equal(meta.system_prompt, 'Please reason step by step, and put your final answer within \\boxed{}.');
  const next = await listProblems(db, { datasetId: r.dataset.id, cursor: page.nextCursor!, limit: 2 });
  assert.deepEqual(
    next.items.map((p) => p.answer),
    ['4'],
  );
  const plain = await importDatasetFile(db, fx('plain.parquet'), {
    name: 'plain',
    problemField: 'question',
    answerField: 'answer',
  });
  assert.equal(plain.dataset.count, 2);
});

test('malformed files are rejected with the file, the line/row and the reason; nothing is stored', async () => {
  const rejects = (file: string, re: RegExp, opts = {}) =>
    assert.rejects(
      importDatasetFile(db, fx(file), { name: 'bad', ...opts }),
      (e: unknown) => e instanceof UserError && re.test(e.message),
    );
  await rejects('bad-line3.jsonl', /^bad-line3\.jsonl, line 3: invalid JSON/);
  await rejects('bad-quote.csv', /^bad-quote\.csv, line 3: unterminated quoted field/);
  await rejects('bad-fields.csv', /^bad-fields\.csv, line 3: expected 2 fields/);
  await rejects('missing-answer.jsonl', /^missing-answer\.jsonl, line 2: the answer field "answer" is empty/);
  await rejects('verl.parquet', /answer field "nope" is not in the file/, { answerField: 'nope' });
  await rejects('nope.jsonl', /cannot read .*no such file/);
  await rejects('basic.jsonl', /name "bad name" is not allowed/, { name: 'bad name' });
  assert.equal(await db.prisma.dataset.count(), 0);
  assert.equal(await db.prisma.problem.count(), 0);
});

test('large import is batched in one transaction; concurrent imports of one name get distinct versions', async () => {
  const dir = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? '/tmp'), 'ds-'));
  try {
    const big = path.join(dir, 'big.jsonl');
    fs.writeFileSync(
      big,
      Array.from({ length: 12000 }, (_, i) => JSON.stringify({ question: `q${i}`, answer: String(i) })).join('\n'),
    );
    const r = await importDatasetFile(db, big, { name: 'big' });
    assert.equal(r.dataset.count, 12000);
    assert.equal(await db.prisma.problem.count({ where: { datasetId: r.dataset.id } }), 12000);
    const files = [0, 1, 2].map((k) => {
      const f = path.join(dir, `c${k}.jsonl`);
      fs.writeFileSync(f, JSON.stringify({ question: `only ${k}`, answer: '1' }));
      return f;
    });
    const results = await Promise.all(files.map((f) => importDatasetFile(db, f, { name: 'race' })));
    assert.deepEqual(results.map((x) => x.dataset.version).sort(), [1, 2, 3]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('tRPC: datasets.list, get, problems with cursor paging and split filter', async () => {
  const r = await importDatasetFile(db, fx('quoting.csv'), { name: 'csv', testFraction: 0.5, seed: 3 });
  const caller = createCallerFactory(router({ datasets: datasetsRouter }))({ db, principal: TEST_ADMIN });
  const list = await caller.datasets.list();
  assert.deepEqual(
    list.map((d) => [d.name, d.count]),
    [['csv', 4]],
  );
  const got = await caller.datasets.get({ id: r.dataset.id });
  assert.deepEqual(got.splits, { train: 2, test: 2 });
  await assert.rejects(caller.datasets.get({ id: 'missing' }), /not found/);
  const p1 = await caller.datasets.problems({ datasetId: r.dataset.id, limit: 3 });
  assert.equal(p1.items.length, 3);
  const p2 = await caller.datasets.problems({ datasetId: r.dataset.id, limit: 3, cursor: p1.nextCursor });
  assert.deepEqual(
    p2.items.map((p) => p.index),
    [3],
  );
  assert.equal(p2.nextCursor, null);
  const test = await caller.datasets.problems({ datasetId: r.dataset.id, split: 'test' });
  assert.ok(test.items.every((p) => p.split === 'test') && test.items.length === 2);
  await assert.rejects(caller.datasets.problems({ datasetId: 'missing' }), /not found/);
});

test('a limit picks the first problems, or spreads them evenly over the split (pick: "spread")', async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pick-')), 'twenty.jsonl');
  fs.writeFileSync(
    file,
    Array.from({ length: 20 }, (_, i) => JSON.stringify({ question: `q${i}`, answer: `${i}` })).join('\n'),
  );
  const r = await importDatasetFile(db, file, { name: 'twenty' });
  const answers = async (q: { limit?: number; pick?: 'first' | 'spread' }) =>
    (await listProblemRows(db, { datasetId: r.dataset.id, ...q })).map((p) => p.answer);
  assert.deepEqual(await answers({ limit: 4 }), ['0', '1', '2', '3']);
  assert.deepEqual(await answers({ limit: 4, pick: 'first' }), ['0', '1', '2', '3']);
  assert.deepEqual(await answers({ limit: 4, pick: 'spread' }), ['0', '5', '10', '15']);
  assert.deepEqual(await answers({ limit: 6, pick: 'spread' }), ['0', '3', '6', '10', '13', '16']);
  assert.equal((await answers({ limit: 50, pick: 'spread' })).length, 20);
  assert.equal((await answers({ pick: 'spread' })).length, 20, 'no limit: every problem');
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
});
