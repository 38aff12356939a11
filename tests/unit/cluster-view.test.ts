// The run page's cluster view (contracts/cluster.ts foldCluster) and the trainer's placement on Ray
// (workers/trainer/ray_placement.py: bundles, strategy, rank order, the refusal), as pure functions.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { type ClusterEventData, foldCluster } from '../../contracts/cluster.ts';

const job = (state: string): ClusterEventData => ({ kind: 'ray', cluster: 'http://head:8265', rayJobId: 'j1', state });

test('foldCluster keeps the latest job state, placement and each kind of service', () => {
  let v = foldCluster(null, job('PENDING'));
  v = foldCluster(v, job('RUNNING'));
  const rank = (r: number, node: string) => ({ rank: r, node, address: '10.0.0.1', pid: 1, resources: { CPU: 1 } });
  v = foldCluster(v, { ...job('RUNNING'), ranks: [rank(0, 'a'), rank(1, 'b')] });
  const svc = (kind: 'sandbox' | 'rollout', url: string, restarts = 0) => ({
    kind,
    url,
    node: 'a',
    address: 'x',
    restarts,
  });
  v = foldCluster(v, { ...job('RUNNING'), services: [svc('sandbox', 'http://a:1'), svc('sandbox', 'http://b:1')] });
  v = foldCluster(v, { ...job('RUNNING'), services: [svc('rollout', 'http://a:2')] });
  v = foldCluster(v, { ...job('RUNNING'), services: [svc('sandbox', 'http://a:3', 1), svc('sandbox', 'http://b:1')] });
  v = foldCluster(v, { ...job('RUNNING'), ranks: [rank(0, 'c'), rank(1, 'd')] }); // placed again after a resume
  v = foldCluster(v, job('SUCCEEDED'));
  assert.equal(v.state, 'SUCCEEDED');
  assert.deepEqual(
    v.ranks.map((r) => r.node),
    ['c', 'd'],
  );
  assert.deepEqual(
    v.sandboxes.map((s) => [s.url, s.restarts]),
    [
      ['http://a:3', 1],
      ['http://b:1', 0],
    ],
  );
  assert.deepEqual(
    v.rollout.map((s) => s.url),
    ['http://a:2'],
  );
});

const placement = (code: string) =>
  JSON.parse(
    execFileSync('python3', ['-c', `import json, ray_placement as p\n${code}`], {
      cwd: path.join(import.meta.dirname, '../../workers/trainer'),
      encoding: 'utf8',
    }),
  );

test('ray_placement: one bundle per rank, the strategy for the shape, ranks node by node, refusals that name it', () => {
  const r = placement(`print(json.dumps([
  p.bundles(2, 2, 4, 1), p.strategy(1, 8), p.strategy(8, 1), p.strategy(8, 8),
  p.assign(["n1", "n2", "n1", "n2"], 2, 2),
  p.shortfall(8, 8, 4, 1, [{"address": "10.0.0.1", "total": {"CPU": 64.0, "GPU": 8.0, "memory": 1e12, "node:10.0.0.1": 1.0}}], {"CPU": 60.0}, 60),
]))
try:
    p.assign(["n1", "n1", "n1", "n2"], 2, 2)
except ValueError as e:
    pass
`);
  assert.deepEqual(r[0], [
    { CPU: 4, GPU: 1 },
    { CPU: 4, GPU: 1 },
    { CPU: 4, GPU: 1 },
    { CPU: 4, GPU: 1 },
  ]);
  assert.deepEqual(r.slice(1, 4), ['STRICT_PACK', 'STRICT_SPREAD', 'PACK']);
  assert.deepEqual(
    r[4].map((x: { rank: number; bundle: number; node_rank: number; local_rank: number }) => [
      x.rank,
      x.bundle,
      x.node_rank,
      x.local_rank,
    ]),
    [
      [0, 0, 0, 0],
      [1, 2, 0, 1],
      [2, 1, 1, 0],
      [3, 3, 1, 1],
    ],
  );
  assert.equal(
    r[5],
    'trainer: the cluster could not place the ranks within 60 s: needs 64 × {CPU: 4, GPU: 1} (8 nodes × 8 ranks); the cluster has 1 node: 10.0.0.1 {CPU: 64, GPU: 8}; free now {CPU: 60}',
  );
  const bad = placement(`try:
    p.assign(["n1", "n1", "n1", "n2"], 2, 2)
    print(json.dumps(None))
except ValueError as e:
    print(json.dumps(str(e)))`);
  assert.equal(bad, 'the cluster placed the 4 ranks as [3, 1] per node; the recipe asks for 2 nodes × 2 ranks');
});
