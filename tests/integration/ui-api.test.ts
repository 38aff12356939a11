// @postgresql: also on PostgreSQL, because trajectories are written and searched with dialect-specific SQL (server/store/trajectories.ts).
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import { freshDatabase } from '../helpers/db.ts';
import type { Database } from '../../server/db/client.ts';
import { zodIssuesText } from '../../contracts/errors.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { TEST_ADMIN } from '../helpers/principals.ts';
import { createRun } from '../../server/store/runs.ts';
import { logMetrics } from '../../server/store/metrics.ts';
import { insertTrajectories, type TrajectoryInput } from '../../server/store/trajectories.ts';
import { createRecipeVersion } from '../../server/store/recipes.ts';
import { MICRO, MICRO_INPUT, EMBEDDED_ARITH_INPUT } from '../../server/recipes/defaults.ts';
import { parseRecipe, stageBoundaries } from '../../contracts/recipe.ts';
import { diffSpecs } from '../../contracts/recipe-diff.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
const makeCaller = createCallerFactory(appRouter);
let caller: ReturnType<typeof makeCaller>;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  caller = makeCaller({ db, principal: TEST_ADMIN });
});
afterEach(async () => {
  await fresh.close();
});

/** The one-line message a client sees (the errorFormatter turns zod issues into the same text). */
function clientMessage(e: unknown): string {
  if (e instanceof TRPCError && e.cause instanceof ZodError) return zodIssuesText(e.cause.issues);
  return (e as Error).message;
}
async function badRequest(p: Promise<unknown>, field: string) {
  await assert.rejects(p, (e) => {
    assert.ok(e instanceof TRPCError, String(e));
    assert.equal(e.code, 'BAD_REQUEST');
    assert.match(clientMessage(e), new RegExp(`(^|; |: )${field.replace(/\./g, '\\.')}: `), clientMessage(e));
    return true;
  });
}
async function notFound(p: Promise<unknown>) {
  await assert.rejects(p, (e) => e instanceof TRPCError && e.code === 'NOT_FOUND' && /not found/.test(e.message));
}
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

// ---------------------------------------------------------------- diff (pure)

test('diffSpecs: leaf paths, arrays by index, added/removed, key order ignored', () => {
  assert.deepEqual(diffSpecs({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }), []);
  assert.deepEqual(
    diffSpecs(
      {
        name: 'x',
        stages: [
          { lr: 1, n: 2 },
          { lr: 3, roc: { on: true } },
        ],
        eval: { k: 2 },
        gone: null,
      },
      { name: 'x', stages: [{ lr: 1, n: 2 }, { lr: 4, roc: { on: false } }, { lr: 5 }], eval: { k: 2, extra: 'y' } },
    ),
    [
      { path: 'eval.extra', kind: 'added', b: 'y' },
      { path: 'gone', kind: 'removed', a: null },
      { path: 'stages.1.lr', kind: 'changed', a: 3, b: 4 },
      { path: 'stages.1.roc.on', kind: 'changed', a: true, b: false },
      { path: 'stages.2', kind: 'added', b: { lr: 5 } },
    ],
  );
  // A type change is one entry; null is a value, not an absence.
  assert.deepEqual(diffSpecs({ d: 1 }, { d: { x: 1 } }), [{ path: 'd', kind: 'changed', a: 1, b: { x: 1 } }]);
  assert.deepEqual(diffSpecs({ d: null }, { d: 0 }), [{ path: 'd', kind: 'changed', a: null, b: 0 }]);
  assert.deepEqual(diffSpecs([1], { 0: 1 }), [{ path: '', kind: 'changed', a: [1], b: { 0: 1 } }]);
  assert.deepEqual(diffSpecs(1, 2), [{ path: '', kind: 'changed', a: 1, b: 2 }]);
});

test('stageBoundaries: cumulative 1-based steps from stageSteps; [] without stages', () => {
  // MICRO: sft 2 epochs × ⌈60/4⌉ = 30 steps, then rl 2 steps.
  assert.deepEqual(stageBoundaries(MICRO), [
    { stage: 0, name: 'sft', type: 'sft', startStep: 1, endStep: 30 },
    { stage: 1, name: 'rl', type: 'rl', startStep: 31, endStep: 32 },
  ]);
  assert.deepEqual(stageBoundaries({ engine: {} }), []);
  assert.deepEqual(stageBoundaries(null), []);
});

// ---------------------------------------------------------------- recipes

