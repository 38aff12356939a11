// One-step off-policy RL (docs/method.md §5 "Asynchronous steps") on real parts: worker processes, the
// PyTorch trainer, the embedded ONNX engine, the sandbox pool, the database. The micro recipe keeps each run short.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshRunDatabase } from '../helpers/fresh-run-database.ts';
import { metricSeries, waitRunEnded } from '../helpers/runs.ts';
import { outputs, spawnWorker, waitFor, type Proc } from '../helpers/proc.ts';
import type { Database } from '../../server/db/client.ts';
import { MICRO_INPUT } from '../../server/recipes/defaults.ts';
import { launchTraining, pauseTraining, resumeTraining } from '../../server/lifecycle.ts';

let db: Database;
let url: string;
freshRunDatabase((fresh) => {
  ({ db, url } = fresh);
});

// One trainer thread: the thread policy's switches would change the float sums from run to run.
const WORKER = { leaseSeconds: 3, heartbeatSeconds: 0.5, env: { TOOLSMITH_TRAINER_THREADS: '1' } };
const RL_STEPS = 5;
const FIRST_RL_STEP = 31; // after the micro recipe's 30 SFT steps

const recipe = (name: string, async: Record<string, unknown> | undefined, seed = 11) => ({
  ...MICRO_INPUT,
  name,
  seed,
  stages: [MICRO_INPUT.stages[0], { ...MICRO_INPUT.stages[1], steps: RL_STEPS, ...(async ? { async } : {}) }],
});

const finished = (runId: string, procs: Proc[], timeoutMs = 240_000) =>
  waitRunEnded(db, runId, { timeoutMs, detail: () => outputs(procs) });

const series = (runId: string, key: string) => metricSeries(db, runId, key);

/** The weight versions a stored trajectory's turns were generated with. */
const versionsOf = (content: string): (number | null)[] =>
  (JSON.parse(content) as { turns: { weightVersion?: number | null }[] }).turns.map((t) => t.weightVersion ?? null);

async function trainRows(runId: string) {
  return db.prisma.trajectory.findMany({
    where: { runId, split: 'train' },
    orderBy: [{ step: 'asc' }, { groupId: 'asc' }, { sampleIndex: 'asc' }],
    select: { step: true, groupId: true, sampleIndex: true, reward: true, selected: true, content: true },
  });
}

/** Every RL step metered and stored once (8 trajectories each, none twice), each within the staleness bound of 1. */
async function assertEveryStepOnce(runId: string) {
  assert.deepEqual(
    (await series(runId, 'rollout/accuracy')).map(([s]) => s),
    Array.from({ length: RL_STEPS }, (_, i) => FIRST_RL_STEP + i),
  );
  const rows = await trainRows(runId);
  assert.equal(rows.length, RL_STEPS * 8);
  assert.equal(new Set(rows.map((r) => `${r.step}/${r.groupId}/${r.sampleIndex}`)).size, rows.length);
  const staleness = await series(runId, 'async/staleness_max');
  assert.ok(
    staleness.every(([, v]) => v <= 1),
    JSON.stringify(staleness),
  );
}

test('async, maxStaleness 1: each step after the first trains on rollouts one update old, never more; turns keep their versions', async () => {
  const { runId } = await launchTraining(db, { spec: recipe('micro-async', { enabled: true, maxStaleness: 1 }) });
  const w = spawnWorker(url, 'async-a', WORKER);
  const run = await finished(runId, [w]);
  assert.equal(run.status, 'succeeded', run.error ?? '');
  const staleness = await series(runId, 'async/staleness_max');
  assert.deepEqual(
    staleness.map(([s]) => s),
    Array.from({ length: RL_STEPS }, (_, i) => FIRST_RL_STEP + i),
  );
  assert.ok(
    staleness.every(([, v]) => v <= 1),
    `the bound holds: ${JSON.stringify(staleness)}`,
  );
  // The first step's rollouts come from the weights synced at the stage's start; each later one's were generated
  // while the step before it trained.
  assert.deepEqual(
    staleness.map(([, v]) => v),
    [0, 1, 1, 1, 1],
  );
  assert.deepEqual(
    (await series(runId, 'async/off_policy_token_share')).map(([, v]) => v),
    [0, 1, 1, 1, 1],
  );
  // Each step's turns all carry one weight version: the stage's first two steps the weights synced at its start
  // (step 32's rollouts were generated while step 31 trained), then one version more per step.
  const rows = await trainRows(runId);
  const byStep = new Map<number, Set<number | null>>();
  for (const r of rows)
    for (const v of versionsOf(r.content)) byStep.set(r.step, (byStep.get(r.step) ?? new Set()).add(v));
  const versions = [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([, vs]) => [...vs]);
  assert.ok(
    versions.every((vs) => vs.length === 1 && typeof vs[0] === 'number'),
    JSON.stringify(versions),
  );
  const flat = versions.map((vs) => vs[0] as number);
  assert.deepEqual(
    flat.map((v) => v - flat[0]!),
    [0, 0, 1, 2, 3],
    `weight versions by step: ${flat}`,
  );
  // Idle time is measured on both sides.
  assert.equal((await series(runId, 'time/trainer_idle')).length, RL_STEPS);
  assert.equal((await series(runId, 'time/engine_idle')).length, RL_STEPS);
});

