// A run launched for Ray (npm test -- ray: a real 2-node cluster, token authentication on, loopback alone): a worker
// submits the run's orchestrator through the Jobs REST API, the orchestrator runs on the cluster against the same
// database with its trainer ranks placed on both nodes, and the run page's events say where it ran; cancel stops the
// Ray job and leaves no actor behind; a worker with a wrong token fails the run at once, naming why.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, test } from 'node:test';
import type { Database } from '../../server/db/client.ts';
import { cancelRun, launchTraining, pauseTraining, resumeTraining } from '../../server/lifecycle.ts';
import { RayJobsClient } from '../../workers/cluster/ray-jobs.ts';
import { killAll, outputs, waitFor } from '../helpers/proc.ts';
import {
  clusterEvents,
  liveActors,
  type RayTestCluster,
  raySkip,
  rayWorker,
  runEnded,
  microOnTwoNodes,
  type RayRunFixture,
  startRayRunFixture,
} from '../helpers/ray-cluster.ts';

const skip = raySkip;
let cluster: RayTestCluster;
let fresh: RayRunFixture['fresh'];
let db: Database;
let fx: RayRunFixture | undefined;
let tmp = '';

const recipe = (name: string, rlSteps = 2) => microOnTwoNodes(name, rlSteps);
/** The run's Ray job has ended; Ray removes the actors its drivers owned after that, when its GCS notices they have
 *  gone (later on a busy machine): polled for, the bound only failing actors that stay. */