test('recipes: save, versions, get, list, diff, defaults; clone under a new name', async () => {
  const v1 = await caller.recipes.save({ spec: MICRO_INPUT, note: 'first' });
  assert.equal(v1.status, 'created');
  assert.equal(v1.recipe.version, 1);
  assert.equal(v1.recipe.note, 'first');
  assert.equal((await caller.recipes.save({ spec: MICRO_INPUT })).status, 'unchanged');

  const edited = clone(MICRO_INPUT) as { stages: Record<string, unknown>[]; seed: number };
  edited.stages[1]!.lr = 0.0005;
  edited.seed = 9;
  const v2 = await caller.recipes.save({ spec: edited, note: 'lr' });
  assert.equal(v2.recipe.version, 2);
  assert.equal(v2.recipe.parentId, v1.recipe.id);

  assert.deepEqual(
    (await caller.recipes.versions({ name: 'micro' })).map((r) => r.version),
    [2, 1],
  );
  assert.equal((await caller.recipes.get({ name: 'micro' })).id, v2.recipe.id);
  assert.equal((await caller.recipes.get({ name: 'micro', version: 1 })).id, v1.recipe.id);
  const byId = await caller.recipes.get({ id: v1.recipe.id });
  assert.deepEqual(byId.spec, MICRO);

  const diff = await caller.recipes.diff({ a: v1.recipe.id, b: v2.recipe.id });
  assert.deepEqual(diff, [
    { path: 'seed', kind: 'changed', a: 1, b: 9 },
    { path: 'stages.1.lr', kind: 'changed', a: MICRO.stages[1]!.lr, b: 0.0005 },
  ]);
  assert.deepEqual(await caller.recipes.diff({ a: v2.recipe.id, b: v2.recipe.id }), []);

  // Clone: the same spec under another name is version 1 of that name, parented to what it was made from.
  const c = await caller.recipes.save({ spec: { ...edited, name: 'micro-clone' }, parentId: v2.recipe.id });
  assert.deepEqual(
    [c.status, c.recipe.name, c.recipe.version, c.recipe.parentId],
    ['created', 'micro-clone', 1, v2.recipe.id],
  );
  const { name: _n, ...nameless } = MICRO_INPUT; // `name` given: the spec's own must agree or be absent
  assert.equal((await caller.recipes.save({ spec: nameless, name: 'micro-3' })).recipe.name, 'micro-3');

  const list = await caller.recipes.list();
  assert.deepEqual(
    list.map((r) => [r.name, r.version, r.versions]),
    [
      ['micro', 2, 2],
      ['micro-3', 1, 1],
      ['micro-clone', 1, 1],
    ],
  );
  assert.equal(list[0]!.totalSteps, 32);

  const d = await caller.recipes.defaults();
  assert.deepEqual(d.embedded, EMBEDDED_ARITH_INPUT);
  assert.deepEqual(d.micro, MICRO_INPUT);
  assert.doesNotThrow(() => parseRecipe(d.embedded));
});

test('recipes: failures name the field; missing rows are NOT_FOUND', async () => {
  await notFound(caller.recipes.get({ id: 'rcp_missing' }));
  await notFound(caller.recipes.get({ name: 'nope' }));
  await notFound(caller.recipes.versions({ name: 'nope' }));
  await badRequest(caller.recipes.get({}), 'id');
  await badRequest(caller.recipes.get({ id: 'x', name: 'y' }), 'id');
  await badRequest(caller.recipes.versions({ name: '' }), 'name');
  await badRequest(caller.recipes.diff({ a: '', b: 'x' }), 'a');
  const v1 = await caller.recipes.save({ spec: MICRO_INPUT });
  await notFound(caller.recipes.diff({ a: v1.recipe.id, b: 'rcp_missing' }));
  // Invalid specs: the store's UserError names the path.
  const bad = clone(MICRO_INPUT) as { stages: Record<string, unknown>[] };
  bad.stages[1]!.rolloutsPerPrompt = -1;
  await badRequest(caller.recipes.save({ spec: bad }), 'recipe: stages.1.rolloutsPerPrompt');
  const { name: _n, ...nameless } = MICRO_INPUT;
  await badRequest(caller.recipes.save({ spec: nameless }), 'recipe: name');
  await badRequest(caller.recipes.save({ spec: MICRO_INPUT, name: 'other' }), 'recipe: name');
  await badRequest(
    caller.recipes.save({ spec: { ...MICRO_INPUT, seed: 2 }, parentId: 'rcp_missing' }),
    'recipe: parentId',
  );
});

test('recipes.validate: errors with paths, never throws for an invalid spec', async () => {
  const ok = await caller.recipes.validate({ spec: MICRO_INPUT });
  assert.equal(ok.ok, true);
  assert.ok(ok.ok && ok.recipe.stages.length === 2);
  const bad = clone(MICRO_INPUT) as { stages: Record<string, unknown>[]; seed: unknown };
  bad.stages[1]!.rolloutsPerPrompt = -1;
  bad.seed = 'x';
  const r = await caller.recipes.validate({ spec: bad });
  assert.equal(r.ok, false);
  const paths = r.ok ? [] : r.errors.map((e) => e.path);
  assert.ok(paths.includes('stages.1.rolloutsPerPrompt'), paths.join(', '));
  assert.ok(paths.includes('seed'), paths.join(', '));
  assert.ok(!r.ok && r.errors.every((e) => e.message.length > 0));
  for (const spec of [null, 42, 'text', [], {}]) assert.equal((await caller.recipes.validate({ spec })).ok, false);
});

