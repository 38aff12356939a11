// @postgresql: also on PostgreSQL, because PostgreSQL refuses a NUL in a text field (the whole batch failed) where SQLite kept it.
/**
 * What an imported record's values may be, against the real database: an ATIF
 * `extra.step` of -7, 1.5 or 1e300 (1e300 gave a 500 and a broken explorer) is a malformed record reported with its
 * file, not stored, beside a good trial that is; a line with NUL characters, a lone surrogate and invalid UTF-8
 * bytes is imported and reads back with U+FFFD in their place, and a problem quoting a NUL is stored too. The
 * number check's own cases: tests/unit/imports-check-numbers.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import type { Database } from '../../server/db/client.ts';
import { launchImport } from '../../server/imports/launch.ts';
import { readEvents } from '../../server/store/events.ts';
import { importPass } from '../../workers/imports/importer.ts';
import { freshDatabase } from '../helpers/db.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let dir: string;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-import-values-'));
});
afterEach(async () => {
  await fresh.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function launch(folder: string, format: string) {
  return launchImport(db, { path: folder, format }, { roots: null, enqueue: false });
}

function atifTrial(root: string, trial: string, step: number) {
  const doc = {
    schema_version: 'ATIF-v1.4',
    session_id: trial,
    agent: { name: 'elsewhere', version: '1' },
    steps: [
      { step_id: 1, source: 'user', message: 'What is 23*4?' },
      { step_id: 2, source: 'agent', message: 'The answer is 92.' },
    ],
    extra: { step, group_id: 'g1' },
  };
  fs.mkdirSync(path.join(root, trial, 'agent'), { recursive: true });
  // JSON.stringify would write 1e300 as it is: the file holds the number the producer wrote.
  fs.writeFileSync(path.join(root, trial, 'agent', 'trajectory.json'), JSON.stringify(doc));
}

test('an ATIF extra.step that is negative, fractional or huge is a problem with its file; the good trial is stored', async () => {
  const run = path.join(dir, 'harbor');
  atifTrial(run, 'trial-a', -7);
  atifTrial(run, 'trial-b', 1.5);
  atifTrial(run, 'trial-c', 1e300);
  atifTrial(run, 'trial-d', 3);
  const launched = await launch(run, 'atif');
  const r = await importPass({ db, runId: launched.runId, folder: launched.folder, format: 'atif' });
  assert.deepEqual(
    r.problems.map((p) => [p.file, p.line, p.reason]),
    [
      ['trial-a/agent/trajectory.json', 0, 'step -7 is not a non-negative whole number'],
      ['trial-b/agent/trajectory.json', 0, 'step 1.5 is not a non-negative whole number'],
      ['trial-c/agent/trajectory.json', 0, 'step 1e+300 is not a non-negative whole number'],
    ],
  );
  const rows = await db.prisma.trajectory.findMany({ where: { runId: launched.runId } });
  assert.deepEqual(
    rows.map((t) => t.step),
    [3],
    'only the good trial is stored',
  );
});

test('NUL characters, a lone surrogate and invalid UTF-8 bytes are imported as U+FFFD on this database', async () => {
  const run = path.join(dir, 'verl');
  fs.mkdirSync(path.join(run, 'rollout'), { recursive: true });
  const good = JSON.stringify({ input: 'what is 1 + 1?', output: '2', gts: '2', score: 1, step: 1 });
  // `\u0000` and `\ud800` as JSON escapes; 0xff 0xfe as raw bytes inside the output string (not UTF-8).
  const bad = Buffer.concat([
    Buffer.from('{"input": "nul\\u0000here \\ud800 lone", "output": "bytes '),
    Buffer.from([0xff, 0xfe]),
    Buffer.from(' end", "gts": "a\\u0000b", "score": 1, "step": 1, "extra": {"k\\u0000ey": "v\\u0000"}}'),
  ]);
  // A line that is not JSON because of a raw NUL: its problem quotes the line, NUL and all.
  const broken = Buffer.from('{"input": "x\u0000');
  fs.writeFileSync(
    path.join(run, 'rollout', '1.jsonl'),
    Buffer.concat([Buffer.from(`${good}\n`), bad, Buffer.from('\n'), broken, Buffer.from('\n')]),
  );
  const launched = await launch(run, 'verl');
  const r = await importPass({ db, runId: launched.runId, folder: launched.folder, format: 'verl' });
  assert.equal(r.trajectories, 2, 'both good lines are stored');
  assert.deepEqual(
    r.problems.map((p) => [p.file, p.line]),
    [['rollout/1.jsonl', 3]],
  );
  assert.ok(!r.problems[0]!.reason.includes('\u0000'));
  const rows = await db.prisma.trajectory.findMany({
    where: { runId: launched.runId },
    orderBy: { sampleIndex: 'asc' },
  });
  const content = rows[1]!.content;
  assert.ok(!content.includes('\u0000') && !content.includes('\\u0000'), 'no NUL is stored');
  const text = JSON.parse(content) as unknown;
  const all = JSON.stringify(text);
  assert.ok(all.includes('nul\uFFFDhere \uFFFD lone'), 'the NUL and the lone surrogate read back as U+FFFD');
  assert.ok(all.includes('bytes \uFFFD\uFFFD end'), 'the invalid bytes read back as U+FFFD');
  assert.equal(rows[1]!.answer, 'a\uFFFDb');
  const logged = (await readEvents(db, launched.runId, 0, 100)).filter((e) => e.type === 'import_problem');
  assert.equal(logged.length, 1, "the problem is in the run's log");
});