test('async with maxStaleness 0 reproduces the synchronous loop: the same trajectories, rewards, selection and losses', async () => {
  const a = await launchTraining(db, { spec: recipe('micro-sync', undefined, 5) });
  const b = await launchTraining(db, { spec: recipe('micro-async-0', { enabled: true, maxStaleness: 0 }, 5) });
  const w = spawnWorker(url, 'async-b', WORKER);
  for (const id of [a.runId, b.runId]) {
    const run = await finished(id, [w]);
    assert.equal(run.status, 'succeeded', run.error ?? '');
  }
  const strip = (rows: Awaited<ReturnType<typeof trainRows>>) =>
    rows.map((r) => {
      const c = JSON.parse(r.content) as { turns: { text: string; tool: { status: string; text: string } | null }[] };
      return {
        at: `${r.step}/${r.groupId}/${r.sampleIndex}`,
        reward: r.reward,
        selected: r.selected,
        turns: c.turns.map((t) => [t.text, t.tool?.status ?? '', t.tool?.text ?? '']),
      };
    });
  const [ra, rb] = [strip(await trainRows(a.runId)), strip(await trainRows(b.runId))];
  assert.equal(ra.length, RL_STEPS * 8);
  assert.deepEqual(rb, ra);
  assert.deepEqual(await series(b.runId, 'train/loss'), await series(a.runId, 'train/loss'));
  assert.ok((await series(b.runId, 'async/staleness_max')).every(([, v]) => v === 0));
});

test('async: a worker SIGKILLed between a generation and its update is replaced; no step is skipped or stored twice', async () => {
  const { runId } = await launchTraining(db, {
    spec: recipe('micro-async-resume', { enabled: true, maxStaleness: 1 }),
  });
  const first = spawnWorker(url, 'async-c', WORKER);
  // Step 32 is stored: step 33's rollouts are being generated (or waiting for their update).
  await waitFor(
    'RL step 32 to be stored',
    async () =>
      (await db.prisma.metricPoint.count({ where: { runId, key: 'rollout/accuracy', step: { gte: 32 } } })) > 0,
    { timeoutMs: 240_000, intervalMs: 50, detail: () => outputs([first]) },
  );
  first.child.kill('SIGKILL');
  await first.exited;
  const second = spawnWorker(url, 'async-d', WORKER);
  const run = await finished(runId, [second]);
  assert.equal(run.status, 'succeeded', run.error ?? '');
  assert.equal(run.step, FIRST_RL_STEP + RL_STEPS - 1);
  // After the restart the first step regenerates its rollouts from their seeds on the checkpoint's weights.
  await assertEveryStepOnce(runId);
});

test('async: pause stops between steps while the next step is being generated; resume ends the run with every step once', async () => {
  const { runId } = await launchTraining(db, {
    spec: recipe('micro-async-pause', { enabled: true, maxStaleness: 1 }),
  });
  const w = spawnWorker(url, 'async-p', WORKER);
  // Step 31 is stored: step 32's rollouts were generated while it trained, so a generation is in flight or queued.
  await waitFor(
    'RL step 31 to be stored',
    async () =>
      (await db.prisma.metricPoint.count({ where: { runId, key: 'rollout/accuracy', step: { gte: FIRST_RL_STEP } } })) >
      0,
    { timeoutMs: 240_000, intervalMs: 50, detail: () => outputs([w]) },
  );
  await pauseTraining(db, runId);
  await waitFor(
    'the job to stop',
    async () => (await db.prisma.job.count({ where: { runId, status: { in: ['queued', 'leased'] } } })) === 0,
    { timeoutMs: 60_000, detail: () => outputs([w]) },
  );
  const paused = await db.prisma.run.findUniqueOrThrow({ where: { id: runId } });
  assert.equal(paused.status, 'paused');
  assert.ok(paused.step < FIRST_RL_STEP + RL_STEPS - 1, `paused at step ${paused.step}`);
  // What was stored before the pause is whole steps: each stored step has all of its 8 trajectories.
  const before = await trainRows(runId);
  const perStep = new Map<number, number>();
  for (const r of before) perStep.set(r.step, (perStep.get(r.step) ?? 0) + 1);
  assert.ok(
    [...perStep.values()].every((n) => n === 8),
    JSON.stringify([...perStep]),
  );
  await resumeTraining(db, runId);
  const run = await finished(runId, [w]);
  assert.equal(run.status, 'succeeded', run.error ?? '');
  await assertEveryStepOnce(runId);
});

test('async with partial rollouts: the engine takes each update between the turns of the rollouts in flight; the bound holds', async () => {
  const { runId } = await launchTraining(db, {
    spec: recipe('micro-async-partial', { enabled: true, maxStaleness: 1, partialRollouts: true }),
  });
  const w = spawnWorker(url, 'async-e', WORKER);
  const run = await finished(runId, [w]);
  assert.equal(run.status, 'succeeded', run.error ?? '');
  const max = await series(runId, 'async/staleness_max');
  const mean = await series(runId, 'async/staleness_mean');
  const share = await series(runId, 'async/off_policy_token_share');
  assert.equal(max.length, RL_STEPS);
  max.forEach(([step, m], j) => {
    assert.ok(m <= 1, `step ${step}: staleness ${m} over the bound`);
    assert.ok(mean[j]![1] <= m + 1e-9 && share[j]![1] >= 0 && share[j]![1] <= 1, `step ${step}`);
  });
  // Within a trajectory the versions never go back, and every turn has one.
  for (const r of await trainRows(runId)) {
    const vs = versionsOf(r.content);
    assert.ok(
      vs.every((v, i) => typeof v === 'number' && (i === 0 || v >= vs[i - 1]!)),
      `${r.step}/${r.groupId}/${r.sampleIndex}: ${vs}`,
    );
  }
});
