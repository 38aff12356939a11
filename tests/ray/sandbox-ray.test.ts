// @no-database
// Sandbox nodes as Ray actors (workers/handlers/ray-sandbox.ts over workers/cluster/ray_services.py), on a real
// 2-node cluster (npm test -- ray): one `sandbox serve` per node, found by the client without a URL list; a node
// whose server is killed under load is restarted by Ray and rejoins under its new address, and every call is
// answered once with its own output meanwhile; closing leaves no actor.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClusterService } from '../../contracts/cluster.ts';
import { type RaySandbox, startRaySandbox } from '../../workers/handlers/ray-sandbox.ts';
import { waitFor } from '../helpers/proc.ts';
import { liveActors, type RayTestCluster, raySkip, startRayCluster } from '../helpers/ray-cluster.ts';

const skip = raySkip;
let cluster: RayTestCluster;
const saved: Record<string, string | undefined> = {};

before(async () => {
  if (skip) return;
  cluster = await startRayCluster([{ cpus: 1 }, { cpus: 1 }]);
  for (const [k, v] of Object.entries(cluster.env)) {
    saved[k] = process.env[k];
    process.env[k] = v; // what the orchestrator inside a Ray job has
  }
});
after(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await cluster?.stop();
});

const calls = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => ({
    code: `import time\ntime.sleep(0.05)\nprint(${from + i} * 3)`,
    // A limit the test never means to reach (a call takes 50 ms): generous, so a busy machine cannot time one out.
    timeoutS: 60,
  }));

test('a sandbox node per node; one killed under load comes back and no call is lost or doubled', { skip }, async () => {
  const seen: ClusterService[][] = [];
  let sandbox: RaySandbox | null = null;
  try {
    sandbox = await startRaySandbox('sandbox-ray-test', (s) => seen.push(s));
    const sb = sandbox;
    await waitFor('both sandbox nodes', () => sb.services.services.length === 2, { timeoutMs: 120_000 });
    const first = sb.services.services;
    assert.notEqual(first[0]!.node, first[1]!.node);
    const warm = await sb.runBatch(calls(20, 0));
    assert.deepEqual(
      warm.map((r) => r.stdout),
      Array.from({ length: 20 }, (_, i) => `${i * 3}\n`),
    );
    // Kill one node's server while 80 calls are in flight, some of them on it (seen, not assumed after a sleep).
    const victim = first[0]!;
    const load = Promise.all(calls(80, 100).map((c) => sb.run(c)));
    await waitFor(
      'calls in flight on the node to be killed',
      () => sb.client.status().nodes.some((n) => n.url === victim.url && n.inFlight > 0),
      { timeoutMs: 60_000, intervalMs: 10, detail: () => JSON.stringify(sb.client.status()) },
    );
    process.kill(victim.child, 'SIGKILL');
    const results = await load;
    results.forEach((r, i) => {
      assert.equal(r.status, 'ok', `call ${i}: ${JSON.stringify(r).slice(0, 300)}`);
      assert.equal(r.stdout, `${(100 + i) * 3}\n`, `call ${i} answered with its own output`);
    });
    // Ray restarts the actor on its node (a new process, its server on a port of its own); the client learns it.
    const back = await waitFor(
      'the killed node to come back',
      () => {
        const s = sb.services.services.find((x) => x.index === victim.index);
        return s && s.restarts >= 1 && s.pid !== victim.pid && sb.services.services.length === 2 ? s : null;
      },
      { timeoutMs: 120_000, intervalMs: 500, detail: () => sb.services.log },
    );
    assert.equal(back.node, victim.node, 'restarted on the same node');
    assert.ok(
      seen.some((s) => s.some((x) => x.restarts >= 1)),
      'the change was announced',
    );
    assert.ok(sb.client.status().nodes.some((n) => n.url === back.url));
    const after = await sb.runBatch(calls(20, 500));
    assert.ok(after.every((r, i) => r.status === 'ok' && r.stdout === `${(500 + i) * 3}\n`));
  } finally {
    await sandbox?.close();
  }
  await waitFor('no actor of the run', () => liveActors(cluster, 'toolsmith-sandbox-ray-test') === 0, {
    timeoutMs: 30_000,
    intervalMs: 1000,
  });
});
