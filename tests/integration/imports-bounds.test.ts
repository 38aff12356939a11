/**
 * The importer reads a foreign run's folder bounded and contained, against the real
 * database: prime-rl's metrics.jsonl and Harbor's verifier/reward.txt (read without being listed) go through the same
 * opener as the rollouts, so a link out of the folder or a FIFO there is refused by name and nothing of it is stored;
 * a file of thousands of bad lines keeps a bounded list of problems and counts them all; a line nested too deep or
 * over the line cap, an ATIF document nested too deep and a Parquet row over the record cap are refused with their
 * file and place while the rest is imported. The opener's and walk's own cases: tests/unit/imports-bounds.test.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import type { Database } from '../../server/db/client.ts';
import { launchImport } from '../../server/imports/launch.ts';
import { readEvents } from '../../server/store/events.ts';
import { getImportSource } from '../../server/store/imports.ts';
import { readSeries } from '../../server/store/metrics.ts';
import { importPass } from '../../workers/imports/importer.ts';
import { freshDatabase } from '../helpers/db.ts';
import { primeEpisode } from '../helpers/foreign-records.ts';
import { writeParquet } from '../fixtures/datasets/parquet-writer.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let dir: string;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-import-bounds-'));
});
afterEach(async () => {
  await fresh.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const verlLine = (i: number) =>
  `${JSON.stringify({ input: `what is ${i} + 1?`, output: `${i + 1}`, gts: String(i + 1), score: 1, step: 1 })}\n`;

async function launch(folder: string, format?: string) {
  return launchImport(db, { path: folder, ...(format ? { format } : {}) }, { roots: null, enqueue: false });
}

test('thousands of bad lines: all counted, a bounded number kept and logged; deep and overlong lines named by line', async () => {
  const run = path.join(dir, 'verl');
  fs.mkdirSync(path.join(run, 'rollout'), { recursive: true });
  const deep = `{"input": "x", "output": "y", "score": 1, "extra": ${'['.repeat(80)}${']'.repeat(80)}}\n`;
  const text = `${verlLine(1)}${deep}${'z'.repeat(5000)}\n${'not json\n'.repeat(3000)}${verlLine(2)}`;
  fs.writeFileSync(path.join(run, 'rollout', '1.jsonl'), text);
  const launched = await launch(run);
  const r = await importPass({
    db,
    runId: launched.runId,
    folder: launched.folder,
    format: 'verl',
    limits: { problemsKept: 100, lineBytes: 4096 },
  });
  assert.equal(r.trajectories, 2, 'the good lines around them are imported');
  assert.equal(r.problemCount, 3002);
  assert.equal(r.problems.length, 100, 'beyond the cap, counted and not kept');
  assert.deepEqual(r.problems[0], {
    file: 'rollout/1.jsonl',
    line: 2,
    reason: 'nested deeper than 64 levels; not imported',
  });
  assert.deepEqual(r.problems[1], {
    file: 'rollout/1.jsonl',
    line: 3,
    reason: 'longer than 4096 bytes (the line cap); skipped',
  });
  assert.equal(r.problems[2]!.line, 4);
  assert.equal((await getImportSource(db, launched.runId))?.problems, 3002, 'the stored count is all of them');
  const warnings = (await readEvents(db, launched.runId, 0, 5000)).filter((e) => e.type === 'import_problem');
  assert.equal(warnings.length, 50, "the run's log lists the first 50");
});

test('an unfinished last line over the line cap is reported once by a single import, and waits while following', async () => {
  const run = path.join(dir, 'verl-tail');
  fs.mkdirSync(path.join(run, 'rollout'), { recursive: true });
  fs.writeFileSync(path.join(run, 'rollout', '1.jsonl'), `${verlLine(1)}${'q'.repeat(5000)}`);
  const launched = await launch(run);
  const t = {
    db,
    runId: launched.runId,
    folder: launched.folder,
    format: 'verl' as const,
    limits: { lineBytes: 4096 },
  };
  const followed = await importPass({ ...t, following: true });
  assert.equal(followed.trajectories, 1);
  assert.equal(followed.problemCount, 0, 'while following, it may still be being written');
  const r = await importPass(t);
  assert.deepEqual(r.problems, [
    { file: 'rollout/1.jsonl', line: 2, reason: 'longer than 4096 bytes (the line cap) and no newline; not read' },
  ]);
});

test("prime-rl's metrics.jsonl is opened contained: a link out of the folder and a FIFO are refused by name", {
  timeout: 120_000,
}, async () => {
  const run = path.join(dir, 'prime');
  fs.mkdirSync(path.join(run, 'rollouts/step_1/train/all'), { recursive: true });
  fs.writeFileSync(path.join(run, 'rollouts/step_1/train/all/traces.jsonl'), `${JSON.stringify(primeEpisode)}\n`);
  const secret = path.join(dir, 'secret.jsonl');
  fs.writeFileSync(secret, `${JSON.stringify({ step: 1, time: 1760000000, 'secret/value': 1234 })}\n`);
  fs.symlinkSync(secret, path.join(run, 'metrics.jsonl'));
  const launched = await launch(run);
  assert.equal(launched.format, 'prime-rl');
  const r = await importPass({ db, runId: launched.runId, folder: launched.folder, format: 'prime-rl' });
  assert.equal(r.trajectories, 1, 'the traces are imported');
  assert.deepEqual(r.problems, [
    { file: 'metrics.jsonl', line: 0, reason: 'leads outside the run folder (a symlink); not read' },
  ]);
  assert.deepEqual(await readSeries(db, launched.runId, 'secret/value'), [], 'nothing of the outside file is stored');
  // Refused once: a second pass does not report it again.
  const again = await importPass({ db, runId: launched.runId, folder: launched.folder, format: 'prime-rl' });
  assert.equal(again.problemCount, 0);

  // A FIFO in its place: refused at once, the pass ends (it would block on open or read otherwise).
  const other = path.join(dir, 'prime-fifo');
  fs.cpSync(path.join(run, 'rollouts'), path.join(other, 'rollouts'), { recursive: true });
  execFileSync('mkfifo', [path.join(other, 'metrics.jsonl')]);
  const second = await launch(other);
  const f = await importPass({ db, runId: second.runId, folder: second.folder, format: 'prime-rl' });
  assert.deepEqual(
    f.problems.map((p) => [p.file, p.reason]),
    [['metrics.jsonl', 'a FIFO, not a regular file; not read']],
  );
});

/** A Harbor trial (ATIF v1.4) whose `extra` nests `depth` levels. */
function atifTrial(root: string, trial: string, depth = 1) {
  const doc = {
    schema_version: 'ATIF-v1.4',
    session_id: trial,
    agent: { name: 'elsewhere', version: '1' },
    steps: [
      { step_id: 1, source: 'user', message: 'What is 23*4?' },
      { step_id: 2, source: 'agent', message: 'The answer is 92.' },
    ],
    extra: { step: 1, group_id: 'g1', nested: JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) },
  };
  fs.mkdirSync(path.join(root, trial, 'agent'), { recursive: true });
  fs.mkdirSync(path.join(root, trial, 'verifier'), { recursive: true });
  fs.writeFileSync(path.join(root, trial, 'agent', 'trajectory.json'), JSON.stringify(doc));
}