test('recipes.launch: from a version or an inline spec, a run and a queued train job; no worker runs', async () => {
  const v1 = await caller.recipes.save({ spec: MICRO_INPUT });
  const a = await caller.recipes.launch({ id: v1.recipe.id, name: 'first try', seed: 5 });
  const run = await db.prisma.run.findUniqueOrThrow({ where: { id: a.runId } });
  assert.deepEqual(
    [run.kind, run.status, run.name, run.seed, run.recipeId, run.totalSteps],
    ['train', 'queued', 'first try', 5, v1.recipe.id, 32],
  );
  const jobs = await db.prisma.job.findMany({ where: { runId: a.runId } });
  assert.deepEqual(
    jobs.map((j) => [j.id, j.kind, j.status]),
    [[a.jobId, 'train', 'queued']],
  );

  const b = await caller.recipes.launch({ spec: { ...MICRO_INPUT, name: 'inline' } });
  const runB = await db.prisma.run.findUniqueOrThrow({ where: { id: b.runId } });
  assert.equal(runB.name, 'inline v1');
  assert.equal((await caller.recipes.get({ name: 'inline' })).id, runB.recipeId);
  assert.equal(await db.prisma.job.count({ where: { runId: b.runId, kind: 'train', status: 'queued' } }), 1);

  await badRequest(caller.recipes.launch({}), 'id');
  await badRequest(caller.recipes.launch({ id: v1.recipe.id, spec: MICRO_INPUT }), 'id');
  await badRequest(caller.recipes.launch({ id: v1.recipe.id, seed: -1 }), 'seed');
  await notFound(caller.recipes.launch({ id: 'rcp_missing' }));
  const bad = clone(MICRO_INPUT) as { stages: Record<string, unknown>[] };
  bad.stages[0]!.epochs = 0;
  await badRequest(caller.recipes.launch({ spec: bad }), 'recipe: stages.0.epochs');
  assert.equal(await db.prisma.run.count(), 2);
});

// ---------------------------------------------------------------- runs

