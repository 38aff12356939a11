// @no-database
// The trainer's ranks placed by a real Ray cluster (workers/trainer/ray_group.py behind TrainerClient's `ray`
// transport): a head and a second node on this machine, token authentication on, inside a network namespace with
// loopback alone (npm test -- ray). A 2-rank group spread over the two nodes gives one local process's losses,
// log-probs and weights; a rank whose actor is killed takes the group down with the reason, leaves no actor behind,
// and a new group resumes from the checkpoint with the update an uninterrupted run makes; a group the cluster cannot
// place is refused naming what it needs and what the cluster has.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type RayPlacement, TrainerClient, TrainerError } from '../../workers/trainer/client.ts';
import { waitFor } from '../helpers/proc.ts';
import { liveActors, type RayTestCluster, raySkip, startRayCluster } from '../helpers/ray-cluster.ts';
import { assertSameSftAndLogprobs, maxWeightDiff, near, PARITY_INIT, PARITY_SEQS } from '../helpers/trainer-parity.ts';

const skip = raySkip;
const init = PARITY_INIT;
const SEQS = PARITY_SEQS;
const ACROSS: RayPlacement = { nodes: 2, ranks: 1, cpus: 1, gpus: 0, timeoutS: 60, namespace: 'trainer-ray-test' };

let cluster: RayTestCluster;
let tmp = '';
/** Ray removes a group's actors after its driver has gone (its GCS notices the owner's death): that comes, but when
 *  depends on how busy the machine is, so it is polled for; the bound only fails a group whose actors stay. */
const noActorLeft = (what: string) =>
  waitFor(what, () => liveActors(cluster, ACROSS.namespace!) === 0, { timeoutMs: 60_000, intervalMs: 1000 });
const env = () => ({ ...process.env, ...cluster.env, TOOLSMITH_TRAINER_THREADS: '1', TOOLSMITH_TRAINER_DEVICE: 'cpu' });

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trainer-ray-'));
  cluster = await startRayCluster([{ cpus: 1 }, { cpus: 1 }]);
});
after(async () => {
  await cluster?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test("2 ranks placed on two Ray nodes give 1 local rank's losses, log-probs and weights", { skip }, async () => {
  const [one, two] = await Promise.all([
    TrainerClient.start({ env: env() }),
    TrainerClient.start({ env: env(), ray: ACROSS, startTimeoutMs: 180_000 }),
  ]);
  try {
    assert.equal(two.ready!.world_size, 2);
    const placement = two.placement!;
    assert.equal(placement.length, 2);
    assert.notEqual(placement[0]!.node, placement[1]!.node, 'one rank on each node');
    assert.deepEqual(placement[0]!.resources, { CPU: 1 });
    const [i1, i2] = await Promise.all([one.init(init), two.init(init)]);
    assert.equal(i2.world_size, 2);
    assert.equal(i1.params, i2.params);
    await assertSameSftAndLogprobs(one, two);
    await Promise.all([one.exportHf(path.join(tmp, 'w1')), two.exportHf(path.join(tmp, 'w2'))]);
    const d = maxWeightDiff(path.join(tmp, 'w1'), path.join(tmp, 'w2'));
    assert.ok(d < 2e-4, `weights differ by ${d} after an update`);
  } finally {
    await Promise.all([one.close(), two.close()]);
  }
  await noActorLeft('closing the group to leave no actor');
});

test('a killed rank takes the group down with the reason; a new group resumes from the checkpoint', {
  skip,
}, async () => {
  const ref = await TrainerClient.start({ env: env() });
  const group = await TrainerClient.start({ env: env(), ray: ACROSS, startTimeoutMs: 180_000 });
  const ck = path.join(tmp, 'ck');
  const next = SEQS.slice(2);
  let expected: number;
  try {
    await Promise.all([ref.init(init), group.init(init)]);
    await Promise.all([ref.sftStep({ sequences: SEQS }), group.sftStep({ sequences: SEQS, micro_batch: 2 })]);
    await group.save(ck);
    expected = (await ref.sftStep({ sequences: next })).loss; // the uninterrupted run's next update
    await ref.exportHf(path.join(tmp, 'ref'));
    // Rank 1's actor dies as it would with its node: SIGKILL.
    process.kill(group.placement![1]!.pid, 'SIGKILL');
    await assert.rejects(group.sftStep({ sequences: next, micro_batch: 2 }), (e: TrainerError) => {
      assert.equal(e.type, 'exited');
      assert.match(e.message, /rank 1('s actor| of the trainer)/);
      return true;
    });
    await group.exited;
  } finally {
    await ref.close();
    await group.close();
  }
  await noActorLeft('no actor of the dead group to be left');
  const again = await TrainerClient.start({ env: env(), ray: ACROSS, startTimeoutMs: 180_000 });
  try {
    const info = await again.load({ path: ck });
    assert.equal(info.step, 1);
    const r = await again.sftStep({ sequences: next, micro_batch: 2 });
    near(r.loss, expected!, 1e-5, 'the resumed update');
    await again.exportHf(path.join(tmp, 'resumed'));
    const d = maxWeightDiff(path.join(tmp, 'ref'), path.join(tmp, 'resumed'));
    assert.ok(d < 2e-4, `weights differ by ${d}: the optimiser state did not come back`);
  } finally {
    await again.close();
  }
});

test('a group the cluster cannot place is refused naming what it needs and what the cluster has', {
  skip,
}, async () => {
  const cases: [RayPlacement, RegExp][] = [
    [{ ...ACROSS, nodes: 1, ranks: 1, gpus: 8, timeoutS: 3 }, /needs 1 × \{CPU: 1, GPU: 8\}/],
    [{ ...ACROSS, nodes: 3, timeoutS: 3 }, /needs 3 × \{CPU: 1\} \(3 nodes × 1 rank on distinct nodes\)/],
  ];
  for (const [placement, needs] of cases) {
    await assert.rejects(TrainerClient.start({ env: env(), ray: placement, startTimeoutMs: 120_000 }), (e) => {
      assert.ok(e instanceof TrainerError);
      assert.equal(e.type, 'start');
      assert.match(e.stderr ?? '', needs);
      assert.match(e.stderr ?? '', /the cluster has 2 nodes: 127\.0\.0\.1 \{CPU: 1\}, 127\.0\.0\.1 \{CPU: 1\}/);
      return true;
    });
  }
  await noActorLeft('no actor of the refused groups to be left');
});
