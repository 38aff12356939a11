/**
 * Foreign runs as their producers leave them on disk, read by the importer into the real database:
 * a real TRL GRPOTrainer run (CPU, a tiny random Llama, two reward functions with reward_weights,
 * log_completions=True) writes the completions parquet that is imported, the reward being the weighted sum of the
 * components kept beside it; an ART trajectory log written as ART writes it (zstd Parquet through pyarrow); a prime-rl
 * folder (traces and metrics.jsonl) and an rLLM episode folder from the records the mappers' unit tests follow;
 * verl's own dump function, from its pinned wheel (PyPI), writing the JSONL that is imported.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import type { Database } from '../../server/db/client.ts';
import { launchImport } from '../../server/imports/launch.ts';
import { readSeries } from '../../server/store/metrics.ts';
import { importPass } from '../../workers/imports/importer.ts';
import { freshDatabase } from '../helpers/db.ts';
import { artRow, primeEpisode, rllmDoc } from '../helpers/foreign-records.ts';
import { ROOT } from '../helpers/proc.ts';
import { downloadWheel, type PinnedWheel } from '../../workers/packages/pip-download.ts';

const PYTHON = path.join(ROOT, '.venv/bin/python');
let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let dir: string;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-producers-'));
});
afterEach(async () => {
  await fresh.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function importFolder(folder: string, opts: { weights?: Record<string, number> } = {}) {
  const launched = await launchImport(db, { path: folder }, { roots: null, enqueue: false });
  const r = await importPass({ db, runId: launched.runId, folder: launched.folder, format: launched.format, ...opts });
  const rows = await db.prisma.trajectory.findMany({ where: { runId: launched.runId }, orderBy: { id: 'asc' } });
  return { launched, r, rows, contents: rows.map((t) => JSON.parse(t.content)) };
}

test("TRL's GRPOTrainer writes its completions parquet; the import weighs the reward columns by reward_weights", async () => {
  const out = path.join(dir, 'trl');
  const run = spawnSync(PYTHON, [path.join(ROOT, 'tests/helpers/trl_grpo_producer.py'), out, '3'], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  assert.equal(run.status, 0, run.stderr.slice(-3000));
  const written = fs.readdirSync(path.join(out, 'completions')).sort();
  assert.deepEqual(written, ['completions_00001.parquet', 'completions_00002.parquet', 'completions_00003.parquet']);
  const { launched, r, rows, contents } = await importFolder(out, { weights: { digits: 1, short: 0.5 } });
  assert.equal(launched.format, 'trl', 'detected from the layout');
  assert.deepEqual(r.problems, []);
  assert.equal(rows.length, 12, '4 completions per step, 3 steps');
  assert.deepEqual([...new Set(rows.map((t) => t.step))].sort(), [1, 2, 3]);
  for (const [i, t] of rows.entries()) {
    const f = contents[i].imported.trajectory;
    assert.deepEqual(Object.keys(f.rewards).sort(), ['digits', 'short']);
    assert.ok(Math.abs(t.reward - (f.rewards.digits + 0.5 * f.rewards.short)) < 1e-9, 'the weighted sum');
    assert.equal(typeof f.advantage, 'number');
    assert.match(contents[i].prompt, /^What is \d\+\d\? $/);
  }
  // One prompt per step, its four completions one group.
  for (const step of [1, 2, 3])
    assert.equal(new Set(rows.filter((t) => t.step === step).map((t) => t.groupId)).size, 1);
  assert.equal((await readSeries(db, launched.runId, 'rollout/accuracy')).length, 3);
});

test('ART: a zstd Parquet trajectory log, as ART writes it, is read with its calls, results, groups and splits', async () => {
  const folder = path.join(dir, 'art');
  const rows = [artRow, { ...artRow, group_index: 3, reward: 0.1 }];
  const py = `
import json, sys, pyarrow as pa, pyarrow.parquet as pq
rows = json.loads(sys.stdin.read())
for split, step in (("train", 3), ("val", 4)):
    import os
    os.makedirs(f"${folder}/trajectories/{split}", exist_ok=True)
    # One row per row group: the importer reads a group at a time, numbering rows across the file.
    pq.write_table(pa.Table.from_pylist(rows), f"${folder}/trajectories/{split}/{step:04d}.parquet", compression="zstd",
                   row_group_size=1)
`;
  const w = spawnSync(PYTHON, ['-c', py], { input: JSON.stringify(rows), encoding: 'utf8' });
  assert.equal(w.status, 0, w.stderr);
  const meta = spawnSync(
    PYTHON,
    [
      '-c',
      `import pyarrow.parquet as pq; m = pq.ParquetFile("${folder}/trajectories/train/0003.parquet").metadata; print(m.row_group(0).column(0).compression, m.num_row_groups)`,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(meta.stdout.trim(), 'ZSTD 2');
  const { launched, r, rows: stored, contents } = await importFolder(folder);
  assert.equal(launched.format, 'art');
  assert.deepEqual(r.problems, []);
  assert.equal(stored.length, 4);
  assert.deepEqual(stored.map((t) => `${t.split}:${t.step}`).sort(), ['eval:4', 'eval:4', 'train:3', 'train:3']);
  assert.deepEqual(
    stored
      .filter((t) => t.split === 'train')
      .map((t) => t.sampleIndex)
      .sort(),
    [1, 2],
    'rows numbered across the row groups',
  );
  const c = contents[stored.findIndex((t) => t.reward === 0.8 && t.split === 'train')];
  assert.equal(c.turns[0].tool.name, 'search');
  assert.equal(c.turns[0].tool.text, '3 results');
  assert.equal(c.turns[1].text, 'Found it.');
});

test('prime-rl traces with metrics.jsonl, and rLLM episodes, read from their folders', async () => {
  const prime = path.join(dir, 'prime');
  fs.mkdirSync(path.join(prime, 'rollouts/step_42/train/all'), { recursive: true });
  fs.writeFileSync(path.join(prime, 'rollouts/step_42/train/all/traces.jsonl'), `${JSON.stringify(primeEpisode)}\n`);
  fs.writeFileSync(
    path.join(prime, 'metrics.jsonl'),
    `${JSON.stringify({ step: 41, time: 1760000000, 'reward/mean': 0.25, 'loss/mean': 1.5 })}\n${JSON.stringify({ step: 42, time: 1760000100, 'reward/mean': 0.5, 'loss/mean': 1.2 })}\n`,
  );
  const p = await importFolder(prime);
  assert.equal(p.launched.format, 'prime-rl');
  assert.deepEqual(p.r.problems, []);
  assert.equal(p.rows.length, 1);
  assert.equal(p.rows[0]!.step, 42);
  assert.equal(p.rows[0]!.groupId, '7');
  const tokens = await db.prisma.trajectoryTokens.findUnique({ where: { trajectoryId: p.rows[0]!.id } });
  assert.ok(tokens && tokens.n > 0, 'the token record is stored for the token view');
  assert.deepEqual(
    (await readSeries(db, p.launched.runId, 'reward/mean')).map((x) => [x.step, x.value]),
    [
      [41, 0.25],
      [42, 0.5],
    ],
  );

  const rllm = path.join(dir, 'rllm');
  fs.mkdirSync(path.join(rllm, 'episodes/train_step_3_epoch_0'), { recursive: true });
  fs.writeFileSync(path.join(rllm, 'episodes/train_step_3_epoch_0/task-17_2.json'), JSON.stringify(rllmDoc));
  fs.writeFileSync(path.join(rllm, 'episodes/train_step_3_epoch_0/batch_summary.json'), '{"n": 1}');
  const e = await importFolder(rllm);
  assert.equal(e.launched.format, 'rllm');
  assert.deepEqual(e.r.problems, []);
  assert.deepEqual(
    e.rows.map((t) => t.step),
    [3, 3],
    'solver and judge, the batch summary not an episode',
  );
});

/** verl 0.9.1's wheel, pinned: its dump function is read from it (tests/helpers/verl_dump.py says why). */
const VERL: PinnedWheel = {
  package: 'verl',
  version: '0.9.1',
  wheel: 'verl-0.9.1-py3-none-any.whl',
  wheelSha256: 'db6e6f2a8d9d5808d9ec32d357a42319fdc6967df688ff9d9810050f49bfdd14',
};

test("verl's own dump function writes {step}.jsonl for rollouts and validation; the import groups by input", async () => {
  const wheel = await downloadWheel(VERL, dir, PYTHON);
  const out = path.join(dir, 'verl');
  const run = spawnSync(PYTHON, [path.join(ROOT, 'tests/helpers/verl_dump.py'), wheel, out], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /Dumped generations to .*rollout\/1\.jsonl/, "verl's own message");
  const { launched, r, rows, contents } = await importFolder(out);
  assert.equal(launched.format, 'verl');
  assert.deepEqual(r.problems, []);
  assert.equal(rows.length, 13);
  assert.equal(rows.filter((t) => t.split === 'eval').length, 1);
  assert.equal(new Set(rows.filter((t) => t.step === 1 && t.split === 'train').map((t) => t.groupId)).size, 2);
  const c = contents.find((x) => x.imported.trajectory.rewards?.acc === 1)!;
  assert.equal(typeof c.imported.trajectory.metadata.pred, 'string', 'a text extra is metadata, not a reward');
});