test("Harbor's verifier/reward.txt behind a link out of the folder is refused; a document nested too deep is refused with its file", async () => {
  const run = path.join(dir, 'harbor');
  atifTrial(run, 'trial-1');
  atifTrial(run, 'trial-2', 200);
  const secret = path.join(dir, 'secret.txt');
  fs.writeFileSync(secret, '0.75\n');
  fs.symlinkSync(secret, path.join(run, 'trial-1', 'verifier', 'reward.txt'));
  const launched = await launch(run, 'atif');
  const r = await importPass({ db, runId: launched.runId, folder: launched.folder, format: 'atif' });
  assert.deepEqual(
    r.problems.map((p) => [p.file, p.line, p.reason]),
    [
      ['trial-1/verifier/reward.txt', 0, "leads outside the run folder (a symlink); not read (the trial's reward)"],
      ['trial-2/agent/trajectory.json', 0, 'nested deeper than 64 levels; not imported'],
    ],
  );
  const rows = await db.prisma.trajectory.findMany({ where: { runId: launched.runId } });
  assert.equal(rows.length, 1, 'trial-1 is imported');
  assert.notEqual(rows[0]!.reward, 0.75, 'without the outside reward');
});

test('a Parquet row over the record cap is refused with its file and row, the others imported; a row group over its cap is not decoded', async () => {
  const run = path.join(dir, 'trl');
  fs.mkdirSync(path.join(run, 'completions'), { recursive: true });
  const fields = [
    { name: 'step', type: 'int64' as const },
    { name: 'prompt', type: 'string' as const },
    { name: 'completion', type: 'string' as const },
    { name: 'accuracy', type: 'double' as const },
  ];
  const row = (completion: string) => ({ step: 1, prompt: 'What is 2+2?', completion, accuracy: 1 });
  fs.writeFileSync(
    path.join(run, 'completions', 'completions_00001.parquet'),
    writeParquet(fields, [row('4'), row('x'.repeat(20_000)), row('four')]),
  );
  const launched = await launch(run);
  assert.equal(launched.format, 'trl');
  const r = await importPass({
    db,
    runId: launched.runId,
    folder: launched.folder,
    format: 'trl',
    limits: { recordBytes: 10_000 },
  });
  assert.deepEqual(r.problems, [
    {
      file: 'completions/completions_00001.parquet',
      line: 2,
      reason: 'row larger than 10000 bytes as JSON; not imported',
    },
  ]);
  assert.equal(r.trajectories, 2);

  // A row group that would decode past its cap is not decoded: refused at its first row.
  const again = await launch(run);
  const g = await importPass({
    db,
    runId: again.runId,
    folder: again.folder,
    format: 'trl',
    limits: { rowGroupBytes: 10_000 },
  });
  assert.equal(g.trajectories, 0);
  assert.equal(g.problems.length, 1);
  assert.equal(g.problems[0]!.file, 'completions/completions_00001.parquet');
  assert.equal(g.problems[0]!.line, 1);
  assert.match(
    g.problems[0]!.reason,
    /^unreadable: the row group of rows 1–3 is \d+ bytes uncompressed, over the cap of 10000; not read$/,
  );
});
