// Faults of a run on Ray (npm test -- ray: a real 2-node cluster, token authentication on, loopback alone): a trainer
// rank's actor killed mid-RL, the orchestrator's own Ray job killed, and the worker that follows it killed, each
// resume the run from its last checkpoint with no step lost or stored twice; a lost head fails the run with a clear
// reason. The last test takes the cluster down.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, afterEach, before, test } from 'node:test';
import type { Database } from '../../server/db/client.ts';
import { launchTraining } from '../../server/lifecycle.ts';
import { readEvents } from '../../server/store/events.ts';
import { killAll, outputs, type Proc, waitFor } from '../helpers/proc.ts';
import {
  clusterEvents,
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
/** The micro recipe's SFT steps (60 problems × 2 epochs / batch 4). */
const SFT = 30;

const recipe = microOnTwoNodes;

const rlStepStored = (runId: string, step: number, procs: Proc[]) =>
  waitFor(
    `RL step ${step} to be stored`,
    async () =>
      (await db.prisma.metricPoint.count({ where: { runId, key: 'rollout/accuracy', step: { gte: step } } })) > 0,
    { timeoutMs: 300_000, intervalMs: 200, detail: () => outputs(procs) },
  );

/** Every RL step stored once, every SFT step once, each group's samples once: nothing lost or doubled. */
async function assertWhole(runId: string, rl: number) {
  const steps = async (key: string) =>
    (await db.prisma.metricPoint.findMany({ where: { runId, key }, orderBy: { step: 'asc' } })).map((p) => p.step);
  assert.deepEqual(
    await steps('sft/loss'),
    Array.from({ length: SFT }, (_, i) => i + 1),
  );
  assert.deepEqual(
    await steps('rollout/accuracy'),
    Array.from({ length: rl }, (_, i) => SFT + 1 + i),
  );
  const rows = await db.prisma.trajectory.findMany({
    where: { runId, split: 'train' },
    select: { step: true, groupId: true, sampleIndex: true },
  });
  assert.equal(new Set(rows.map((r) => `${r.step}/${r.groupId}/${r.sampleIndex}`)).size, rows.length, 'no duplicate');
  const events = await readEvents(db, runId, 0, 10_000);
  assert.ok(
    events.some((e) => e.type === 'resume' && /resuming from the checkpoint/.test(e.message)),
    'a later attempt resumed from a checkpoint',
  );
}

before(async () => {
  if (skip) return;
  fx = await startRayRunFixture([{ cpus: 2 }, { cpus: 1 }]);
  ({ cluster, fresh, db } = fx);
});
afterEach(async () => {
  await killAll();
});
after(async () => {
  await fx?.stop();
});

test("a trainer rank's actor killed mid-RL: the run restarts its group and resumes from the checkpoint", {
  skip,
}, async () => {
  const { runId } = await launchTraining(db, { spec: recipe('ray-kill-rank', 5) }, { cluster: 'ray' });
  const w = rayWorker(cluster, fresh.url, 'ray-fault-rank');
  await rlStepStored(runId, SFT + 2, [w]);
  const placed = (await clusterEvents(db, runId)).filter((e) => e.ranks).at(-1)!;
  process.kill(placed.ranks![1]!.pid, 'SIGKILL');
  const run = await runEnded(db, cluster, runId, [w]);
  assert.equal(run.status, 'succeeded', `${run.error ?? ''}\n${outputs([w])}`);
  await assertWhole(runId, 5);
  assert.ok((await clusterEvents(db, runId)).filter((e) => e.ranks).length >= 2, 'the group was placed again');
});

test("the orchestrator's Ray job killed, then the worker following it: each is taken over, nothing lost", {
  skip,
}, async () => {
  const { runId } = await launchTraining(db, { spec: recipe('ray-kill-orchestrator', 10) }, { cluster: 'ray' });
  const first = rayWorker(cluster, fresh.url, 'ray-fault-a');
  await rlStepStored(runId, SFT + 1, [first]);
  // The orchestrator inside the Ray job dies as a crashed process does.
  execFileSync('pkill', ['-KILL', '-f', 'toolsmith.mjs ray-entry']);
  await rlStepStored(runId, SFT + 3, [first]);
  // Then the worker that follows it: another one leases the job when the lease runs out and attaches to the Ray job.
  first.child.kill('SIGKILL');
  await first.exited;
  const second = rayWorker(cluster, fresh.url, 'ray-fault-b');
  const run = await runEnded(db, cluster, runId, [second]);
  assert.equal(run.status, 'succeeded', `${run.error ?? ''}\n${outputs([second])}`);
  await assertWhole(runId, 10);
  const events = await readEvents(db, runId, 0, 10_000);
  // The second worker took over the Ray job the first one followed: it attached to it while it ran, or, when the
  // job had finished before the first worker's lease ran out, took its success; it never submitted a third one.
  assert.ok(
    events.some((e) =>
      /following the run's Ray job .* \(started by an earlier attempt\)|Ray job .* had already succeeded/.test(
        e.message,
      ),
    ),
    'the second worker took over the Ray job instead of submitting another',
  );
  const submitted = events.filter((e) => /^submitted to the Ray cluster at /.test(e.message));
  assert.equal(submitted.length, 2, 'one Ray job at launch and one after the orchestrator was killed, no third');
});

test('a lost Ray head fails the run with the reason', { skip }, async () => {
  const { runId } = await launchTraining(db, { spec: recipe('ray-lost-head', 20) }, { cluster: 'ray' });
  // The head is stopped for good here, so the wait before the run fails needs no margin for a slow one.
  const w = rayWorker(cluster, fresh.url, 'ray-fault-head', { TOOLSMITH_RAY_HEAD_LOST_S: '5' });
  await rlStepStored(runId, SFT + 1, [w]);
  await cluster.stop(); // every node of it, the head first
  const run = await runEnded(db, cluster, runId, [w], 180_000);
  assert.equal(run.status, 'failed');
  assert.match(run.error ?? '', /the Ray cluster's head at http:\/\/127\.0\.0\.1:\d+ stopped answering for 5 s/);
  assert.match(run.error ?? '', /resume the run once the cluster is back/);
});