test('runs.pause / runs.resume', async () => {
  const v1 = await caller.recipes.save({ spec: MICRO_INPUT });
  const { runId, jobId } = await caller.recipes.launch({ id: v1.recipe.id });
  assert.deepEqual(await caller.runs.pause({ runId }), { status: 'paused' });
  assert.equal((await db.prisma.run.findUniqueOrThrow({ where: { id: runId } })).status, 'paused');
  assert.equal((await db.prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status, 'cancelled');
  await assert.rejects(
    caller.runs.pause({ runId }),
    (e) =>
      e instanceof TRPCError && e.code === 'BAD_REQUEST' && /only a queued or running run can pause/.test(e.message),
  );
  const r = await caller.runs.resume({ runId });
  assert.equal(r.status, 'queued');
  assert.equal((await db.prisma.run.findUniqueOrThrow({ where: { id: runId } })).status, 'queued');
  assert.equal((await db.prisma.job.findUniqueOrThrow({ where: { id: r.jobId } })).status, 'queued');
  await assert.rejects(
    caller.runs.resume({ runId }),
    (e) => e instanceof TRPCError && e.code === 'BAD_REQUEST' && /only a paused run resumes/.test(e.message),
  );
  await notFound(caller.runs.pause({ runId: 'run_missing' }));
  await notFound(caller.runs.resume({ runId: 'run_missing' }));
  await badRequest(caller.runs.pause({ runId: '' }), 'runId');
});

test('runs.compare: runs with stage boundaries, series aligned by run and key, recipe differences from the first', async () => {
  const other = clone(MICRO_INPUT) as { stages: Record<string, unknown>[] };
  other.stages[1]!.steps = 5;
  other.stages[1]!.lr = 0.0005;
  const a = await createRun(db, { name: 'A', kind: 'train', recipeSpec: MICRO, totalSteps: 32 });
  const b = await createRun(db, { name: 'B', kind: 'train', recipeSpec: parseRecipe(other), totalSteps: 35 });
  const e = await createRun(db, { name: 'E', kind: 'eval', recipeSpec: { engine: { kind: 'embedded' } } });
  for (const s of [1, 2, 3]) await logMetrics(db, a.id, s, { 'rollout/accuracy': s / 10, 'sft/loss': 3 - s });
  for (const s of [2, 3]) await logMetrics(db, b.id, s, { 'rollout/accuracy': s / 5, 'time/step': s });

  const c = await caller.runs.compare({ runIds: [a.id, b.id, e.id] });
  assert.deepEqual(
    c.runs.map((r) => [r.id, r.name, r.status]),
    [
      [a.id, 'A', 'queued'],
      [b.id, 'B', 'queued'],
      [e.id, 'E', 'queued'],
    ],
  );
  assert.deepEqual(c.runs[0]!.recipeSpec, MICRO);
  assert.deepEqual(
    c.runs[0]!.stageBoundaries.map((s) => [s.stage, s.name, s.startStep]),
    [
      [0, 'sft', 1],
      [1, 'rl', 31],
    ],
  );
  assert.deepEqual(
    c.runs[1]!.stageBoundaries.map((s) => [s.startStep, s.endStep]),
    [
      [1, 30],
      [31, 35],
    ],
  );
  assert.deepEqual(c.runs[2]!.stageBoundaries, []);
  // Every key any run has, for every run ([] where a run lacks it).
  assert.deepEqual(Object.keys(c.series[a.id]!), ['rollout/accuracy', 'sft/loss', 'time/step']);
  // Each point with the time it was logged: compare's wall-clock axis.
  assert.ok(c.series[a.id]!['rollout/accuracy']!.every((p) => Number.isFinite(p.time) && p.time > 0));
  const sv = (pts: { step: number; value: number }[]) => pts.map(({ step, value }) => ({ step, value }));
  assert.deepEqual(sv(c.series[a.id]!['rollout/accuracy']!), [
    { step: 1, value: 0.1 },
    { step: 2, value: 0.2 },
    { step: 3, value: 0.3 },
  ]);
  assert.deepEqual(sv(c.series[b.id]!['rollout/accuracy']!), [
    { step: 2, value: 0.4 },
    { step: 3, value: 0.6 },
  ]);
  assert.deepEqual(c.series[b.id]!['sft/loss'], []);
  assert.deepEqual(c.series[a.id]!['time/step'], []);
  assert.deepEqual(c.series[e.id]!['rollout/accuracy'], []);
  assert.equal(c.recipeDiff.length, 2);
  assert.deepEqual(c.recipeDiff[0], {
    runId: b.id,
    diff: [
      { path: 'stages.1.lr', kind: 'changed', a: MICRO.stages[1]!.lr, b: 0.0005 },
      { path: 'stages.1.steps', kind: 'changed', a: 2, b: 5 },
    ],
  });
  assert.equal(c.recipeDiff[1]!.runId, e.id);
  assert.ok(
    c.recipeDiff[1]!.diff.some((d) => d.path === 'stages' && d.kind === 'removed'),
    JSON.stringify(c.recipeDiff[1]),
  );

  const only = await caller.runs.compare({ runIds: [b.id, a.id], keys: ['sft/loss'] });
  assert.deepEqual(Object.keys(only.series), [b.id, a.id]);
  assert.deepEqual(only.series[b.id], { 'sft/loss': [] });
  assert.deepEqual(Object.keys(only.series[a.id]!), ['sft/loss']);
  assert.deepEqual(sv(only.series[a.id]!['sft/loss']!), [
    { step: 1, value: 2 },
    { step: 2, value: 1 },
    { step: 3, value: 0 },
  ]);

  await badRequest(caller.runs.compare({ runIds: [a.id] }), 'runIds');
  await badRequest(caller.runs.compare({ runIds: [a.id, a.id] }), 'runIds');
  await badRequest(caller.runs.compare({ runIds: Array.from({ length: 9 }, (_, i) => `r${i}`) }), 'runIds');
  await notFound(caller.runs.compare({ runIds: [a.id, 'run_missing'] }));
});

// ---------------------------------------------------------------- trajectories

/**
 * Steps 1-3 × groups g0,g1 × samples 0-3 (24 train rows), plus 4 eval rows at step 3.
 * reward +1 for sample 0 (and sample 1 at step 3), else -1; selected: samples 0,1; a tool error: sample 3;
 * finishReason 'length' for sample 2; responseTokens = 100·step + 10·group + sample; problem p<group>.
 */
function fixture(runId: string): TrajectoryInput[] {
  const out: TrajectoryInput[] = [];
  for (const step of [1, 2, 3]) {
    for (const g of [0, 1]) {
      for (let s = 0; s < 4; s++) {
        const magic = step === 2 && g === 1 && s === 2;
        out.push({
          id: `tr_${step}_${g}_${s}`,
          runId,
          step,
          stage: step === 1 ? 0 : 1,
          problemId: `p${g}`,
          groupId: `g${g}`,
          sampleIndex: s,
          reward: s === 0 || (s === 1 && step === 3) ? 1 : -1,
          correct: s === 0,
          selected: s < 2,
          responseTokens: 100 * step + 10 * g + s,
          turns: 2,
          finishReason: s === 2 ? 'length' : 'stop',
          answer: String(s),
          content: {
            prompt: `Problem ${g}`,
            turns: [{ index: 0, text: magic ? 'the MAGIC word' : 'plain text' }],
            verdict: { correct: s === 0 },
          },
          // Inserted out of turn order: get() must order them.
          toolCalls:
            s === 3
              ? [
                  { turn: 1, code: 'print(1/0)', status: 'error', stderr: 'ZeroDivisionError' },
                  { turn: 0, code: 'print(1)', status: 'ok', stdout: '1' },
                ]
              : [{ turn: 0, code: 'print(2)', status: 'ok', stdout: '2' }],
        });
      }
    }
  }
  for (let s = 0; s < 4; s++) {
    out.push({
      runId,
      step: 3,
      stage: 1,
      split: 'eval',
      problemId: 'p0',
      groupId: 'e0',
      sampleIndex: s,
      reward: 1,
      finishReason: 'stop',
      responseTokens: 50,
      content: { prompt: 'eval' },
      toolCalls: [],
    });
  }
  return out;
}

test('trajectories.steps: one entry per stored step with count, mean reward and selected count', async () => {
  const run = await createRun(db, { name: 'T', kind: 'train' });
  await insertTrajectories(db, fixture(run.id));
  assert.deepEqual(await caller.trajectories.steps({ runId: run.id }), [
    { step: 1, count: 8, accuracy: -0.5, selected: 4 },
    { step: 2, count: 8, accuracy: -0.5, selected: 4 },
    { step: 3, count: 8, accuracy: 0, selected: 4 },
  ]);
  assert.deepEqual(await caller.trajectories.steps({ runId: run.id, split: 'eval' }), [
    { step: 3, count: 4, accuracy: 1, selected: 0 },
  ]);
  const empty = await createRun(db, { name: 'E', kind: 'train' });
  assert.deepEqual(await caller.trajectories.steps({ runId: empty.id }), []);
  await notFound(caller.trajectories.steps({ runId: 'run_missing' }));
  await badRequest(caller.trajectories.steps({ runId: run.id, split: 'filter' as 'train' }), 'split');
});

test('trajectories.list: filters and sorts against hand-counted expectations; pages; no content', async () => {
  const run = await createRun(db, { name: 'T', kind: 'train' });
  await insertTrajectories(db, fixture(run.id));
  const list = (q: Omit<Parameters<typeof caller.trajectories.list>[0], 'runId'> = {}) =>
    caller.trajectories.list({ runId: run.id, ...q });
  const total = async (q: Parameters<typeof list>[0]) => (await list(q)).total;

  const all = await list();
  assert.equal(all.total, 24);
  assert.equal(all.items.length, 24);
  assert.ok(!('content' in all.items[0]!));
  assert.equal(all.items[0]!.id, 'tr_1_0_0');
  assert.deepEqual(
    (await list({ step: 2 })).items.map((t) => `${t.groupId}/${t.sampleIndex}`),
    ['g0/0', 'g0/1', 'g0/2', 'g0/3', 'g1/0', 'g1/1', 'g1/2', 'g1/3'],
  );
  assert.equal(await total({ split: 'all' }), 28);
  assert.equal(await total({ split: 'eval' }), 4);
  assert.equal(await total({ step: 4 }), 0);

  assert.equal(await total({ filter: { minReward: 0.5 } }), 8); // 2 + 2 + 4
  assert.equal(await total({ filter: { maxReward: 0 } }), 16);
  assert.equal(await total({ filter: { minReward: -1, maxReward: 1 } }), 24);
  assert.equal(await total({ filter: { selected: true } }), 12);
  assert.equal(await total({ filter: { selected: false } }), 12);
  assert.equal(await total({ filter: { hasToolError: true } }), 6);
  assert.equal(await total({ filter: { hasToolError: false } }), 18);
  assert.equal(await total({ filter: { finishReason: 'length' } }), 6);
  assert.equal(await total({ filter: { finishReason: 'nope' } }), 0);
  assert.deepEqual(
    (await list({ filter: { search: 'magic' } })).items.map((t) => t.id),
    ['tr_2_1_2'],
  ); // case-insensitive
  assert.equal(await total({ filter: { search: 'MAGIC word' } }), 1);
  assert.equal(await total({ filter: { search: 'Problem 1' } }), 12);
  assert.equal(await total({ filter: { search: 'Problem%1' } }), 0); // LIKE wildcards are literal
  assert.equal(await total({ filter: { search: 'Problem_1' } }), 0);
  assert.deepEqual((await list({ step: 2, sort: 'reward_asc', filter: { search: 'MAGIC_' } })).items, []);
  // The literal path (a wildcard in the search) keeps every other filter, the order and the paging.
  await insertTrajectories(db, [
    {
      id: 'tr_pct',
      runId: run.id,
      step: 2,
      stage: 1,
      groupId: 'g9',
      sampleIndex: 0,
      reward: 1,
      selected: true,
      finishReason: 'stop',
      responseTokens: 7,
      content: { text: 'x = 10 % 3; is_ok' },
      toolCalls: [],
    },
    {
      id: 'tr_pct2',
      runId: run.id,
      step: 2,
      stage: 1,
      groupId: 'g9',
      sampleIndex: 1,
      reward: 0,
      finishReason: 'stop',
      responseTokens: 9,
      content: { text: 'X = 10 % 3; IS_OK' },
      toolCalls: [],
    },
  ]);
  const pct = await list({ step: 2, sort: 'length_desc', filter: { search: '10 % 3' } });
  assert.deepEqual([pct.total, pct.items.map((t) => t.id)], [2, ['tr_pct2', 'tr_pct']]);
  assert.equal(typeof pct.items[0]!.selected, 'boolean');
  assert.ok(!('content' in pct.items[0]!));
  assert.deepEqual(
    (await list({ filter: { search: 'is_ok', selected: true } })).items.map((t) => t.id),
    ['tr_pct'],
  );
  assert.deepEqual(
    (await list({ filter: { search: 'is_ok', minReward: -0.5, maxReward: 0.5 }, limit: 1, offset: 0 })).items.map(
      (t) => t.id,
    ),
    ['tr_pct2'],
  );
  assert.equal((await list({ filter: { search: 'is_ok' }, limit: 1, offset: 1 })).items.length, 1);
  assert.equal(await total({ split: 'eval', filter: { search: 'is_ok' } }), 0);
  await db.prisma.toolCall.deleteMany({ where: { trajectoryId: { in: ['tr_pct', 'tr_pct2'] } } });
  await db.prisma.trajectory.deleteMany({ where: { id: { in: ['tr_pct', 'tr_pct2'] } } });
  assert.equal(await total({ step: 3, filter: { selected: true, minReward: 0.5 } }), 4);
  assert.equal(await total({ filter: { selected: true, maxReward: 0 } }), 4); // sample 1 at steps 1, 2
  assert.equal(await total({ split: 'all', filter: { minReward: 1, hasToolError: false } }), 12); // 8 train + 4 eval

  const byReward = await list({ step: 3, sort: 'reward_desc' });
  assert.deepEqual(
    byReward.items.map((t) => t.id),
    ['tr_3_0_0', 'tr_3_0_1', 'tr_3_1_0', 'tr_3_1_1', 'tr_3_0_2', 'tr_3_0_3', 'tr_3_1_2', 'tr_3_1_3'],
  );
  assert.deepEqual(
    (await list({ step: 1, sort: 'reward_asc', limit: 2 })).items.map((t) => t.id),
    ['tr_1_0_1', 'tr_1_0_2'],
  );
  assert.deepEqual(
    (await list({ sort: 'length_desc', limit: 3 })).items.map((t) => t.responseTokens),
    [313, 312, 311],
  );
  assert.deepEqual(
    (await list({ sort: 'length_asc', limit: 3 })).items.map((t) => t.responseTokens),
    [100, 101, 102],
  );

  const page = await list({ limit: 5, offset: 20 });
  assert.equal(page.total, 24);
  assert.deepEqual(
    page.items.map((t) => t.id),
    ['tr_3_1_0', 'tr_3_1_1', 'tr_3_1_2', 'tr_3_1_3'],
  );

  await badRequest(list({ limit: 0 }), 'limit');
  await badRequest(list({ limit: 501 }), 'limit');
  await badRequest(list({ offset: -1 }), 'offset');
  await badRequest(list({ sort: 'random' as 'index' }), 'sort');
  await badRequest(list({ filter: { minReward: 'x' as unknown as number } }), 'filter.minReward');
  await notFound(caller.trajectories.list({ runId: 'run_missing' }));
});

test('trajectories.topK, get, samePrompt', async () => {
  const run = await createRun(db, { name: 'T', kind: 'train' });
  await insertTrajectories(db, fixture(run.id));
  const top = await caller.trajectories.topK({ runId: run.id, step: 3, k: 3, by: 'reward', order: 'top' });
  assert.deepEqual(
    top.map((t) => t.reward),
    [1, 1, 1],
  );
  const shortest = await caller.trajectories.topK({ runId: run.id, step: 1, k: 2, by: 'length', order: 'bottom' });
  assert.deepEqual(
    shortest.map((t) => t.responseTokens),
    [100, 101],
  );
  const longest = await caller.trajectories.topK({ runId: run.id, step: 2, k: 1, by: 'length', order: 'top' });
  assert.deepEqual(
    longest.map((t) => t.id),
    ['tr_2_1_3'],
  );
  await badRequest(caller.trajectories.topK({ runId: run.id, step: 1, k: 0, by: 'reward', order: 'top' }), 'k');

  const t = await caller.trajectories.get({ id: 'tr_2_1_3' });
  assert.equal(t.runId, run.id);
  assert.equal(t.toolErrors, 1);
  assert.deepEqual(t.content, {
    prompt: 'Problem 1',
    turns: [{ index: 0, text: 'plain text' }],
    verdict: { correct: false },
  });
  assert.deepEqual(
    t.toolCalls.map((c) => [c.turn, c.status, c.code]),
    [
      [0, 'ok', 'print(1)'],
      [1, 'error', 'print(1/0)'],
    ],
  );
  await notFound(caller.trajectories.get({ id: 'tr_missing' }));
  await badRequest(caller.trajectories.get({ id: '' }), 'id');

  const same = await caller.trajectories.samePrompt({ runId: run.id, problemId: 'p0' });
  assert.equal(same.length, 16);
  assert.deepEqual(
    same.map((x) => x.step),
    [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3],
  );
  assert.deepEqual(
    same.slice(0, 4).map((x) => x.sampleIndex),
    [0, 1, 2, 3],
  );
  assert.ok(same.every((x) => x.problemId === 'p0' && !('content' in x)));
  assert.equal((await caller.trajectories.samePrompt({ runId: run.id, problemId: 'p0', split: 'train' })).length, 12);
  assert.equal((await caller.trajectories.samePrompt({ runId: run.id, problemId: 'p0', split: 'eval' })).length, 4);
  assert.deepEqual(await caller.trajectories.samePrompt({ runId: run.id, problemId: 'p9' }), []);
  await notFound(caller.trajectories.samePrompt({ runId: 'run_missing', problemId: 'p0' }));
  await badRequest(caller.trajectories.samePrompt({ runId: run.id, problemId: '' }), 'problemId');
});

test('trajectories.list over 20,000 rows: the filtered total is right', async () => {
  const run = await createRun(db, { name: 'big', kind: 'train' });
  // 50 steps × 50 groups × 8 samples; reward +1 when (group + sample) % 4 == 0, tool error when sample == 7.
  for (let step = 1; step <= 50; step += 5) {
    const batch: TrajectoryInput[] = [];
    for (let st = step; st < step + 5; st++) {
      for (let g = 0; g < 50; g++) {
        for (let s = 0; s < 8; s++) {
          batch.push({
            runId: run.id,
            step: st,
            stage: 0,
            problemId: `p${g}`,
            groupId: `g${String(g).padStart(2, '0')}`,
            sampleIndex: s,
            reward: (g + s) % 4 === 0 ? 1 : -1,
            selected: s < 4,
            toolErrors: s === 7 ? 1 : 0,
            responseTokens: (st * 31 + g * 7 + s) % 997,
            finishReason: s === 6 ? 'length' : 'stop',
            content: { prompt: `q_${g}`, turns: [] },
            toolCalls: [],
          });
        }
      }
    }
    await insertTrajectories(db, batch);
  }
  assert.equal(await db.prisma.trajectory.count({ where: { runId: run.id } }), 20_000);
  const list = (q: Omit<Parameters<typeof caller.trajectories.list>[0], 'runId'>) =>
    caller.trajectories.list({ runId: run.id, ...q });
  // Per group of 8: 2 samples with (g+s)%4==0 → 20,000 / 4 = 5,000 positives.
  assert.equal((await list({ filter: { minReward: 0.5 } })).total, 5000);
  // Positive and selected (s < 4): exactly one s in 0..3 per group → 50 × 50 = 2,500.
  const r = await list({ filter: { minReward: 0.5, selected: true }, sort: 'length_desc', limit: 500 });
  assert.equal(r.total, 2500);
  assert.equal(r.items.length, 500);
  for (let i = 1; i < r.items.length; i++) assert.ok(r.items[i - 1]!.responseTokens >= r.items[i]!.responseTokens);
  assert.equal((await list({ filter: { hasToolError: true } })).total, 2500);
  assert.equal((await list({ step: 17, filter: { finishReason: 'length' } })).total, 50);
  assert.equal((await list({ step: 17, filter: { search: 'Q_7"' } })).total, 8); // content {"prompt":"q_7",…}
  assert.equal((await list({ filter: { search: 'q_' } })).total, 20_000);
  assert.equal((await list({ filter: { search: 'q_1', selected: true } })).total, 11 * 50 * 4); // q_1, q_10 … q_19
  assert.equal((await list({ filter: { search: 'q%1' } })).total, 0);
  assert.deepEqual((await caller.trajectories.steps({ runId: run.id })).length, 50);
});

// ---------------------------------------------------------------- evals

test('evals.list parses details, ordered by step then benchmark; evals.reference is the report table', async () => {
  const run = await createRun(db, { name: 'T', kind: 'train' });
  const row = (step: number, benchmark: string, pass1: number, details: unknown) =>
    db.prisma.evalResult.create({
      data: {
        id: `ev_${step}_${benchmark}`,
        runId: run.id,
        step,
        benchmark,
        k: 4,
        pass1,
        details: details === null ? null : JSON.stringify(details),
      },
    });
  await row(20, 'b-arith', 0.5, { perProblem: [1, 0] });
  await row(10, 'b-arith', 0.25, null);
  await row(10, 'a-other', 0.75, { n: 2 });
  const rows = await caller.evals.list({ runId: run.id });
  assert.deepEqual(
    rows.map((r) => [r.step, r.benchmark, r.pass1]),
    [
      [10, 'a-other', 0.75],
      [10, 'b-arith', 0.25],
      [20, 'b-arith', 0.5],
    ],
  );
  assert.deepEqual(
    rows.map((r) => r.details),
    [{ n: 2 }, null, { perProblem: [1, 0] }],
  );
  await notFound(caller.evals.list({ runId: 'run_missing' }));
  await badRequest(caller.evals.list({ runId: '' }), 'runId');

  const ref = await caller.evals.reference();
  assert.deepEqual(ref.benchmarks, ['MATH-500', 'AIME24', 'AIME25', 'HMMT25']);
  assert.equal(ref.models.length, 5);
  assert.deepEqual(ref.models[0], { name: 'rStar2-Agent-14B', scores: [97.8, 80.6, 69.8, 52.7] });
  assert.ok(ref.models.every((m) => m.scores.length === ref.benchmarks.length));
  assert.equal(ref.lengths.AIME25['Qwen3-14B'], 17522);
  assert.match(ref.protocol, /16 samples per question/);
});

test('evals.compare: two steps of a run or two runs on the same problems, the paired difference with its interval', async () => {
  const a = await createRun(db, { name: 'A', kind: 'train' });
  const b = await createRun(db, { name: 'B', kind: 'train' });
  const per = (rate: (i: number) => number) =>
    Array.from({ length: 200 }, (_, i) => ({ id: `p${i}`, correct: Math.round(4 * rate(i)), samples: 4 }));
  const row = (runId: string, step: number, benchmark: string, perProblem: unknown) => {
    const scores = perProblem as { correct: number; samples: number }[] | null;
    const pass1 = scores ? scores.reduce((s, p) => s + p.correct / p.samples, 0) / scores.length : 0.5;
    return db.prisma.evalResult.create({
      data: {
        id: `ev_${runId}_${step}_${benchmark}`,
        runId,
        step,
        benchmark,
        k: 4,
        pass1,
        details: JSON.stringify(
          scores
            ? { problems: scores.length, perProblem: scores, pass1Ci: { lo: pass1 - 0.05, hi: pass1 + 0.05 } }
            : { problems: 200 },
        ),
      },
    });
  };
  await row(
    a.id,
    0,
    'arith',
    per((i) => (i % 2 ? 0.25 : 0.5)),
  );
  await row(
    a.id,
    40,
    'arith',
    per((i) => (i % 2 ? 0.5 : 0.75)),
  );
  await row(a.id, 40, 'old', null);
  await row(a.id, 0, 'old', null);
  await row(
    b.id,
    10,
    'arith',
    per((i) => (i % 2 ? 0.25 : 0.5)),
  );

  const steps = await caller.evals.compare({ a: { runId: a.id, step: 0 }, b: { runId: a.id } });
  assert.deepEqual([steps.a.step, steps.b.step], [0, 40]);
  const arith = steps.benchmarks.find((r) => r.benchmark === 'arith')!;
  assert.equal(arith.paired!.problems, 200);
  assert.ok(Math.abs(arith.paired!.diff - 0.25) < 1e-9, String(arith.paired!.diff));
  assert.ok(
    arith.paired!.excludesZero && arith.paired!.ci.lo > 0.2 && arith.paired!.ci.hi <= 0.25 + 1e-9,
    JSON.stringify(arith.paired),
  );
  assert.deepEqual(arith.a.ci, { lo: arith.a.pass1 - 0.05, hi: arith.a.pass1 + 0.05 });
  const old = steps.benchmarks.find((r) => r.benchmark === 'old')!;
  assert.equal(old.paired, null);
  assert.match(old.why!, /before per-problem scores/);

  const runs = await caller.evals.compare({ a: { runId: a.id, step: 0 }, b: { runId: b.id } });
  assert.deepEqual(
    runs.benchmarks.map((r) => [r.benchmark, r.paired?.diff, r.paired?.excludesZero]),
    [['arith', 0, false]],
  );
  await notFound(caller.evals.compare({ a: { runId: a.id }, b: { runId: 'run_missing' } }));
  await badRequest(caller.evals.compare({ a: { runId: a.id, step: -1 }, b: { runId: b.id } }), 'a.step');
});
