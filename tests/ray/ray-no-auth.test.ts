// A Ray cluster started without token authentication (npm test -- ray, loopback alone): its Jobs API takes jobs
// from anyone who reaches it, so a worker refuses to send a run there and fails it at once, naming why and the
// setting that would accept it.
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import type { Database } from '../../server/db/client.ts';
import { launchTraining } from '../../server/lifecycle.ts';
import { MICRO_INPUT } from '../../server/recipes/defaults.ts';
import { RayJobsClient } from '../../workers/cluster/ray-jobs.ts';
import { killAll, outputs, spawnWorker, waitFor } from '../helpers/proc.ts';
import { type RayTestCluster, raySkip, type RayRunFixture, startRayRunFixture } from '../helpers/ray-cluster.ts';

const skip = raySkip;
let cluster: RayTestCluster;
let fresh: RayRunFixture['fresh'];
let db: Database;
let fx: RayRunFixture | undefined;

before(async () => {
  if (skip) return;
  fx = await startRayRunFixture([{ cpus: 1 }], { auth: false });
  ({ cluster, fresh, db } = fx);
});
afterEach(async () => {
  await killAll();
});
after(async () => {
  await fx?.stop();
});

test('a cluster that takes jobs without a token is refused unless the operator accepts it', { skip }, async () => {
  const open = new RayJobsClient(cluster.dashboardUrl, undefined);
  assert.ok(Array.isArray(await open.list()), 'the cluster really answers without a token');
  await assert.rejects(open.checkAuth(false), /accepts jobs without a token: anyone who reaches it runs code there/);
  await open.checkAuth(true); // TOOLSMITH_RAY_ALLOW_NO_AUTH=1
  const { runId } = await launchTraining(db, { spec: { ...MICRO_INPUT, name: 'ray-open' } }, { cluster: 'ray' });
  const w = spawnWorker(fresh.url, 'ray-open', { env: { TOOLSMITH_RAY_ADDRESS: cluster.dashboardUrl } });
  const run = await waitFor(
    'the run to fail',
    async () => {
      const r = await db.prisma.run.findUniqueOrThrow({ where: { id: runId } });
      return r.status === 'failed' ? r : null;
    },
    { timeoutMs: 60_000, intervalMs: 300, detail: () => outputs([w]) },
  );
  assert.match(run.error ?? '', /accepts jobs without a token.*TOOLSMITH_RAY_ALLOW_NO_AUTH=1/);
  assert.deepEqual(
    (await open.list()).filter((j) => j.metadata?.toolsmith_run),
    [],
    'nothing was submitted',
  );
});
