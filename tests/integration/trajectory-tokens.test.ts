// @postgresql: also on PostgreSQL, because token records are binary columns (bytea on PostgreSQL, blob on SQLite).
// The token-level side table: a trajectory's TokenRecord is written with it, in binary columns, read back
// exactly (Float32 precision, NaN kept), deleted with it, and served by trajectories.tokens and by share links under
// the trajectory's own access rules. Runs on the dialect under test (TOOLSMITH_TEST_DIALECT).
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { TRPCError } from '@trpc/server';
import { freshDatabase } from '../helpers/db.ts';
import type { Database } from '../../server/db/client.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { TEST_ADMIN } from '../helpers/principals.ts';
import { createRun } from '../../server/store/runs.ts';
import { deleteAfterStep } from '../../server/store/checkpoints.ts';
import {
  insertTrajectories,
  insertTrajectorySingle,
  generatedTokensByStep,
  readStepWithTokens,
  readTrajectoryTokens,
} from '../../server/store/trajectories.ts';
import type { TokenRecord, Trajectory } from '../../contracts/trajectory.ts';
import { CharTokenizer, embeddedTokenizerSpec } from '../../workers/engines/tokenizer.ts';
import { EMBEDDED_TEMPLATE_SETTINGS as S, toolResponseTurn } from '../../workers/rollout/template.ts';
import { toTrajectoryInput } from '../../workers/rollout/to-store.ts';
import {
  appendAssistantTurn,
  appendToolResult,
  finishTrajectory,
  newTrajectory,
} from '../../workers/rollout/trajectory.ts';
import { tokenRecord } from '../../workers/policy/token-record.ts';

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

const tok = new CharTokenizer(embeddedTokenizerSpec());

/** Two turns (a call, its appended tool response, then an answer) with engine logprobs and entropies on turn 1 only. */
function twoTurns(): Trajectory {
  const call = `Let me compute.</reason>\n<tool_call>\n${JSON.stringify({ name: 'python', arguments: { code: 'print(6*7)', input: '' } })}\n</tool_call>`;
  const ids = tok.encode(call);
  let t = newTrajectory('What is 6*7?', 10);
  t = appendAssistantTurn(
    t,
    {
      text: call,
      tokens: ids.length,
      tokenIds: ids,
      logprobs: ids.map((_, i) => -0.01 * i - 1 / 3),
      engineFinish: 'stop',
      genStartedAt: 1,
      genFinishedAt: 2,
    },
    S,
  );
  t = { ...t, turns: [{ ...t.turns[0]!, entropies: ids.map((_, i) => (i % 7 === 0 ? NaN : 0.1 * i)) }] };
  const appended = toolResponseTurn('42', S);
  t = appendToolResult(t, {
    name: 'python',
    arguments: { code: 'print(6*7)', input: '' },
    status: 'ok',
    text: '42',
    appendedText: appended,
    tokens: tok.encode(appended).length,
    appended: true,
    queuedAt: 2,
    startedAt: 2,
    finishedAt: 3,
    durationMs: 1,
    queueMs: 0,
    stdout: '42\n',
    stderr: '',
    exitCode: 0,
    errorType: null,
  });
  const answer = 'So it is 42.</reason>\n<answer>\\boxed{42}</answer>';
  t = appendAssistantTurn(
    t,
    { text: answer, tokens: tok.encode(answer).length, engineFinish: 'stop', genStartedAt: 4, genFinishedAt: 5 },
    S,
  );
  return finishTrajectory(t, 'no_tool_call', 6);
}

/** The record with trainer-side arrays, every clip state present, and values Float32 cannot hold exactly. */
function trainedRecord(t: Trajectory): TokenRecord {
  const n = tokenRecord(t, tok, null).ids.length;
  return tokenRecord(t, tok, {
    trainerLogprobs: Array.from({ length: n }, (_, i) => (i === 3 ? null : -Math.PI / (i + 1))),
    weights: Array.from({ length: n }, (_, i) => (i % 11 === 0 ? 0 : i % 5 === 0 ? 2 : 1 + 1e-9 * i)),
    clip: Array.from({ length: n }, (_, i) => (i % 6) as 0 | 1 | 2 | 3 | 4 | 5),
    advantage: -0.7071067811865476,
  });
}

/** What reading back must give: every float rounded to Float32, NaN staying NaN (deepEqual compares NaN as equal). */
function asStored(r: TokenRecord): TokenRecord {
  const f = (xs: number[]) => xs.map(Math.fround);
  return {
    ...r,
    rolloutLogprobs: f(r.rolloutLogprobs),
    entropy: f(r.entropy),
    trainerLogprobs: r.trainerLogprobs && f(r.trainerLogprobs),
    weights: r.weights && f(r.weights),
  };
}

const scored = {
  reward: 1,
  correct: true,
  verdict: { correct: true, method: 'exact' as const, extracted: '42', reason: 'equal' },
};
const meta = (runId: string, sampleIndex: number, step = 1) => ({
  runId,
  step,
  stage: 0,
  split: 'train',
  problemId: 'p1',
  groupId: 'g000',
  sampleIndex,
});

