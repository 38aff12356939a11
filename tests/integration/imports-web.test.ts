/**
 * @no-database (the served app keeps its own SQLite file).
 * Runs trained elsewhere through the served app, as `npm start` serves it (the web server and one worker):
 * the ingest API (401 without a token, 403 for a viewer or another researcher's run, 415, 413 over the body limit,
 * ATIF and Toolsmith's own shape in one batch, a malformed item refused by index and the rest stored, the same batch
 * again storing nothing, `done` closing the run, 409 after), and a followed folder: the worker's import job picks up
 * appended lines within seconds, and after a restart of the whole app goes on from the stored offsets without
 * repeating or skipping a line.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createToken } from '../../server/auth/tokens.ts';
import { createUser } from '../../server/auth/users.ts';
import { type Database, openDatabase } from '../../server/db/client.ts';
import { launchImport } from '../../server/imports/launch.ts';
import { getRunStatus } from '../../server/store/runs.ts';
import { startWebServer, type WebServer, webBuilt } from '../helpers/web-server.ts';

const skip = webBuilt() ? false : 'the web app is not built (npm test builds it)';
const MAX_BODY = 256 * 1024;
let web: WebServer | null = null;
let db: Database;
let dataDir: string;
let importRoot: string;
const tokens: Record<string, string> = {};

function env() {
  return {
    TOOLSMITH_DATA_DIR: dataDir,
    TOOLSMITH_IMPORT_ROOTS: importRoot,
    TOOLSMITH_IMPORT_POLL_MS: '200',
    TOOLSMITH_MAX_BODY_BYTES: String(MAX_BODY),
    TOOLSMITH_LEASE_SECONDS: '6',
  };
}

before(async () => {
  if (skip) return;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-ingest-'));
  importRoot = path.join(dataDir, 'imports');
  fs.mkdirSync(importRoot);
  web = await startWebServer(env(), 'toolsmith-ingest-web-');
  db = await openDatabase(`file:${path.join(dataDir, 'toolsmith.db')}`);
  for (const [who, role] of [
    ['res', 'researcher'],
    ['other', 'researcher'],
    ['view', 'viewer'],
  ] as const) {
    await createUser(db, { email: `${who}@lab.test`, role });
    // Each the widest scope its role can use (a write token of a viewer still acts as a viewer).
    tokens[who] = (await createToken(db, { email: `${who}@lab.test`, name: 'ingest', scope: 'write' })).token;
  }
});
after(async () => {
  await db?.close();
  await web?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function post(url: string, body: unknown, who?: string, type = 'application/json') {
  const res = await fetch(`${web!.base}${url}`, {
    method: 'POST',
    headers: { 'content-type': type, ...(who ? { authorization: `Bearer ${tokens[who]}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const atif = (id: string, reward: number) => ({
  schema_version: 'ATIF-v1.4',
  session_id: id,
  agent: { name: 'my-loop', version: '0.1' },
  steps: [
    { step_id: 1, source: 'user', message: 'What is 23*4?' },
    {
      step_id: 2,
      source: 'agent',
      message: 'Let me compute it.',
      tool_calls: [{ tool_call_id: 'c1', function_name: 'python', arguments: { code: 'print(23*4)' } }],
      observation: { results: [{ source_call_id: 'c1', content: '92' }] },
      metrics: { prompt_token_ids: [1, 2, 3], completion_token_ids: [7, 8, 9], logprobs: [-0.1, -0.2, -0.3] },
    },
    { step_id: 3, source: 'agent', message: 'The answer is 92.' },
  ],
  extra: { reward, step: 4, group_id: 'q-23x4' },
});
const own = {
  id: 'own-1',
  step: 4,
  groupId: 'q-23x4',
  messages: [
    { role: 'user', content: 'What is 23*4?' },
    { role: 'assistant', content: '90' },
  ],
  promptMessages: 1,
  reward: 0,
  rewards: { correct: 0, format: 1 },
  tokens: { ids: [5, 6], rolloutLogprobs: [-1.5, null] },
};

test('the ingest API: tokens and roles, limits, ATIF and the own shape, idempotent by id, done closes the run', {
  skip,
}, async () => {
  // No credentials at all: the app's gate refuses a write that is neither same-origin nor a bearer's.
  assert.equal((await post('/api/ingest/runs', { name: 'x' })).status, 403);
  const forged = await fetch(`${web!.base}/api/ingest/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer tsk_not-a-token' },
    body: '{"name":"x"}',
  });
  assert.equal(forged.status, 401);
  const viewer = await post('/api/ingest/runs', { name: 'x' }, 'view');
  assert.deepEqual(
    [viewer.status, (viewer.body.error as { message: string }).message],
    [403, 'pushing runs needs the researcher role; view@lab.test is a viewer'],
  );
  // A researcher's read token pushes nothing (scoped tokens); the answer names the scope to ask for.
  tokens.resRead = (await createToken(db, { email: 'res@lab.test', name: 'metrics script' })).token;
  const readOnly = await post('/api/ingest/runs', { name: 'x' }, 'resRead');
  assert.deepEqual(
    [readOnly.status, (readOnly.body.error as { message: string }).message],
    [403, "pushing runs needs a write token; this one's scope is read (create one with --scope write)"],
  );
  assert.equal((await post('/api/ingest/runs', 'name=x', 'res', 'application/x-www-form-urlencoded')).status, 415);
  const bad = await post('/api/ingest/runs', { name: '' }, 'res');
  assert.equal(bad.status, 400);
  assert.match(JSON.stringify(bad.body), /name/);
  const opened = await post('/api/ingest/runs', { name: 'pushed from a loop', framework: 'my-loop' }, 'res');
  assert.equal(opened.status, 200);
  const runId = opened.body.runId as string;

  const batch = { trajectories: [atif('a-1', 1), own, { id: 'no-messages', step: 1, groupId: 'g' }] };
  const first = await post(`/api/ingest/runs/${runId}/batch`, batch, 'res');
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.stored, 2);
  assert.deepEqual(
    (first.body.problems as { index: number }[]).map((p) => p.index),
    [2],
  );
  assert.match(JSON.stringify(first.body.problems), /messages/);
  const again = await post(`/api/ingest/runs/${runId}/batch`, batch, 'res');
  assert.deepEqual([again.body.stored, again.body.duplicates], [0, 2]);
  assert.equal((await post(`/api/ingest/runs/${runId}/batch`, batch, 'other')).status, 403);
  assert.equal((await post(`/api/ingest/runs/${runId}/batch`, batch)).status, 403);
  const big = { trajectories: [{ ...own, id: 'big', messages: [{ role: 'user', content: 'x'.repeat(MAX_BODY) }] }] };
  assert.equal((await post(`/api/ingest/runs/${runId}/batch`, big, 'res')).status, 413);

  const rows = await db.prisma.trajectory.findMany({ where: { runId }, orderBy: { id: 'asc' } });
  assert.equal(rows.length, 2);
  const pushedAtif = rows.find((r) => r.reward === 1)!;
  assert.equal(pushedAtif.step, 4);
  assert.equal(pushedAtif.groupId, 'q-23x4');
  const turns = JSON.parse(pushedAtif.content).turns;
  assert.equal(turns[0].tool.arguments.code, 'print(23*4)');
  assert.equal(turns[0].tool.text, '92');

  const done = await post(`/api/ingest/runs/${runId}/batch`, { trajectories: [atif('a-2', 0)], done: true }, 'res');
  assert.equal(done.body.stored, 1);
  assert.equal(await getRunStatus(db, runId), 'succeeded');
  assert.equal((await post(`/api/ingest/runs/${runId}/batch`, { trajectories: [] }, 'res')).status, 409);
  const audited = await db.prisma.auditLog.count({ where: { action: 'ingest.batch' } });
  assert.ok(audited >= 5, `every batch call is audited (${audited})`);
});

function verlLine(step: number, i: number) {
  return `${JSON.stringify({ input: `q${i % 3}`, output: `a${i}`, score: i % 2, step, uid: `g${i % 3}` })}\n`;
}

async function countOf(runId: string) {
  return db.prisma.trajectory.count({ where: { runId } });
}

/** Poll until `what` holds; `ms` bounds the wait for something that must come (it measures nothing). */
async function until(what: () => Promise<boolean>, ms: number, label: string) {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${label}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a followed folder: the worker picks up appended lines, and after a restart of the app goes on without repeats or gaps', {
  skip,
}, async () => {
  const folder = path.join(importRoot, 'verl-run');
  fs.mkdirSync(path.join(folder, 'rollout'), { recursive: true });
  const file = path.join(folder, 'rollout', '1.jsonl');
  fs.writeFileSync(file, verlLine(1, 0));
  const launched = await launchImport(db, { path: folder, follow: true }, { roots: [importRoot], enqueue: true });
  await until(async () => (await countOf(launched.runId)) === 1, 60_000, 'the worker follows the run');
  for (let i = 1; i <= 10; i++) fs.appendFileSync(file, verlLine(1, i));
  await until(async () => (await countOf(launched.runId)) === 11, 60_000, 'appended lines are picked up');

  await web!.stop();
  web = null;
  // Written while Toolsmith is down: read after the restart, once.
  for (let i = 11; i <= 20; i++) fs.appendFileSync(file, verlLine(2, i));
  web = await startWebServer(env(), 'toolsmith-ingest-web-');
  await until(async () => (await countOf(launched.runId)) === 21, 90_000, 'the restarted worker goes on').catch(
    async (e) => {
      const jobs = await db.prisma.job.findMany({ where: { runId: launched.runId } });
      throw new Error(
        `${(e as Error).message}: ${await countOf(launched.runId)} stored; jobs ${JSON.stringify(jobs)}; app said:\n${web?.output().slice(-3000)}`,
      );
    },
  );
  fs.appendFileSync(file, verlLine(3, 21));
  await until(async () => (await countOf(launched.runId)) === 22, 60_000, 'and keeps following');
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(await countOf(launched.runId), 22, 'no line twice');
  assert.equal(await getRunStatus(db, launched.runId), 'running');
});
