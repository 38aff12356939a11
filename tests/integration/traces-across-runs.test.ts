// @postgresql: also on PostgreSQL, because the problems the runs share are found with a groupBy over two columns.
// Several runs in one trace view: the problems 2–4 runs share, one problem's trajectories in each run,
// and the share link that names exactly that — its runs' headers, its problem's trajectories and nothing else.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import { freshDatabase } from '../helpers/db.ts';
import type { Database } from '../../server/db/client.ts';
import { zodIssuesText } from '../../contracts/errors.ts';
import { createRun } from '../../server/store/runs.ts';
import { insertTrajectories, type TrajectoryInput } from '../../server/store/trajectories.ts';
import { logMetrics } from '../../server/store/metrics.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { principal, TEST_ADMIN } from '../helpers/principals.ts';
import { MAX_PROBLEM_TRAJECTORIES } from '../../contracts/traces.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
const makeCaller = createCallerFactory(appRouter);
let caller: ReturnType<typeof makeCaller>;
let runA: string, runB: string, runC: string, runD: string;

function trajectory(runId: string, problemId: string | null, step: number, sampleIndex: number): TrajectoryInput {
  const id = `tr_${runId.slice(-6)}_${problemId ?? 'none'}_${step}_${sampleIndex}`;
  return {
    id,
    runId,
    step,
    stage: 0,
    problemId,
    groupId: `g${step}_${problemId}`,
    sampleIndex,
    reward: sampleIndex === 0 ? 1 : 0,
    correct: sampleIndex === 0,
    turns: 1,
    finishReason: 'no_tool_call',
    answer: '4',
    content: {
      prompt: `What is 2+2? (${problemId})`,
      turns: [{ role: 'assistant', text: `${runId} step ${step} sample ${sampleIndex}` }],
    },
    toolCalls: [],
  };
}

beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  caller = makeCaller({ db, principal: TEST_ADMIN });
  [runA, runB, runC, runD] = await Promise.all(
    ['alpha', 'beta', 'gamma', 'delta'].map(
      async (name) => (await createRun(db, { name, kind: 'train', recipeSpec: { secret: `recipe of ${name}` } })).id,
    ),
  );
  const rows: TrajectoryInput[] = [];
  // p1 in A (steps 1, 2; two samples each), B (step 3) and C (step 1); p2 in A and B; p3 in A only; D has none.
  for (const step of [1, 2]) for (const s of [0, 1]) rows.push(trajectory(runA, 'p1', step, s));
  rows.push(trajectory(runB, 'p1', 3, 0), trajectory(runC, 'p1', 1, 1));
  rows.push(trajectory(runA, 'p2', 1, 0), trajectory(runB, 'p2', 1, 0), trajectory(runA, 'p3', 1, 0));
  rows.push(trajectory(runB, null, 1, 1));
  await insertTrajectories(db, rows);
  await logMetrics(db, runA, 1, { reward: 0.5 });
});
afterEach(async () => {
  await fresh.close();
});

const id = (runId: string, problemId: string, step: number, s: number) =>
  `tr_${runId.slice(-6)}_${problemId}_${step}_${s}`;

function clientMessage(e: unknown): string {
  if (e instanceof TRPCError && e.cause instanceof ZodError) return zodIssuesText(e.cause.issues);
  return (e as Error).message;
}
const rejectsWith = (p: Promise<unknown>, code: string, text: RegExp) =>
  assert.rejects(p, (e) => {
    assert.ok(e instanceof TRPCError, String(e));
    assert.equal(e.code, code);
    assert.match(clientMessage(e), text);
    return true;
  });
const linkNotFound = (p: Promise<unknown>) => rejectsWith(p, 'NOT_FOUND', /^share link not found$/);

test('problemsAcrossRuns: the problems held by the most runs first, with counts per run; search narrows', async () => {
  const all = await caller.trajectories.problemsAcrossRuns({ runIds: [runA, runB, runC] });
  assert.deepEqual(all, [
    { problemId: 'p1', runs: 3, counts: { [runA]: 4, [runB]: 1, [runC]: 1 } },
    { problemId: 'p2', runs: 2, counts: { [runA]: 1, [runB]: 1 } },
    { problemId: 'p3', runs: 1, counts: { [runA]: 1 } },
  ]);
  assert.deepEqual(
    (await caller.trajectories.problemsAcrossRuns({ runIds: [runB, runC], search: 'p2' })).map((p) => p.problemId),
    ['p2'],
  );
  assert.deepEqual(
    (await caller.trajectories.problemsAcrossRuns({ runIds: [runA, runB], limit: 1 })).map((p) => p.problemId),
    ['p1'],
  );
  assert.deepEqual(await caller.trajectories.problemsAcrossRuns({ runIds: [runC, runD], search: 'p3' }), []);
});

test('ofProblemAcrossRuns: a column per run in the order given, by step then sample; a run without it is empty', async () => {
  const cols = await caller.trajectories.ofProblemAcrossRuns({ runIds: [runB, runA, runD], problemId: 'p1' });
  assert.deepEqual(
    cols.map((c) => [c.run.name, c.items.map((t) => t.id), c.truncated]),
    [
      ['beta', [id(runB, 'p1', 3, 0)], false],
      ['alpha', [id(runA, 'p1', 1, 0), id(runA, 'p1', 1, 1), id(runA, 'p1', 2, 0), id(runA, 'p1', 2, 1)], false],
      ['delta', [], false],
    ],
  );
  const row = cols[1].items[0];
  assert.deepEqual(
    { reward: row.reward, correct: row.correct, turns: row.turns, split: row.split },
    { reward: 1, correct: true, turns: 1, split: 'train' },
  );
  assert.equal('content' in row, false, 'the columns list rows, not their content');
});

