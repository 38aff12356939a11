import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import { freshDatabase } from '../helpers/db.ts';
import type { Database } from '../../server/db/client.ts';
import { UserError, zodIssuesText } from '../../contracts/errors.ts';
import { createRun } from '../../server/store/runs.ts';
import { insertTrajectories, type TrajectoryInput } from '../../server/store/trajectories.ts';
import { logMetrics } from '../../server/store/metrics.ts';
import { appendEvent } from '../../server/store/events.ts';
import { createShareLink, resolveShareLink } from '../../server/share/links.ts';
import { shareRouter, shareViewRouter } from '../../server/trpc/routers/share.ts';
import { createCallerFactory, router } from '../../server/trpc/init.ts';
import { TEST_ADMIN } from '../helpers/principals.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
const appRouter = router({ share: shareRouter });
const createCaller = createCallerFactory(appRouter);
let caller: ReturnType<typeof createCaller>;

// Two runs, each with trajectories at steps 1 and 2 and metrics at steps 1..3.
let runA: string;
let runB: string;
let runC: string;
const traj: Record<string, string> = {};

function trajectory(runId: string, step: number, sampleIndex: number, id: string): TrajectoryInput {
  return {
    id,
    runId,
    step,
    stage: 0,
    groupId: `g${step}`,
    sampleIndex,
    reward: sampleIndex,
    correct: sampleIndex === 0,
    finishReason: 'stop',
    answer: String(sampleIndex),
    content: { turns: [{ role: 'assistant', text: `run ${runId} step ${step} sample ${sampleIndex}` }] },
    toolCalls: [{ turn: 0, code: `print(${step})`, stdout: `${step}\n`, status: 'ok', exitCode: 0 }],
  };
}

beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  caller = createCaller({ db, principal: TEST_ADMIN });
  runA = (await createRun(db, { name: 'alpha', kind: 'train', recipeSpec: { lr: 1e-5 } })).id;
  runB = (await createRun(db, { name: 'beta', kind: 'train', recipeSpec: { lr: 2e-5 } })).id;
  runC = (await createRun(db, { name: 'gamma', kind: 'eval' })).id;
  const items: TrajectoryInput[] = [];
  for (const [name, runId] of [
    ['A', runA],
    ['B', runB],
  ] as const) {
    for (const step of [1, 2]) {
      for (const s of [0, 1]) {
        const id = `tr_${name}${step}${s}`;
        traj[`${name}${step}${s}`] = id;
        items.push(trajectory(runId, step, s, id));
      }
    }
    for (const step of [1, 2, 3]) await logMetrics(db, runId, step, { reward: step / 10, loss: 1 / step });
  }
  await insertTrajectories(db, items);
  await appendEvent(db, runA, { message: 'hello from run A' });
});
afterEach(async () => {
  await fresh.close();
});

function isNotFound(e: unknown): boolean {
  assert.ok(e instanceof TRPCError, `expected a TRPCError, got ${String(e)}`);
  assert.equal(e.code, 'NOT_FOUND');
  assert.equal(e.message, 'share link not found');
  return true;
}
const notFound = (p: Promise<unknown>) => assert.rejects(p, isNotFound);

/** The one-line message a client sees (the errorFormatter turns zod issues into the same text). */
function clientMessage(e: unknown): string {
  if (e instanceof TRPCError && e.cause instanceof ZodError) return zodIssuesText(e.cause.issues);
  return (e as Error).message;
}
async function badRequest(p: Promise<unknown>, field: string) {
  await assert.rejects(p, (e) => {
    assert.ok(e instanceof TRPCError);
    assert.equal(e.code, 'BAD_REQUEST');
    assert.match(clientMessage(e), new RegExp(`(^|; )${field.replace(/\./g, '\\.')}: `), clientMessage(e));
    return true;
  });
}

