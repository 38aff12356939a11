// Share links are the only way in without signing in: a step or trajectory link shows a header of
// its run, not the run (no recipe, seed, code version or error text); and every call of a tRPC batch is
// authorised on its own, over the real fetch adapter, so nothing rides behind a share.view.* path.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { freshDatabase } from '../helpers/db.ts';
import type { Database } from '../../server/db/client.ts';
import { createRun, setRunStatus } from '../../server/store/runs.ts';
import { insertTrajectories } from '../../server/store/trajectories.ts';
import { createShareLink } from '../../server/share/links.ts';
import type { SharedRunFull } from '../../contracts/share.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let runId: string;
let otherRun: string;
const SECRET_ERR = 'Traceback: secret-path /home/alice/keys';

beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  runId = (
    await createRun(db, { name: 'alpha', kind: 'train', seed: 1234, recipeSpec: { secretPrompt: 'system prompt X' } })
  ).id;
  otherRun = (await createRun(db, { name: 'beta', kind: 'train', recipeSpec: { other: true } })).id;
  await setRunStatus(db, runId, 'failed', { error: SECRET_ERR });
  await insertTrajectories(db, [
    {
      id: 'tr_s1',
      runId,
      step: 1,
      stage: 0,
      groupId: 'g1',
      sampleIndex: 0,
      reward: 1,
      correct: true,
      finishReason: 'stop',
      answer: '1',
      content: { turns: [{ role: 'assistant', text: 'hi' }] },
      toolCalls: [],
    },
  ]);
});
afterEach(async () => {
  await fresh.close();
});

const anonymous = () => createCallerFactory(appRouter)({ db, principal: null });

test('a step or trajectory link shows its run header only: no recipe, seed, code version or error', async () => {
  for (const link of [
    await createShareLink(db, { scope: 'step', target: { runId, step: 1 } }),
    await createShareLink(db, { scope: 'trajectory', target: { trajectoryId: 'tr_s1' } }),
  ]) {
    const s = await anonymous().share.view.summary({ token: link.token });
    assert.equal(s.runs.length, 1);
    const run = s.runs[0]!;
    assert.equal(run.id, runId);
    assert.equal(run.name, 'alpha');
    assert.equal(run.status, 'failed');
    for (const k of ['recipeSpec', 'seed', 'codeVersion', 'error'])
      assert.ok(!(k in run), `${link.scope} link returned ${k}`);
    const wire = JSON.stringify(s);
    assert.ok(!wire.includes('system prompt X') && !wire.includes('secret-path') && !wire.includes('1234'), wire);
  }
});

test('a run link names the run: recipe, seed, code version and error are there; a compare link only its runs', async () => {
  const run = await createShareLink(db, { scope: 'run', target: { runId } });
  const s = await anonymous().share.view.summary({ token: run.token });
  const r = s.runs[0] as SharedRunFull;
  assert.ok('recipeSpec' in r);
  assert.deepEqual(r.recipeSpec, { secretPrompt: 'system prompt X' });
  assert.equal(r.seed, 1234);
  assert.equal(r.error, SECRET_ERR);
  assert.equal(typeof r.codeVersion, 'string');

  const third = (await createRun(db, { name: 'gamma', kind: 'train' })).id;
  const cmp = await createShareLink(db, { scope: 'compare', target: { runIds: [runId, otherRun] } });
  const c = await anonymous().share.view.summary({ token: cmp.token });
  assert.deepEqual(
    c.runs.map((x) => x.id),
    [runId, otherRun],
  );
  assert.ok(!JSON.stringify(c).includes(third));
  await assert.rejects(anonymous().share.view.metrics({ token: cmp.token, runId: third }), /share link not found/);
});

/** The real fetch adapter behind /api/trpc, with no session: what a share-link holder reaches. */
function handle(url: string, init?: RequestInit) {
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req: new Request(url, init),
    router: appRouter,
    createContext: async () => ({ db, principal: null }),
  });
}

test('batch smuggling: share.view.summary,runs.list answers the share call and 401 for runs.list', async () => {
  const { token } = await createShareLink(db, { scope: 'step', target: { runId, step: 1 } });
  // No transformer: batch inputs are plain JSON keyed by position.
  const input = encodeURIComponent(JSON.stringify({ 0: { token }, 1: {} }));
  const res = await handle(`http://localhost/api/trpc/share.view.summary,runs.list?batch=1&input=${input}`);
  const body = (await res.json()) as {
    result?: { data: unknown };
    error?: { data: { httpStatus: number; code: string } };
  }[];
  assert.equal(body.length, 2);
  assert.ok(body[0]!.result, `share call failed: ${JSON.stringify(body[0])}`);
  assert.ok(JSON.stringify(body[0]!.result).includes(runId));
  assert.equal(body[1]!.error?.data.code, 'UNAUTHORIZED');
  assert.equal(body[1]!.error?.data.httpStatus, 401);
  assert.ok(!JSON.stringify(body).includes(otherRun), 'runs.list leaked the other run');
  // A bad token in the batch is the share call's own NOT_FOUND; runs.list still answers 401.
  const bad = (await (
    await handle(
      `http://localhost/api/trpc/share.view.summary,runs.list?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: { token: 'x'.repeat(43) }, 1: {} }))}`,
    )
  ).json()) as typeof body;
  assert.deepEqual(
    bad.map((b) => b.error?.data.code),
    ['NOT_FOUND', 'UNAUTHORIZED'],
  );
});

test('mutations in a batch answer 401 without a principal and change nothing (a share token in the input is no credential)', async () => {
  const { token, id } = await createShareLink(db, { scope: 'run', target: { runId } });
  const res = await handle('http://localhost/api/trpc/runs.cancel,share.create,share.revoke?batch=1', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      0: { runId, token },
      1: { scope: 'run', target: { runId: otherRun }, token },
      2: { id, token },
    }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { data: { code: string; httpStatus: number } } }[];
  assert.deepEqual(
    body.map((b) => b.error?.data.code),
    ['UNAUTHORIZED', 'UNAUTHORIZED', 'UNAUTHORIZED'],
    JSON.stringify(body),
  );
  const run = await db.prisma.run.findUnique({ where: { id: runId } });
  assert.equal(run!.status, 'failed', 'the smuggled cancel ran');
  const links = await db.prisma.shareLink.findMany();
  assert.equal(links.length, 1, 'the smuggled share.create ran');
  assert.equal(links[0]!.revokedAt, null, 'the smuggled share.revoke ran');
});