test('past the cap a column lists the latest steps and says so', async () => {
  const rows = Array.from({ length: MAX_PROBLEM_TRAJECTORIES + 5 }, (_, i) => trajectory(runD, 'big', i + 1, 0));
  await insertTrajectories(db, rows);
  const [d, a] = await caller.trajectories.ofProblemAcrossRuns({ runIds: [runD, runA], problemId: 'big' });
  assert.equal(d.truncated, true);
  assert.equal(d.items.length, MAX_PROBLEM_TRAJECTORIES);
  assert.deepEqual([d.items[0].step, d.items.at(-1)!.step], [6, MAX_PROBLEM_TRAJECTORIES + 5]);
  assert.deepEqual([a.items.length, a.truncated], [0, false]);
});

test('bad input names the field; an unknown run is NOT_FOUND naming it', async () => {
  const t = caller.trajectories;
  await rejectsWith(t.problemsAcrossRuns({ runIds: [runA] }), 'BAD_REQUEST', /^runIds: /);
  await rejectsWith(t.problemsAcrossRuns({ runIds: [runA, runB, runC, runD, 'run_5'] }), 'BAD_REQUEST', /^runIds: /);
  await rejectsWith(t.ofProblemAcrossRuns({ runIds: [runA, runA], problemId: 'p1' }), 'BAD_REQUEST', /distinct/);
  await rejectsWith(t.ofProblemAcrossRuns({ runIds: [runA, runB], problemId: '' }), 'BAD_REQUEST', /^problemId: /);
  await rejectsWith(t.problemsAcrossRuns({ runIds: [runA, 'run_missing'] }), 'NOT_FOUND', /run run_missing not found/);
  await rejectsWith(
    t.ofProblemAcrossRuns({ runIds: ['run_missing', runA], problemId: 'p1' }),
    'NOT_FOUND',
    /run run_missing not found/,
  );
});

test('a trace-view link opens its problem in its runs: their headers, those trajectories, nothing else', async () => {
  const { token } = await caller.share.create({ scope: 'traces', target: { runIds: [runC, runA], problemId: 'p1' } });
  const v = makeCaller({ db, principal: null }).share.view;
  const s = await v.summary({ token });
  assert.deepEqual([s.scope, s.problemId, s.runs.map((r) => r.name)], ['traces', 'p1', ['gamma', 'alpha']]);
  for (const r of s.runs) assert.equal('recipeSpec' in r, false, 'a trace-view link shows run headers, not recipes');
  const cols = await v.problemTrajectories({ token });
  assert.deepEqual(
    cols.map((c) => c.items.length),
    [1, 4],
  );
  const shown = await v.trajectory({ token, trajectoryId: id(runA, 'p1', 2, 1) });
  assert.equal(shown.content.prompt, 'What is 2+2? (p1)');
  assert.deepEqual((await v.trajectoryTokens({ token, trajectoryId: id(runC, 'p1', 1, 1) })).record, null);
  // Another problem of a linked run, the same problem in a run not linked, and everything run-wide: not found.
  await linkNotFound(v.trajectory({ token, trajectoryId: id(runA, 'p2', 1, 0) }));
  await linkNotFound(v.trajectory({ token, trajectoryId: id(runB, 'p1', 3, 0) }));
  await linkNotFound(v.trajectoryTokens({ token, trajectoryId: id(runA, 'p3', 1, 0) }));
  await linkNotFound(v.metrics({ token, runId: runA }));
  await linkNotFound(v.trajectories({ token, runId: runA, step: 1 }));
  await linkNotFound(v.events({ token }));
  // Other links do not open the trace view's columns.
  const compare = await caller.share.create({ scope: 'compare', target: { runIds: [runC, runA] } });
  await linkNotFound(v.problemTrajectories({ token: compare.token }));
  // A link outliving one of its runs opens nothing.
  await db.prisma.run.delete({ where: { id: runC } }); // runs are not deleted by the app; a database can lose one
  await linkNotFound(v.problemTrajectories({ token }));
  await linkNotFound(v.summary({ token }));
});

test('creating a trace-view link: 2–4 distinct runs that exist, and a problem one of them holds; only your runs', async () => {
  const create = (target: unknown) => caller.share.create({ scope: 'traces', target } as never);
  await rejectsWith(create({ runIds: [runA], problemId: 'p1' }), 'BAD_REQUEST', /^target\.runIds: /);
  await rejectsWith(create({ runIds: [runA, runB, runC, runD, runA] }), 'BAD_REQUEST', /target\.runIds: /);
  await rejectsWith(create({ runIds: [runA, runB] }), 'BAD_REQUEST', /^target\.problemId: /);
  await rejectsWith(create({ runIds: [runA, 'run_missing'], problemId: 'p1' }), 'BAD_REQUEST', /^target\.runIds\.1: /);
  await rejectsWith(create({ runIds: [runC, runD], problemId: 'p2' }), 'BAD_REQUEST', /^target\.problemId: none of/);
  const link = await create({ runIds: [runA, runB, runC, runD], problemId: 'p2' });
  assert.deepEqual(link.target, { runIds: [runA, runB, runC, runD], problemId: 'p2' });
  // A researcher shares only their own runs (these were made by no one).
  const researcher = makeCaller({ db, principal: principal('researcher') });
  await assert.rejects(
    researcher.share.create({ scope: 'traces', target: { runIds: [runA, runB], problemId: 'p1' } }),
    (e) => e instanceof TRPCError && e.code === 'FORBIDDEN',
  );
  const listed = await caller.share.list({ runId: runD });
  assert.deepEqual(
    listed.map((l) => [l.scope, l.target]),
    [['traces', { runIds: [runA, runB, runC, runD], problemId: 'p2' }]],
  );
});