test('token: 256 random bits, base64url; only its SHA-256 is stored', async () => {
  const a = await caller.share.create({ scope: 'run', target: { runId: runA }, label: 'for review' });
  const b = await caller.share.create({ scope: 'run', target: { runId: runA } });
  assert.match(a.token, /^[A-Za-z0-9_-]{43}$/);
  assert.ok(Buffer.from(a.token, 'base64url').length * 8 >= 128);
  assert.equal(Buffer.from(a.token, 'base64url').length, 32);
  assert.notEqual(a.token, b.token);
  assert.equal(a.path, `/s/${a.token}`);
  assert.ok(!a.id.includes(a.token));
  const rows = await db.query<Record<string, unknown>>('SELECT * FROM "ShareLink"');
  assert.equal(rows.length, 2);
  for (const row of rows) {
    for (const [col, value] of Object.entries(row)) {
      for (const t of [a.token, b.token]) assert.ok(!String(value).includes(t), `column ${col} holds a token`);
    }
  }
  const row = rows.find((r) => r.id === a.id)!;
  assert.equal(row.tokenHash, createHash('sha256').update(a.token).digest('hex'));
  assert.equal(row.scope, 'run');
  assert.deepEqual(JSON.parse(String(row.target)), { runId: runA });
});

test('run link: shows its run (summary, metrics, any step, trajectories, log) and nothing of another run', async () => {
  const { token } = await caller.share.create({ scope: 'run', target: { runId: runA }, label: 'alpha run' });
  const v = caller.share.view;
  const s = await v.summary({ token });
  assert.equal(s.scope, 'run');
  assert.equal(s.label, 'alpha run');
  assert.deepEqual(
    s.runs.map((r) => [r.id, r.name, r.status, r.kind]),
    [[runA, 'alpha', 'queued', 'train']],
  );
  assert.deepEqual('recipeSpec' in s.runs[0] ? s.runs[0].recipeSpec : null, { lr: 1e-5 });
  assert.ok(s.runs[0].createdAt instanceof Date);
  assert.equal(s.step, null);

  const m = await v.metrics({ token, runId: runA });
  assert.deepEqual(Object.keys(m.series).sort(), ['loss', 'reward']);
  assert.deepEqual(
    m.series.reward.map((p) => [p.step, p.value]),
    [
      [1, 0.1],
      [2, 0.2],
      [3, 0.3],
    ],
  );
  assert.deepEqual(Object.keys((await v.metrics({ token, runId: runA, keys: ['loss'] })).series), ['loss']);
  await notFound(v.metrics({ token, runId: runB }));

  for (const step of [1, 2]) {
    const page = await v.trajectories({ token, runId: runA, step });
    assert.deepEqual(
      page.items.map((t) => t.id),
      [traj[`A${step}0`], traj[`A${step}1`]],
    );
    assert.ok(!('content' in page.items[0]));
  }
  const p1 = await v.trajectories({ token, runId: runA, step: 1, limit: 1 });
  assert.deepEqual([p1.items.map((t) => t.id), p1.nextCursor], [[traj.A10], 1]);
  const p2 = await v.trajectories({ token, runId: runA, step: 1, limit: 1, cursor: 1 });
  assert.deepEqual([p2.items.map((t) => t.id), p2.nextCursor], [[traj.A11], null]);
  await notFound(v.trajectories({ token, runId: runB, step: 1 }));

  const t = await v.trajectory({ token, trajectoryId: traj.A21 });
  assert.deepEqual(t.content, { turns: [{ role: 'assistant', text: `run ${runA} step 2 sample 1` }] });
  assert.deepEqual(
    t.toolCalls.map((c) => [c.code, c.stdout, c.status]),
    [['print(2)', '2\n', 'ok']],
  );
  await notFound(v.trajectory({ token, trajectoryId: traj.B10 }));
  await notFound(v.trajectory({ token, trajectoryId: 'tr_nope' }));

  const ev = await v.events({ token });
  assert.ok(ev.events.some((e) => e.message === 'hello from run A'));
  assert.ok(ev.events.every((e) => e.runId === runA));
});

