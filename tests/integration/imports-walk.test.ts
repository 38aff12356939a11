/**
 * The web app's Import run never walks the folder on its request: it checks the path against the import roots and
 * queues the run; the import job walks the folder, finds the format from the layout (stored on the run's import
 * source, so the run page names it) and fails the run, saying why, when the folder holds no rollouts it reads. A real
 * worker runs the real job.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { FORMAT_FROM_LAYOUT } from '../../contracts/foreign.ts';
import type { Database } from '../../server/db/client.ts';
import { readEvents } from '../../server/store/events.ts';
import { getImportSource } from '../../server/store/imports.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { importRun } from '../../workers/handlers/import.ts';
import { Worker } from '../../workers/worker.ts';
import { freshDatabase } from '../helpers/db.ts';
import { principal } from '../helpers/principals.ts';
import { waitRunEnded } from '../helpers/runs.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let root: string;
let previous: string | undefined;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-import-walk-'));
  previous = process.env.TOOLSMITH_IMPORT_ROOTS;
  process.env.TOOLSMITH_IMPORT_ROOTS = root;
});
afterEach(async () => {
  if (previous === undefined) delete process.env.TOOLSMITH_IMPORT_ROOTS;
  else process.env.TOOLSMITH_IMPORT_ROOTS = previous;
  await fresh.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const researcher = () => createCallerFactory(appRouter)({ db, principal: principal('researcher') });

/** Run the queued import jobs with a real worker (the import handler only) until the run ends. */
async function runImportJob(runId: string) {
  const lines: string[] = [];
  const worker = new Worker(
    db,
    { import: importRun },
    { id: 'walk-1', leaseMs: 5000, heartbeatMs: 200, pollMs: 20, shutdownGraceMs: 1000, log: (l) => lines.push(l) },
  );
  const loop = worker.start();
  try {
    return await waitRunEnded(db, runId, { timeoutMs: 60_000, detail: () => lines.join('\n') });
  } finally {
    await worker.stop();
    await loop;
  }
}

function writeVerl(folder: string) {
  fs.mkdirSync(path.join(folder, 'rollout'), { recursive: true });
  const line = (i: number) =>
    JSON.stringify({
      input: `what is ${i} + 1?`,
      output: `It is ${i + 1}.`,
      gts: String(i + 1),
      score: 1,
      step: 1,
      uid: `p${i}`,
    });
  fs.writeFileSync(path.join(folder, 'rollout', '1.jsonl'), `${[0, 1, 2].map(line).join('\n')}\n`);
}

test('a run started without a format: queued at once with none, the job finds verl from the layout and reads it', async () => {
  const folder = path.join(root, 'verl-run');
  writeVerl(folder);
  const r = await researcher().runs.importFolder({ path: folder });
  assert.deepEqual(r.format, null, 'the request did not walk the folder');
  assert.equal((await getImportSource(db, r.runId))?.format, FORMAT_FROM_LAYOUT);
  const [row] = await researcher().runs.list();
  assert.deepEqual([row?.id, row?.status, row?.importFormat], [r.runId, 'queued', FORMAT_FROM_LAYOUT]);

  const ended = await runImportJob(r.runId);
  assert.equal(ended.status, 'succeeded', ended.error ?? '');
  assert.equal(await db.prisma.trajectory.count({ where: { runId: r.runId } }), 3);
  assert.equal((await getImportSource(db, r.runId))?.format, 'verl');
  assert.equal((await researcher().runs.get({ runId: r.runId })).importFormat, 'verl');
  const said = (await readEvents(db, r.runId, 0, 500)).map((e) => e.message);
  assert.ok(said.includes("verl rollouts, from the folder's layout"), said.join('\n'));
});

test('what a folder lacks is said by the job, which fails the run for good; the request only checks the path', async () => {
  const cases: [string, (folder: string) => void, { format?: 'verl' }, RegExp][] = [
    ['empty', () => {}, {}, /no rollout files of a known format \(.*\) in 0 files: name the format with --format/],
    [
      'notes only',
      (f) => fs.writeFileSync(path.join(f, 'notes.txt'), 'x'),
      { format: 'verl' },
      /^no verl rollout files in .*notes only \(expected names like/,
    ],
    [
      'pickles',
      (f) => fs.writeFileSync(path.join(f, 'batch_0.pt'), 'x'),
      {},
      /holds pickled training batches \(batch_0\.pt\)/,
    ],
  ];
  for (const [name, fill, extra, why] of cases) {
    const folder = path.join(root, name);
    fs.mkdirSync(folder);
    fill(folder);
    const r = await researcher().runs.importFolder({ path: folder, ...extra });
    const ended = await runImportJob(r.runId);
    assert.equal(ended.status, 'failed', name);
    assert.match(ended.error ?? '', why, name);
    const job = await db.prisma.job.findFirstOrThrow({ where: { runId: r.runId } });
    assert.equal(job.attempts, 1, `${name}: refused for good, not retried`);
  }
  // Outside the roots the request itself refuses, as before.
  await assert.rejects(researcher().runs.importFolder({ path: os.tmpdir() }), /not inside an import root/);
});
