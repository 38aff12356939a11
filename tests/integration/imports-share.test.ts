/**
 * A share link of an imported run shows no server folder, worker host name or pid: the
 * shared summary, event log, step page and trajectory, as the signed-out holder gets them through the API, hold
 * none of them, while a signed-in researcher's run log still does. The redaction's own cases are in
 * tests/unit/share-private-parts.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import type { Database } from '../../server/db/client.ts';
import { launchImport } from '../../server/imports/launch.ts';
import { readEvents } from '../../server/store/events.ts';
import { setRunStatus } from '../../server/store/runs.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { importPass } from '../../workers/imports/importer.ts';
import { freshDatabase } from '../helpers/db.ts';
import { principal } from '../helpers/principals.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let dir: string;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-import-share-'));
});
afterEach(async () => {
  await fresh.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("a shared imported run's summary, log, step and trajectory name no server folder, host or pid", async () => {
  const folder = path.join(dir, 'secret-project', 'verl');
  fs.mkdirSync(path.join(folder, 'rollout'), { recursive: true });
  const line = { input: 'what is 1 + 1?', output: '2', gts: '2', score: 1, step: 1 };
  fs.writeFileSync(path.join(folder, 'rollout', '1.jsonl'), `${JSON.stringify(line)}\nnot json\n`);
  const launched = await launchImport(db, { path: folder, format: 'verl' }, { roots: null, enqueue: false });
  const host = 'build-host-7';
  // As the worker writes them (workers/worker.ts): its id is the host name and pid.
  await setRunStatus(db, launched.runId, 'running', { message: `worker ${host}-4242 started import (attempt 1/3)` });
  await importPass({ db, runId: launched.runId, folder: launched.folder, format: 'verl' });
  await setRunStatus(db, launched.runId, 'failed', { error: `ENOENT: ${launched.folder}/rollout/2.jsonl vanished` });

  const own = JSON.stringify(await readEvents(db, launched.runId, 0, 100));
  assert.ok(own.includes(launched.folder) && own.includes(`${host}-4242`), 'the owner still sees both');

  const admin = createCallerFactory(appRouter)({ db, principal: principal('admin') });
  const link = await admin.share.create({ scope: 'run', target: { runId: launched.runId } });
  const anon = createCallerFactory(appRouter)({ db, principal: null }).share.view;
  const summary = await anon.summary({ token: link.token });
  const events = await anon.events({ token: link.token });
  const page = await anon.trajectories({ token: link.token, runId: launched.runId, step: 1 });
  const trajectory = await anon.trajectory({ token: link.token, trajectoryId: page.items[0]!.id });
  const shared = JSON.stringify({ summary, events, page, trajectory });
  assert.ok(shared.includes(launched.runId), 'the payload is the shared run');
  assert.ok(events.events.length > 3, 'with its log');
  for (const secret of [launched.folder, dir, 'secret-project', host, '4242', os.hostname()])
    assert.ok(!shared.includes(secret), `the shared payload names ${secret}`);
  assert.ok(shared.includes('(the imported folder)') && shared.includes('a worker started import'));
});