test('step link: only its step (trajectories, metrics at that step); another step or run is not found', async () => {
  const { token } = await caller.share.create({ scope: 'step', target: { runId: runA, step: 2 } });
  const v = caller.share.view;
  const s = await v.summary({ token });
  assert.deepEqual([s.scope, s.step, s.runs.map((r) => r.id)], ['step', 2, [runA]]);

  const page = await v.trajectories({ token, runId: runA, step: 2 });
  assert.deepEqual(
    page.items.map((t) => t.id),
    [traj.A20, traj.A21],
  );
  await notFound(v.trajectories({ token, runId: runA, step: 1 }));
  await notFound(v.trajectories({ token, runId: runB, step: 2 }));

  assert.equal((await v.trajectory({ token, trajectoryId: traj.A20 })).step, 2);
  await notFound(v.trajectory({ token, trajectoryId: traj.A10 }));
  await notFound(v.trajectory({ token, trajectoryId: traj.B20 }));

  const m = await v.metrics({ token, runId: runA });
  assert.deepEqual(
    m.series.reward.map((p) => p.step),
    [2],
  );
  await notFound(v.metrics({ token, runId: runB }));
  await notFound(v.events({ token }));
});

test('trajectory link: only that trajectory; its siblings, metrics and log are not found', async () => {
  const created = await caller.share.create({ scope: 'trajectory', target: { trajectoryId: traj.B11 } });
  assert.deepEqual(created.target, { trajectoryId: traj.B11, runId: runB });
  const { token } = created;
  const v = caller.share.view;
  const s = await v.summary({ token });
  assert.deepEqual([s.scope, s.trajectoryId, s.runs.map((r) => r.id)], ['trajectory', traj.B11, [runB]]);

  const t = await v.trajectory({ token, trajectoryId: traj.B11 });
  assert.equal(t.id, traj.B11);
  assert.equal(t.toolCalls.length, 1);
  await notFound(v.trajectory({ token, trajectoryId: traj.B10 }));
  await notFound(v.trajectory({ token, trajectoryId: traj.A11 }));

  assert.deepEqual(
    (await v.trajectories({ token, runId: runB, step: 1 })).items.map((x) => x.id),
    [traj.B11],
  );
  await notFound(v.trajectories({ token, runId: runB, step: 2 }));
  await notFound(v.trajectories({ token, runId: runA, step: 1 }));
  await notFound(v.metrics({ token, runId: runB }));
  await notFound(v.events({ token }));
});

test('compare link: the named runs and their metrics; a third run and trajectories are not found', async () => {
  const { token } = await caller.share.create({
    scope: 'compare',
    target: { runIds: [runB, runA] },
    label: 'lr sweep',
  });
  const v = caller.share.view;
  const s = await v.summary({ token });
  assert.deepEqual([s.scope, s.label, s.runs.map((r) => r.name)], ['compare', 'lr sweep', ['beta', 'alpha']]);
  for (const runId of [runA, runB]) assert.equal((await v.metrics({ token, runId })).series.loss.length, 3);
  await notFound(v.metrics({ token, runId: runC }));
  await notFound(v.trajectories({ token, runId: runA, step: 1 }));
  await notFound(v.trajectory({ token, trajectoryId: traj.A10 }));
  await notFound(v.events({ token }));
});