test('a token record round-trips through the side table, batched and single, with NaN and Float32 precision', async () => {
  const run = await createRun(db, { name: 'tok', kind: 'train', seed: 0 });
  const t = twoTurns();
  const trained = trainedRecord(t);
  const plain = tokenRecord(t, tok, null);
  assert.ok(plain.rolloutLogprobs.some(Number.isNaN) && plain.entropy.some(Number.isNaN), 'the record has NaN to keep');
  assert.ok(plain.mask.includes(0) && plain.mask.includes(1), 'model and tool tokens');
  await insertTrajectories(db, [
    { ...toTrajectoryInput(t, scored, meta(run.id, 0), trained), id: 'tr_trained' },
    { ...toTrajectoryInput(t, scored, meta(run.id, 1), plain), id: 'tr_plain' },
    { ...toTrajectoryInput(t, scored, meta(run.id, 2)), id: 'tr_none' },
  ]);
  await insertTrajectorySingle(db, { ...toTrajectoryInput(t, scored, meta(run.id, 3), trained), id: 'tr_single' });

  assert.deepEqual(await readTrajectoryTokens(db, 'tr_trained'), asStored(trained));
  assert.deepEqual(await readTrajectoryTokens(db, 'tr_single'), asStored(trained));
  assert.deepEqual(await readTrajectoryTokens(db, 'tr_plain'), asStored(plain));
  assert.equal(await readTrajectoryTokens(db, 'tr_none'), null);

  // The per-token arrays are not in the JSON content; they are packed bytes (4 per id), not text.
  const content = (await db.prisma.trajectory.findUniqueOrThrow({ where: { id: 'tr_trained' } })).content;
  assert.doesNotMatch(content, /tokenIds|logprobs|entropies/);
  const row = await db.prisma.trajectoryTokens.findUniqueOrThrow({ where: { trajectoryId: 'tr_trained' } });
  assert.ok(row.ids instanceof Uint8Array);
  assert.equal(row.n, trained.ids.length);
  assert.equal(row.ids.byteLength, 4 * trained.ids.length);
  assert.equal(row.mask.byteLength, trained.ids.length);
  if (db.dialect === 'sqlite') {
    const [k] = await db.query<{ k: string }>(
      `SELECT typeof("ids") AS "k" FROM "TrajectoryTokens" WHERE "trajectoryId" = ?`,
      ['tr_trained'],
    );
    assert.equal(k!.k, 'blob');
  } else {
    const [k] = await db.query<{ k: string }>(
      `SELECT pg_typeof("ids")::text AS "k" FROM "TrajectoryTokens" WHERE "trajectoryId" = ?`,
      ['tr_trained'],
    );
    assert.equal(k!.k, 'bytea');
  }

  // A step's worth at once, in step order, with the records attached.
  const step = await readStepWithTokens(db, run.id, 1, { withContent: true });
  assert.deepEqual(
    step.map((r) => r.id),
    ['tr_trained', 'tr_plain', 'tr_none', 'tr_single'],
  );
  assert.deepEqual(step[0]!.tokens, asStored(trained));
  assert.equal(step[2]!.tokens, null);
});

test('the side table refuses a record that cannot be stored faithfully, and the trajectory is not stored either', async () => {
  const run = await createRun(db, { name: 'tok', kind: 'train', seed: 0 });
  const t = twoTurns();
  const bad = {
    ...tokenRecord(t, tok, null),
    chars: tokenRecord(t, tok, null).chars.map((c, i) => (i === 2 ? 70_000 : c)),
  };
  await assert.rejects(
    insertTrajectories(db, [{ ...toTrajectoryInput(t, scored, meta(run.id, 0), bad), id: 'tr_bad' }]),
    /chars\[2\] = 70000/,
  );
  assert.equal(await db.prisma.trajectory.count({ where: { id: 'tr_bad' } }), 0);
});

test('deleting trajectories (a resumed run discarding later steps) deletes their token records', async () => {
  const run = await createRun(db, { name: 'tok', kind: 'train', seed: 0 });
  const t = twoTurns();
  const r = tokenRecord(t, tok, null);
  await insertTrajectories(db, [
    { ...toTrajectoryInput(t, scored, meta(run.id, 0, 1), r), id: 'tr_keep' },
    { ...toTrajectoryInput(t, scored, meta(run.id, 0, 2), r), id: 'tr_drop' },
  ]);
  await deleteAfterStep(db, run.id, 1);
  assert.deepEqual(
    (await db.prisma.trajectoryTokens.findMany({ select: { trajectoryId: true } })).map((x) => x.trajectoryId),
    ['tr_keep'],
  );
});