const noActorOf = (runId: string, what: string) =>
  waitFor(what, () => liveActors(cluster, `toolsmith-${runId}`) === 0, { timeoutMs: 60_000, intervalMs: 1000 });

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'launch-ray-'));
  fx = await startRayRunFixture([{ cpus: 2 }, { cpus: 1 }]);
  ({ cluster, fresh, db } = fx);
});
afterEach(async () => {
  await killAll();
});
after(async () => {
  await fx?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('a micro recipe launched for Ray runs end to end as a Ray job, its two ranks on the two nodes', {
  skip,
}, async () => {
  const { runId } = await launchTraining(db, { spec: recipe('ray-micro') }, { cluster: 'ray' });
  const w = rayWorker(cluster, fresh.url, 'ray-submitter');
  const run = await runEnded(db, cluster, runId, [w]);
  assert.equal(run.status, 'succeeded', `${run.error ?? ''}\n${outputs([w])}`);
  assert.equal(run.step, run.totalSteps);
  const events = await clusterEvents(db, runId);
  const states = events.filter((e) => !e.ranks && !e.services).map((e) => e.state);
  assert.ok(states.includes('RUNNING') && states.at(-1) === 'SUCCEEDED', `Ray job states: ${states.join(' → ')}`);
  const placed = events.find((e) => e.ranks);
  assert.ok(placed, 'the orchestrator on the cluster reported where the ranks run');
  assert.equal(placed.ranks!.length, 2);
  assert.notEqual(placed.ranks![0]!.node, placed.ranks![1]!.node);
  const sandboxes = events.find((e) => e.services)?.services ?? [];
  assert.equal(sandboxes.length, 2, 'a sandbox node on each CPU node, as Ray actors');
  assert.notEqual(sandboxes[0]!.node, sandboxes[1]!.node);
  const calls = await db.prisma.toolCall.count({ where: { runId, status: { not: 'internal' } } });
  assert.ok(calls > 0, 'the rollouts ran tool calls on those nodes');
  const id = events[0]!.rayJobId;
  const ray = new RayJobsClient(cluster.dashboardUrl, fs.readFileSync(cluster.tokenFile, 'utf8').trim());
  const first = await ray.status(id);
  assert.equal(first.status, 'SUCCEEDED', `the run's first Ray job: ${JSON.stringify(first).slice(0, 800)}`);
  assert.equal(first.metadata?.toolsmith_run, runId);
  const metrics = await db.prisma.metricPoint.count({ where: { runId, key: 'sft/loss' } });
  assert.ok(metrics > 0, 'the orchestrator on the cluster wrote its metrics to the same database');
  await noActorOf(runId, 'no actor to outlive the run');
});

test('rollout servers on Ray: two serve-model actors serve the rollouts, each weight version pushed to both', {
  skip,
}, async () => {
  const spec = { ...recipe('ray-serve-model'), engine: { kind: 'ray', server: 'serve-model', replicas: 2 } };
  const { runId } = await launchTraining(db, { spec }, { cluster: 'ray' });
  const w = rayWorker(cluster, fresh.url, 'ray-rollout');
  const run = await runEnded(db, cluster, runId, [w]);
  assert.equal(run.status, 'succeeded', `${run.error ?? ''}\n${outputs([w])}`);
  const events = await clusterEvents(db, runId);
  const servers = events.find((e) => e.services?.some((x) => x.kind === 'rollout'))?.services ?? [];
  assert.equal(servers.length, 2, 'a serve-model actor on each node');
  assert.notEqual(servers[0]!.node, servers[1]!.node);
  // Rollouts came from those servers on the pushed versions: every turn records the version it was generated on.
  const rows = await db.prisma.trajectory.findMany({
    where: { runId, split: 'train' },
    select: { step: true, content: true },
  });
  assert.ok(rows.length > 0);
  const byStep = new Map<number, Set<number>>();
  for (const r of rows)
    for (const m of r.content.matchAll(/"weightVersion":(\d+)/g))
      byStep.set(r.step, (byStep.get(r.step) ?? new Set()).add(Number(m[1])));
  assert.ok(byStep.size > 0, 'turns record the weight version they were generated on');
  for (const [step, set] of byStep) assert.equal(set.size, 1, `step ${step}: one weight version (${[...set]})`);
  await noActorOf(runId, 'the servers to end with the run');
});

test('cancel stops the Ray job and leaves no actor or process behind', { skip }, async () => {
  const { runId } = await launchTraining(db, { spec: recipe('ray-cancel', 50) }, { cluster: 'ray' });
  const w = rayWorker(cluster, fresh.url, 'ray-canceller');
  await waitFor(
    'the ranks to be placed',
    async () => {
      const r = await db.prisma.run.findUniqueOrThrow({ where: { id: runId } });
      if (['succeeded', 'failed'].includes(r.status)) throw new Error(`run ${r.status} first: ${r.error}`);
      return (await clusterEvents(db, runId)).some((e) => e.ranks);
    },
    {
      timeoutMs: 240_000,
      intervalMs: 500,
      detail: () => outputs([w]),
    },
  );
  await cancelRun(db, runId);
  const run = await runEnded(db, cluster, runId, [w], 120_000);
  assert.equal(run.status, 'cancelled');
  const id = (await clusterEvents(db, runId))[0]!.rayJobId;
  const ray = new RayJobsClient(cluster.dashboardUrl, fs.readFileSync(cluster.tokenFile, 'utf8').trim());
  await waitFor('the Ray job to stop', async () => (await ray.status(id)).status === 'STOPPED', { timeoutMs: 60_000 });
  await waitFor('no actor of the run', () => liveActors(cluster, `toolsmith-${runId}`) === 0, {
    timeoutMs: 30_000,
    intervalMs: 1000,
  });
});

test('pause stops the Ray job at a step; resume submits it again and the run continues to the end', {
  skip,
}, async () => {
  const { runId } = await launchTraining(db, { spec: recipe('ray-pause', 12) }, { cluster: 'ray' });
  const w = rayWorker(cluster, fresh.url, 'ray-pauser');
  await waitFor(
    'RL to start',
    async () =>
      (await db.prisma.metricPoint.count({ where: { runId, key: 'rollout/accuracy' } })) > 0 ||
      (await db.prisma.run.findUniqueOrThrow({ where: { id: runId } })).status === 'failed',
    { timeoutMs: 240_000, intervalMs: 300, detail: () => outputs([w]) },
  );
  await pauseTraining(db, runId);
  const paused = await runEnded(db, cluster, runId, [w], 120_000);
  assert.equal(paused.status, 'paused', paused.error ?? '');
  const first = (await clusterEvents(db, runId))[0]!.rayJobId;
  const ray = new RayJobsClient(cluster.dashboardUrl, fs.readFileSync(cluster.tokenFile, 'utf8').trim());
  await waitFor('the Ray job to stop', async () => (await ray.status(first)).status === 'STOPPED', {
    timeoutMs: 60_000,
  });
  await waitFor('its actors to go', () => liveActors(cluster, `toolsmith-${runId}`) === 0, {
    timeoutMs: 30_000,
    intervalMs: 1000,
  });
  await waitFor('the job to settle', async () => {
    try {
      await resumeTraining(db, runId);
      return true;
    } catch (e) {
      if (/still stopping/.test((e as Error).message)) return false;
      throw e;
    }
  });
  const run = await runEnded(db, cluster, runId, [w]);
  assert.equal(run.status, 'succeeded', `${run.error ?? ''}\n${outputs([w])}`);
  assert.equal(run.step, run.totalSteps);
  const jobs = new Set((await clusterEvents(db, runId)).map((e) => e.rayJobId).filter(Boolean));
  assert.ok(jobs.size >= 2, 'the resume was a new Ray job');
  const steps = (await db.prisma.metricPoint.findMany({ where: { runId, key: 'rollout/accuracy' } })).map(
    (p) => p.step,
  );
  assert.equal(new Set(steps).size, steps.length, 'no RL step stored twice');
  assert.equal(steps.length, 12);
});

test('a worker whose token the cluster refuses fails the run at once, naming the token file', { skip }, async () => {
  const bad = path.join(tmp, 'wrong-token');
  fs.writeFileSync(bad, 'not-the-token\n', { mode: 0o600 });
  const { runId } = await launchTraining(db, { spec: recipe('ray-bad-token') }, { cluster: 'ray' });
  const w = rayWorker(cluster, fresh.url, 'ray-bad-token', { TOOLSMITH_RAY_TOKEN_FILE: bad });
  const run = await runEnded(db, cluster, runId, [w], 60_000);
  assert.equal(run.status, 'failed');
  assert.match(run.error ?? '', /TOOLSMITH_RAY_TOKEN_FILE must hold the token/);
});