test('step timelines: a run link at any step of its run, a step link at its step only; other links none', async () => {
  const v = caller.share.view;
  const run = await caller.share.create({ scope: 'run', target: { runId: runA } });
  for (const step of [1, 2]) {
    const t = await v.timeline({ token: run.token, runId: runA, step });
    assert.deepEqual(
      t.lanes.map((l) => l.trajectoryId),
      [traj[`A${step}0`], traj[`A${step}1`]],
    );
  }
  await notFound(v.timeline({ token: run.token, runId: runB, step: 1 }));
  const step = await caller.share.create({ scope: 'step', target: { runId: runA, step: 2 } });
  assert.equal((await v.timeline({ token: step.token, runId: runA, step: 2 })).step, 2);
  await notFound(v.timeline({ token: step.token, runId: runA, step: 1 }));
  for (const link of [
    await caller.share.create({ scope: 'trajectory', target: { trajectoryId: traj.A10 } }),
    await caller.share.create({ scope: 'compare', target: { runIds: [runA, runB] } }),
  ])
    await notFound(v.timeline({ token: link.token, runId: runA, step: 1 }));
});

test('revoked, expired, unknown and malformed tokens all answer the same not-found', async () => {
  const live = await caller.share.create({ scope: 'run', target: { runId: runA }, expiresInSeconds: 3600 });
  assert.ok(live.expiresAt && live.expiresAt.getTime() > Date.now() + 3500_000);
  assert.equal((await caller.share.view.summary({ token: live.token })).runs[0].id, runA);

  // Expired: expiresAt in the past.
  await db.prisma.shareLink.update({ where: { id: live.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
  assert.equal(await resolveShareLink(db, live.token), null);
  await notFound(caller.share.view.summary({ token: live.token }));
  await notFound(caller.share.view.metrics({ token: live.token, runId: runA }));
  await notFound(caller.share.view.trajectory({ token: live.token, trajectoryId: traj.A10 }));

  // Revoked.
  const r = await caller.share.create({ scope: 'step', target: { runId: runA, step: 1 } });
  assert.equal((await caller.share.view.trajectories({ token: r.token, runId: runA, step: 1 })).items.length, 2);
  const revoked = await caller.share.revoke({ id: r.id });
  assert.ok(revoked.revokedAt instanceof Date);
  assert.deepEqual(await caller.share.revoke({ id: r.id }), revoked);
  await notFound(caller.share.view.summary({ token: r.token }));
  await notFound(caller.share.view.trajectories({ token: r.token, runId: runA, step: 1 }));

  // Unknown and malformed.
  const unknown = Buffer.alloc(32, 7).toString('base64url');
  for (const token of [
    unknown,
    '',
    'x',
    `${live.token}x`,
    '../../etc/passwd',
    createHash('sha256').update(live.token).digest('hex'),
  ]) {
    await notFound(caller.share.view.summary({ token }));
  }

  const states = Object.fromEntries((await caller.share.list()).map((l) => [l.id, l.state]));
  assert.deepEqual(states, { [live.id]: 'expired', [r.id]: 'revoked' });
});

test('create: validation errors name the field; the target must exist', async () => {
  await badRequest(caller.share.create({ scope: 'run', target: {} } as never), 'target.runId');
  await badRequest(caller.share.create({ scope: 'run', target: { runId: 'run_missing' } }), 'target.runId');
  await badRequest(caller.share.create({ scope: 'step', target: { runId: runA } } as never), 'target.step');
  await badRequest(caller.share.create({ scope: 'step', target: { runId: runA, step: -1 } }), 'target.step');
  await badRequest(
    caller.share.create({ scope: 'trajectory', target: { trajectoryId: 'tr_missing' } }),
    'target.trajectoryId',
  );
  await badRequest(caller.share.create({ scope: 'compare', target: { runIds: [runA] } }), 'target.runIds');
  await badRequest(caller.share.create({ scope: 'compare', target: { runIds: [runA, runA] } }), 'target.runIds');
  await badRequest(
    caller.share.create({ scope: 'compare', target: { runIds: [runA, 'run_missing'] } }),
    'target.runIds.1',
  );
  await badRequest(caller.share.create({ scope: 'everything', target: {} } as never), 'scope');
  await badRequest(
    caller.share.create({ scope: 'run', target: { runId: runA }, expiresInSeconds: 0 }),
    'expiresInSeconds',
  );
  await badRequest(
    caller.share.create({ scope: 'run', target: { runId: runA }, expiresAt: new Date(Date.now() - 1000) }),
    'expiresAt',
  );
  await badRequest(
    caller.share.create({
      scope: 'run',
      target: { runId: runA },
      expiresAt: new Date(Date.now() + 1e6),
      expiresInSeconds: 60,
    }),
    'expiresAt',
  );
  assert.equal(await db.prisma.shareLink.count(), 0);

  // The store on its own (CLI use) says the same as a UserError.
  await assert.rejects(
    createShareLink(db, { scope: 'run', target: { runId: 'run_missing' } }),
    (e) => e instanceof UserError && /^target\.runId: /.test(e.message),
  );
  const at = new Date(Date.now() + 60_000);
  const ok = await createShareLink(db, { scope: 'run', target: { runId: runA }, expiresAt: at.toISOString() });
  assert.equal(ok.expiresAt?.getTime(), at.getTime());
});

test('list: never returns a token or its hash; filters by run', async () => {
  const a = await caller.share.create({ scope: 'run', target: { runId: runA }, label: 'a' });
  const c = await caller.share.create({ scope: 'compare', target: { runIds: [runA, runB] } });
  const b = await caller.share.create({ scope: 'trajectory', target: { trajectoryId: traj.B10 } });
  const all = await caller.share.list();
  assert.deepEqual(all.map((l) => l.id).sort(), [a.id, b.id, c.id].sort());
  const text = JSON.stringify(all);
  const rows = await db.prisma.shareLink.findMany();
  for (const secret of [a.token, b.token, c.token, ...rows.map((r) => r.tokenHash)]) assert.ok(!text.includes(secret));
  for (const l of all) {
    assert.deepEqual(Object.keys(l).sort(), [
      'createdAt',
      'expiresAt',
      'id',
      'label',
      'revokedAt',
      'scope',
      'state',
      'target',
    ]);
    assert.equal(l.state, 'active');
  }
  assert.deepEqual((await caller.share.list({ runId: runA })).map((l) => l.id).sort(), [a.id, c.id].sort());
  assert.deepEqual((await caller.share.list({ runId: runB })).map((l) => l.id).sort(), [b.id, c.id].sort());
  assert.deepEqual(await caller.share.list({ runId: runC }), []);
});

test('a token cannot act as the owner: revoke needs the link id; the view API has no mutations', async () => {
  const link = await caller.share.create({ scope: 'run', target: { runId: runA } });
  await assert.rejects(
    caller.share.revoke({ id: link.token }),
    (e) => e instanceof TRPCError && e.code === 'BAD_REQUEST' && /^id: /.test(e.message),
  );
  const hash = (await db.prisma.shareLink.findUniqueOrThrow({ where: { id: link.id } })).tokenHash;
  await assert.rejects(caller.share.revoke({ id: hash }), (e) => e instanceof TRPCError && e.code === 'BAD_REQUEST');
  assert.equal((await db.prisma.shareLink.findUniqueOrThrow({ where: { id: link.id } })).revokedAt, null);
  assert.equal((await caller.share.view.summary({ token: link.token })).runs[0].id, runA);

  const procedures = Object.entries(shareViewRouter._def.procedures as Record<string, { _def: { type: string } }>);
  assert.deepEqual(procedures.map(([name]) => name).sort(), [
    'events',
    'metrics',
    'problemTrajectories',
    'summary',
    'timeline',
    'trajectories',
    'trajectory',
    'trajectoryTokens',
  ]);
  for (const [name, p] of procedures) assert.equal(p._def.type, 'query', `view.${name} must be a query`);
  // Every view procedure needs a token: without one it does nothing.
  await assert.rejects(
    caller.share.view.summary({} as never),
    (e) => e instanceof TRPCError && e.code === 'BAD_REQUEST',
  );
  // A link token is not a run id either: the view is keyed by the token, nothing else opens data.
  await notFound(caller.share.view.metrics({ token: link.token, runId: link.token }));
});