test('trajectories.tokens returns plain JSON arrays (null for NaN); NOT_FOUND for no trajectory, record null for none stored', async () => {
  const run = await createRun(db, { name: 'tok', kind: 'train', seed: 0 });
  const t = twoTurns();
  const trained = trainedRecord(t);
  await insertTrajectories(db, [
    { ...toTrajectoryInput(t, scored, meta(run.id, 0), trained), id: 'tr_a' },
    { ...toTrajectoryInput(t, scored, meta(run.id, 1)), id: 'tr_b' },
  ]);
  const { record } = await caller.trajectories.tokens({ id: 'tr_a' });
  assert.ok(record);
  // What the HTTP client receives is this value through JSON: nothing may be lost on the way.
  assert.deepEqual(JSON.parse(JSON.stringify(record)), record);
  const stored = asStored(trained);
  const nul = (xs: number[]) => xs.map((x) => (Number.isNaN(x) ? null : x));
  assert.deepEqual(record.ids, stored.ids);
  assert.deepEqual(record.rolloutLogprobs, nul(stored.rolloutLogprobs));
  assert.deepEqual(record.trainerLogprobs, nul(stored.trainerLogprobs!));
  assert.deepEqual(record.clip, stored.clip);
  assert.equal(record.trainerLogprobs![3], null, 'a missing trainer logprob');
  assert.equal(record.rolloutLogprobs[record.mask.indexOf(0)], null, 'a tool token has no rollout logprob');
  assert.equal(record.advantage, -0.7071067811865476);
  assert.deepEqual(await caller.trajectories.tokens({ id: 'tr_b' }), { record: null });
  await assert.rejects(
    caller.trajectories.tokens({ id: 'tr_nope' }),
    (e) => e instanceof TRPCError && e.code === 'NOT_FOUND',
  );
});

test("share links serve a trajectory's tokens exactly where they serve the trajectory", async () => {
  const run = await createRun(db, { name: 'tok', kind: 'train', seed: 0 });
  const other = await createRun(db, { name: 'other', kind: 'train', seed: 0 });
  const t = twoTurns();
  const r = tokenRecord(t, tok, null);
  await insertTrajectories(db, [
    { ...toTrajectoryInput(t, scored, meta(run.id, 0, 1), r), id: 'tr_1' },
    { ...toTrajectoryInput(t, scored, meta(run.id, 1, 2), r), id: 'tr_2' },
    { ...toTrajectoryInput(t, scored, meta(other.id, 0, 1), r), id: 'tr_o' },
  ]);
  const view = caller.share.view;
  const notFound = (p: Promise<unknown>) => assert.rejects(p, (e) => e instanceof TRPCError && e.code === 'NOT_FOUND');
  const trajLink = await caller.share.create({ scope: 'trajectory', target: { trajectoryId: 'tr_1' } });
  const stepLink = await caller.share.create({ scope: 'step', target: { runId: run.id, step: 2 } });
  const runLink = await caller.share.create({ scope: 'run', target: { runId: run.id } });

  const one = await view.trajectoryTokens({ token: trajLink.token, trajectoryId: 'tr_1' });
  assert.deepEqual(one.record?.ids, r.ids);
  await notFound(view.trajectoryTokens({ token: trajLink.token, trajectoryId: 'tr_2' }));
  await notFound(view.trajectoryTokens({ token: stepLink.token, trajectoryId: 'tr_1' }));
  assert.deepEqual((await view.trajectoryTokens({ token: stepLink.token, trajectoryId: 'tr_2' })).record?.turn, r.turn);
  assert.ok((await view.trajectoryTokens({ token: runLink.token, trajectoryId: 'tr_2' })).record);
  await notFound(view.trajectoryTokens({ token: runLink.token, trajectoryId: 'tr_o' }));
  await notFound(view.trajectoryTokens({ token: runLink.token, trajectoryId: 'tr_missing' }));
  await notFound(view.trajectoryTokens({ token: 'x'.repeat(43), trajectoryId: 'tr_1' }));
  // The same answers as the trajectory itself, link by link.
  for (const [token, id] of [
    [trajLink.token, 'tr_2'],
    [stepLink.token, 'tr_1'],
    [runLink.token, 'tr_o'],
  ] as const) {
    await notFound(view.trajectory({ token, trajectoryId: id }));
  }
  const links = await caller.share.list({ runId: run.id });
  await caller.share.revoke({ id: links.find((l) => l.scope === 'trajectory')!.id });
  await notFound(view.trajectoryTokens({ token: trajLink.token, trajectoryId: 'tr_1' }));
});

test("a step's generated tokens are its responses' model tokens, not the tool results appended to them", async () => {
  const run = await createRun(db, { name: 'generated', kind: 'train' });
  const t = twoTurns();
  assert.ok(t.toolTokens > 0 && t.modelTokens > 0);
  await insertTrajectories(db, [
    toTrajectoryInput(t, scored, meta(run.id, 0)),
    toTrajectoryInput(t, scored, meta(run.id, 1)),
    toTrajectoryInput(t, scored, meta(run.id, 0, 2)),
    { ...toTrajectoryInput(t, scored, meta(run.id, 2)), split: 'eval' },
  ]);
  assert.deepEqual(await generatedTokensByStep(db, run.id), [
    { step: 1, value: 2 * t.modelTokens },
    { step: 2, value: t.modelTokens },
  ]);
});
