// The "train" job end to end on real parts: worker processes, the PyTorch trainer process, the embedded ONNX engine,
// the sandbox pool, the database. The micro recipe (30 SFT steps, a few RL steps) keeps each run to seconds.
import { test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { freshRunDatabase } from '../helpers/fresh-run-database.ts';
import { metricSeries, waitRunEnded } from '../helpers/runs.ts';
import { outputs, runCli, spawnWorker, waitFor, type Proc } from '../helpers/proc.ts';
import type { Database } from '../../server/db/client.ts';
import { MICRO_INPUT } from '../../server/recipes/defaults.ts';
import { readEvents } from '../../server/store/events.ts';
import { runReport } from '../../server/store/run-report.ts';
import { launchTraining, pauseTraining, resumeTraining } from '../../server/lifecycle.ts';
import { readStepTimeline } from '../../server/store/step-timeline.ts';
import type { TraceDocument } from '../../contracts/perfetto-trace.ts';
import type { StoredTrajectoryContent } from '../../contracts/trajectory.ts';

let db: Database;
let url: string;
freshRunDatabase((fresh) => {
  ({ db, url } = fresh);
});

const recipe = (over: Record<string, unknown> = {}, rl: Record<string, unknown> = {}) => ({
  ...MICRO_INPUT,
  ...over,
  stages: [MICRO_INPUT.stages[0], { ...MICRO_INPUT.stages[1], ...rl }],
});

const finished = (runId: string, procs: Proc[], timeoutMs = 180_000) =>
  waitRunEnded(db, runId, { timeoutMs, detail: () => outputs(procs) });

const series = (runId: string, key: string) => metricSeries(db, runId, key);

test('micro recipe: SFT then GRPO-RoC steps through the real trainer, engine and sandbox; everything stored', async () => {
  const { runId } = await launchTraining(db, { spec: recipe({ name: 'micro-e2e' }) });
  const w = spawnWorker(url, 'train-1', { leaseSeconds: 5, heartbeatSeconds: 1 });
  const run = await finished(runId, [w]);
  assert.equal(run.status, 'succeeded', run.error ?? '');
  assert.equal(run.step, 32);
  assert.equal(run.totalSteps, 32);

  const loss = await series(runId, 'sft/loss');
  assert.deepEqual(
    loss.map(([s]) => s),
    Array.from({ length: 30 }, (_, i) => i + 1),
  );
  const head = loss.slice(0, 3).reduce((a, [, v]) => a + v, 0) / 3;
  const tail = loss.slice(-3).reduce((a, [, v]) => a + v, 0) / 3;
  assert.ok(tail < head * 0.7, `SFT loss decreases (${head.toFixed(3)} → ${tail.toFixed(3)})`);

  assert.deepEqual(
    (await series(runId, 'rollout/accuracy')).map(([s]) => s),
    [31, 32],
  );
  // Each step's accuracy with its 95% band (bootstrap over the step's prompts).
  const [acc, lo, hi] = await Promise.all(
    ['rollout/accuracy', 'rollout/accuracy_lo', 'rollout/accuracy_hi'].map((k) => series(runId, k)),
  );
  acc.forEach(([, v], i) =>
    assert.ok(
      lo[i]![1] <= v + 1e-12 && v <= hi[i]![1] + 1e-12,
      `step ${acc[i]![0]}: ${lo[i]![1]} ≤ ${v} ≤ ${hi[i]![1]}`,
    ),
  );
  for (const key of [
    'time/rollout',
    'time/reward',
    'time/roc',
    'time/train',
    'time/sync',
    'time/storage',
    'rollout/tool_error_rate',
    'roc/kept',
  ]) {
    assert.equal((await series(runId, key)).length, 2, key);
  }
  // The embedded engine's batch over each step's rollouts: at least one row per decode step, at most the step's 8.
  for (const [step, rows] of await series(runId, 'engine/mean_batch'))
    assert.ok(rows >= 1 && rows <= 2 * 4, `step ${step}: mean decode batch ${rows}`);
  assert.equal((await series(runId, 'engine/mean_batch')).length, 2);
  for (const [step, share] of await series(runId, 'engine/prefill_fraction'))
    assert.ok(share > 0 && share < 1, `step ${step}: prefill share of the engine's time ${share}`);
  assert.equal((await series(runId, 'engine/prefill_fraction')).length, 2);
  const trajectories = await db.prisma.trajectory.findMany({ where: { runId, split: 'train' } });
  assert.equal(trajectories.length, 2 * 2 * 4, 'all 2G rollouts of every prompt of every step are stored');
  for (const step of [31, 32]) {
    const ts = trajectories.filter((t) => t.step === step);
    assert.equal(ts.length, 8);
    assert.ok(ts.every((t) => t.selectReason && t.pErr !== null && t.pFormat !== null && t.stage === 1));
    // Per group: either dropped (equal rewards) or exactly G = 2 kept.
    for (const g of new Set(ts.map((t) => t.groupId))) {
      const group = ts.filter((t) => t.groupId === g);
      const kept = group.filter((t) => t.selected).length;
      if (new Set(group.map((t) => t.reward)).size === 1) assert.equal(kept, 0);
      else assert.equal(kept, 2);
    }
  }
  const ckpts = await db.prisma.checkpoint.findMany({ where: { runId }, orderBy: { step: 'asc' } });
  assert.deepEqual(
    ckpts.map((c) => c.step),
    [30, 31, 32],
  );
  const evals = await db.prisma.evalResult.findMany({ where: { runId }, orderBy: { step: 'asc' } });
  assert.deepEqual(
    evals.map((e) => e.step),
    [30, 32],
    'evaluated after each stage: the SFT baseline, then after RL',
  );
  assert.equal(await db.prisma.trajectory.count({ where: { runId, split: 'eval' } }), 2 * 4 * 2);
  const events = await readEvents(db, runId, 0, 10_000);
  assert.ok(events.some((e) => e.type === 'stage' && /"rl"/.test(e.message)));
  assert.ok(
    events.some((e) => e.type === 'rollouts'),
    'live rollouts were published',
  );
  // The stage report (`npx toolsmith train --report`): both stages with their wall time and the evaluation that
  // ends each, the paired difference from the SFT evaluation to the last, the commit and seed.
  const report = await runReport(db, runId);
  assert.deepEqual(
    report.stages.map((s) => [s.name, s.startStep, s.endStep, s.starts, s.evals.map((e) => e.step)]),
    [
      ['sft', 0, 30, 1, [30]],
      ['rl', 30, 32, 1, [32]],
    ],
  );
  assert.ok(
    report.stages.every((s) => s.wallS! > 0) && report.wallS! >= report.stages.reduce((a, s) => a + s.wallS!, 0),
  );
  assert.ok(report.stages[0]!.evals[0]!.pass1Ci && report.stages[0]!.evals[0]!.noToolCallRate != null);
  assert.equal(report.paired.length, 1);
  assert.equal(report.paired[0]!.paired?.problems, 4);
  assert.equal(report.codeVersion, run.codeVersion);
  assert.equal(report.seed, run.seed);

  // The step timeline (the run page's panel, `export --format perfetto`): a lane per trajectory of the step with its
  // turns and calls, then the phases after generation, recorded as they ran, in the synchronous loop's order.
  const timeline = await readStepTimeline(db, runId, 32);
  assert.equal(timeline.lanes.length, 8 + 1);
  assert.ok(timeline.phasesRecorded && timeline.untimed === 0);
  const phases = timeline.blocks.filter((b) => b.lane === 8);
  assert.deepEqual([...new Set(phases.map((b) => b.kind))], ['reward', 'roc', 'train', 'sync', 'storage']);
  const generated = Math.max(...timeline.blocks.filter((b) => b.lane < 8).map((b) => b.end));
  assert.ok(phases[0]!.start >= generated, 'rewards are computed after the last rollout ends');
  for (let i = 1; i < phases.length; i++)
    assert.ok(phases[i]!.start >= phases[i - 1]!.end, `${phases[i]!.kind} after ${phases[i - 1]!.kind}`);
  const stored = trajectories.filter((t) => t.step === 32).map((t) => JSON.parse(t.content) as StoredTrajectoryContent);
  const turns = stored.reduce((a, c) => a + c.turns.length, 0);
  const calls = stored.reduce((a, c) => a + c.turns.filter((t) => t.tool).length, 0);
  // Exported as a Perfetto trace by the CLI: the slices of each kind, counted against the database.
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-perfetto-')), 'step32.json');
  const r = await runCli(['export', runId, '--format', 'perfetto', '--step', '32', '--out', out], {
    DATABASE_URL: url,
  });
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(fs.readFileSync(out, 'utf8')) as TraceDocument;
  const slices = doc.traceEvents.filter((e) => e.ph === 'X');
  const count = (kind: string) => slices.filter((e) => e.args?.kind === kind).length;
  assert.deepEqual(
    [count('generate'), count('tool'), count('train'), count('sync'), count('storage')],
    [turns, calls, 1, 1, 1],
  );
  assert.equal(doc.traceEvents.filter((e) => e.name === 'thread_name').length, 9);
  const again = await runCli(['export', runId, '--format', 'perfetto', '--step', '32', '--out', out], {
    DATABASE_URL: url,
  });
  assert.notEqual(again.code, 0);
  assert.match(again.stderr, /--out: .* exists; not replaced/);
});

test('resume: a worker SIGKILLed mid-RL is replaced; no step is skipped or stored twice', async () => {
  const { runId } = await launchTraining(db, { spec: recipe({ name: 'micro-resume' }, { steps: 5 }) });
  const first = spawnWorker(url, 'train-a', { leaseSeconds: 3, heartbeatSeconds: 0.5 });
  await waitFor(
    'RL step 32 to be stored',
    async () =>
      (await db.prisma.metricPoint.count({ where: { runId, key: 'rollout/accuracy', step: { gte: 32 } } })) > 0,
    { timeoutMs: 180_000, intervalMs: 100, detail: () => outputs([first]) },
  );
  first.child.kill('SIGKILL');
  await first.exited;
  // Where the kill landed depends on how far the worker got meanwhile (a checkpoint per RL step): the resume must
  // start from the newest checkpoint it left, whichever that is.
  const lastCheckpoint = await db.prisma.checkpoint.findFirst({ where: { runId }, orderBy: { step: 'desc' } });
  const second = spawnWorker(url, 'train-b', { leaseSeconds: 3, heartbeatSeconds: 0.5 });
  const run = await finished(runId, [second]);
  assert.equal(run.status, 'succeeded', run.error ?? '');
  assert.equal(run.step, 35);
  assert.deepEqual(
    (await series(runId, 'rollout/accuracy')).map(([s]) => s),
    [31, 32, 33, 34, 35],
  );
  assert.deepEqual(
    (await series(runId, 'sft/loss')).map(([s]) => s),
    Array.from({ length: 30 }, (_, i) => i + 1),
  );
  const rows = await db.prisma.trajectory.findMany({
    where: { runId, split: 'train' },
    select: { step: true, groupId: true, sampleIndex: true },
  });
  assert.equal(rows.length, 5 * 8);
  assert.equal(
    new Set(rows.map((r) => `${r.step}/${r.groupId}/${r.sampleIndex}`)).size,
    rows.length,
    'no duplicate trajectory',
  );
  const events = await readEvents(db, runId, 0, 10_000);
  const resumes = events.filter((e) => e.type === 'resume').map((e) => e.message);
  assert.equal(resumes.length, 1, resumes.join('\n'));
  const from = Number(/resuming from the checkpoint at step (\d+)/.exec(resumes[0]!)?.[1]);
  // An RL checkpoint (step 31 is stored before step 32's figures), not the last step's, and none older than the
  // newest the first worker left (one it wrote as it died can only make the step later).
  assert.ok(
    from >= Math.max(31, lastCheckpoint?.step ?? 0) && from < 35,
    `the second attempt resumed from the checkpoint at step ${from}; the newest after the kill was ${lastCheckpoint?.step}`,
  );
  // The report counts the RL stage's second start and ends it at the run's last step.
  const rl = (await runReport(db, runId)).stages[1]!;
  assert.deepEqual([rl.starts, rl.endStep], [2, 35]);
});

test('pause stops at a step boundary and keeps the run; resume continues it to the end', async () => {
  const { runId } = await launchTraining(db, { spec: recipe({ name: 'micro-pause' }, { steps: 4 }) });
  const w = spawnWorker(url, 'train-p', { leaseSeconds: 5, heartbeatSeconds: 0.5 });
  await waitFor(
    'RL to start',
    async () => (await db.prisma.metricPoint.count({ where: { runId, key: 'rollout/accuracy' } })) > 0,
    { timeoutMs: 180_000, detail: () => outputs([w]) },
  );
  await pauseTraining(db, runId);
  await waitFor(
    'the job to stop',
    async () => (await db.prisma.job.count({ where: { runId, status: 'leased' } })) === 0,
    // A bound on a stop that must come (at the end of the step in flight), not a measure of it.
    { timeoutMs: 120_000, detail: () => outputs([w]) },
  );
  const paused = await db.prisma.run.findUniqueOrThrow({ where: { id: runId } });
  assert.equal(paused.status, 'paused');
  assert.ok(paused.step < 34);
  await assert.rejects(pauseTraining(db, runId), /only a queued or running run can pause/);
  await resumeTraining(db, runId);
  const run = await finished(runId, [w]);
  assert.equal(run.status, 'succeeded', run.error ?? '');
  assert.deepEqual(
    (await series(runId, 'rollout/accuracy')).map(([s]) => s),
    [31, 32, 33, 34],
  );
});

test('a NaN loss fails the run with the reason (fault injected into the trainer); the worker lives on', async () => {
  const { runId } = await launchTraining(db, { spec: recipe({ name: 'micro-nan' }) });
  const w = spawnWorker(url, 'train-nan', { env: { TOOLSMITH_TRAINER_FAULT_NAN_AT_STEP: '5' } });
  const run = await finished(runId, [w]);
  assert.equal(run.status, 'failed');
  assert.match(run.error ?? '', /NaN loss/);
  const events = await readEvents(db, runId, 0, 10_000);
  assert.ok(events.some((e) => e.type === 'trainer_error' && e.level === 'error'));
  const job = await db.prisma.job.findFirstOrThrow({ where: { runId } });
  assert.equal(job.attempts, 1, 'not retried: another attempt would hit the same NaN');
  assert.ok(w.alive(), 'the worker is still running');
});

test('bad recipes are refused before a run exists, naming the field', async () => {
  await assert.rejects(launchTraining(db, { spec: recipe({ name: 'bad' }, { keep: 9 }) }), /stages\.1\.keep: /);
  await assert.rejects(launchTraining(db, { name: 'no-such-recipe' }), /no recipe named "no-such-recipe"/);
  assert.equal(await db.prisma.run.count({ where: { name: { startsWith: 'bad' } } }), 0);
});
