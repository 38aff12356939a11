/**
 * bench:cluster — the same micro recipe run by a local worker and launched on a local Ray cluster (a head and a
 * second node on this machine, token authentication on, inside a network namespace with loopback alone), side by
 * side in one run, alternating (local, Ray, local, Ray …) so the machine's drift hits both alike:
 *   - per run: wall time from launch to success, and start-up (launch → the first SFT step stored): on Ray that adds
 *     the Jobs API submission, the orchestrator's start in the Ray job, placement and the rank actors' start-up, and
 *     the sandbox nodes as actors;
 *   - per step: the mean RL step time (the orchestrator's own `time/step`) and the SFT steps/s after start-up.
 * Target: ≤ 10% per step after start-up.
 *
 *   npm run bench:cluster [-- --rounds N] [--rl-steps N]
 *
 * Needs root (unshare -n); re-executes itself inside a fresh network namespace when it is not in one.
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { RUN_PLACEMENTS, type RunPlacement } from '../contracts/jobs.ts';
import type { Database } from '../server/db/client.ts';
import { launchTraining } from '../server/lifecycle.ts';
import { MICRO_INPUT } from '../server/recipes/defaults.ts';
import { freshDatabase } from '../tests/helpers/db.ts';
import { killAll, outputs, spawnWorker, waitFor } from '../tests/helpers/proc.ts';
import { raySkip, startRayCluster } from '../tests/helpers/ray-cluster.ts';
import { inLoopbackNamespace } from '../scripts/netns.mjs';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, 'rl-steps': { type: 'string', default: '16' } },
});
const ROUNDS = Number(values.rounds);
const RL = Number(values['rl-steps']);

if (!Object.keys(os.networkInterfaces()).every((n) => n === 'lo')) {
  // Into a network namespace of our own: the cluster registers as 127.0.0.1 and nothing of it is reachable.
  const [cmd, args] = inLoopbackNamespace(process.execPath, [
    '--import',
    'tsx',
    import.meta.filename,
    ...process.argv.slice(2),
  ]);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
if (raySkip) {
  console.error(`bench:cluster: ${raySkip}`);
  process.exit(1);
}

interface Measure {
  where: RunPlacement;
  wallS: number;
  startupS: number;
  sftStepsPerS: number;
  rlStepS: number;
  rolloutS: number;
  trainS: number;
  syncS: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function measure(db: Database, url: string, where: RunPlacement, env: Record<string, string>, i: number) {
  const spec = {
    ...MICRO_INPUT,
    name: `bench-${where}-${i}`,
    stages: [MICRO_INPUT.stages[0], { ...MICRO_INPUT.stages[1], steps: RL }],
  };
  const t0 = Date.now();
  const { runId } = await launchTraining(db, { spec }, { cluster: where });
  const w = spawnWorker(url, `bench-${where}-${i}`, {
    leaseSeconds: 10,
    heartbeatSeconds: 1,
    env: { TOOLSMITH_TRAINER_THREADS: '1', ...env },
  });
  const run = await waitFor(
    `${where} run ${runId}`,
    async () => {
      const r = await db.prisma.run.findUniqueOrThrow({ where: { id: runId } });
      return ['succeeded', 'failed', 'cancelled'].includes(r.status) ? r : null;
    },
    { timeoutMs: 900_000, intervalMs: 200, detail: () => outputs([w]) },
  );
  await killAll();
  if (run.status !== 'succeeded') throw new Error(`${where} run ${runId} ${run.status}: ${run.error}`);
  const points = async (key: string) =>
    db.prisma.metricPoint.findMany({ where: { runId, key }, orderBy: { step: 'asc' } });
  const sft = await points('sft/loss');
  const rl = await points('time/step');
  const mean = async (key: string) => {
    const p = await points(key);
    return p.reduce((a, x) => a + x.value, 0) / Math.max(1, p.length);
  };
  const end = Math.max(...(await db.prisma.metricPoint.findMany({ where: { runId } })).map((p) => p.time));
  return {
    where,
    wallS: (end - t0) / 1000,
    startupS: (sft[0]!.time - t0) / 1000,
    sftStepsPerS: (sft.length - 1) / ((sft.at(-1)!.time - sft[0]!.time) / 1000),
    rlStepS: rl.reduce((a, p) => a + p.value, 0) / rl.length,
    rolloutS: await mean('time/rollout'),
    trainS: await mean('time/train'),
    syncS: await mean('time/sync'),
  } satisfies Measure;
}

const cluster = await startRayCluster([{ cpus: 2 }, { cpus: 1 }]);
const fresh = await freshDatabase();
process.env.TOOLSMITH_RAY_ADDRESS = cluster.dashboardUrl;
const rayEnv = { TOOLSMITH_RAY_ADDRESS: cluster.dashboardUrl, TOOLSMITH_RAY_TOKEN_FILE: cluster.tokenFile };
const all: Measure[] = [];
try {
  for (let i = 0; i < ROUNDS; i++) {
    for (const where of RUN_PLACEMENTS) {
      const m = await measure(fresh.db, fresh.url, where, where === 'ray' ? rayEnv : {}, i);
      all.push(m);
      console.log(
        `round ${i + 1} ${where.padEnd(5)} wall ${m.wallS.toFixed(1)} s, start-up ${m.startupS.toFixed(1)} s, SFT ${m.sftStepsPerS.toFixed(2)} steps/s, RL step ${m.rlStepS.toFixed(2)} s`,
      );
    }
  }
} finally {
  await fresh.close();
  await cluster.stop();
}
const of = (where: RunPlacement, k: keyof Omit<Measure, 'where'>) =>
  median(all.filter((m) => m.where === where).map((m) => m[k]));
const rows: [string, keyof Omit<Measure, 'where'>, string][] = [
  ['wall, launch → done (s)', 'wallS', 's'],
  ['start-up, launch → first SFT step (s)', 'startupS', 's'],
  ['SFT steps/s after start-up', 'sftStepsPerS', '/s'],
  ['RL step, mean time/step (s)', 'rlStepS', 's'],
  ['… of which rollouts (s)', 'rolloutS', 's'],
  ['… training (s)', 'trainS', 's'],
  ['… weight sync (s)', 'syncS', 's'],
];
console.log(`\nmicro recipe (SFT 30 steps, RL ${RL} steps), medians of ${ROUNDS} rounds, local vs Ray, one run:`);
console.log('| measure | local | Ray | Ray / local |\n|---|--:|--:|--:|');
for (const [label, k] of rows) {
  const l = of('local', k);
  const r = of('ray', k);
  console.log(`| ${label} | ${l.toFixed(2)} | ${r.toFixed(2)} | ${(r / l).toFixed(2)}× |`);
}
const perRun = of('ray', 'startupS') - of('local', 'startupS');
const perStep = of('ray', 'rlStepS') / of('local', 'rlStepS') - 1;
const sftStep = of('local', 'sftStepsPerS') / of('ray', 'sftStepsPerS') - 1;
console.log(
  `\nplacement and start-up on Ray: +${perRun.toFixed(1)} s per run; per step after start-up: RL ${(100 * perStep).toFixed(1)}%, SFT ${(100 * sftStep).toFixed(1)}% (target ≤ 10%)`,
);
