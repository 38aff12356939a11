/**
 * bench:async — the default recipe's RL stages, synchronous against one-step off-policy (async, k = 1), from the same
 * SFT checkpoint, over several seeds, side by side in one run (docs/method.md §5 "Asynchronous steps"). Per arm:
 * RL steps per hour, the engine's and the trainer's busy share of the RL wall clock, and held-out pass@1 after the
 * last stage with a 95% interval; the paired (by seed) difference in pass@1 and the speed ratio. It also prints the
 * bound an overlap can reach on this workload, 1 + (train + sync) / rollout, from the synchronous runs' own step-time
 * breakdown. Reports what it measures, whichever way it goes.
 *
 *   npx tsx bench/async.ts [--seeds N] [--quick]      (--quick: stage 1 only, 6 steps, 64 held-out problems)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { parseRecipe, type RecipeInput } from '../contracts/recipe.ts';
import { createRun } from '../server/store/runs.ts';
import { logMetrics } from '../server/store/metrics.ts';
import { EMBEDDED_ARITH_INPUT } from '../server/recipes/defaults.ts';
import { Verifier } from '../workers/reward/verifier.ts';
import { SandboxPool } from '../workers/sandbox/pool.ts';
import { TrainerClient } from '../workers/trainer/client.ts';
import { runTraining } from '../workers/train/orchestrator.ts';
import { embeddedPolicy } from '../workers/engines/create.ts';
import { ensureEmbeddedSftModel, sftCheckpointDir } from '../tests/helpers/embedded-sft.ts';
import { benchFlags } from './flags.ts';
import { tInterval } from './t-interval.ts';

const flags = benchFlags('bench:async', 'npx tsx bench/async.ts [--seeds N] [--quick]', {
  seeds: 'number',
  quick: 'boolean',
});
const QUICK = Boolean(flags.quick);
const SEEDS = (flags.seeds as number | undefined) ?? 3;

await ensureEmbeddedSftModel({ log: (m) => console.log(`[sft] ${m}`) });
const sftModel = sftCheckpointDir();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-async-'));
const url = `file:${path.join(tmp, 'bench.db')}`;
await migrate(url);
const db = await openDatabase(url);
const sandbox = await SandboxPool.start({ log: () => {} });
const verifier = new Verifier();

type RlInput = Extract<(typeof EMBEDDED_ARITH_INPUT.stages)[number], { type: 'rl' }>;
const rlStages = EMBEDDED_ARITH_INPUT.stages.filter((s): s is RlInput => s.type === 'rl');
const stages = QUICK ? [{ ...rlStages[0]!, steps: 6 }] : rlStages;
const totalSteps = stages.reduce((a, s) => a + (s.steps ?? 0), 0);

interface Measured {
  stepsPerHour: number;
  engineBusy: number;
  trainerBusy: number;
  passAt1: number;
  bound: number;
  staleness: number;
}

async function arm(async: boolean, seed: number): Promise<Measured> {
  const name = `${async ? 'async' : 'sync'}-s${seed}`;
  const { tokenizer: _char, ...base } = EMBEDDED_ARITH_INPUT; // the SFT'd model brings its own
  const input: RecipeInput = {
    ...base,
    name: `bench-${name}`,
    seed: 7 + seed,
    model: { kind: 'model', name: 'sft-fixture' },
    stages: stages.map((s) => ({ ...s, async: { enabled: async, maxStaleness: 1 } })),
    eval: {
      ...EMBEDDED_ARITH_INPUT.eval,
      ...(QUICK ? { datasets: [{ ...EMBEDDED_ARITH_INPUT.eval.datasets[0], n: 64 }] } : {}),
    },
  };
  const recipe = parseRecipe(input);
  const run = await createRun(db, { name, kind: 'train', recipeSpec: recipe, seed: 7 + seed });
  const trainer = await TrainerClient.start();
  try {
    await runTraining(
      {
        db,
        runId: run.id,
        trainer,
        sandbox,
        verifier,
        policyEngine: embeddedPolicy(),
        runDir: path.join(tmp, run.id),
        modelDir: () => sftModel,
        log: async () => {},
        metrics: (s, v) => logMetrics(db, run.id, s, v),
        progress: async () => {},
      },
      recipe,
    );
  } finally {
    await trainer.close();
  }
  const sum = async (key: string) =>
    (await db.prisma.metricPoint.findMany({ where: { runId: run.id, key } })).reduce((a, p) => a + p.value, 0);
  const steps = await db.prisma.metricPoint.count({ where: { runId: run.id, key: 'time/step' } });
  const wall = await sum('time/step');
  const rollout = await sum('time/rollout');
  const train = await sum('time/train');
  const sync = await sum('time/sync');
  const engineComputeShare = (await sum('engine/busy_fraction')) / Math.max(1, steps);
  const evals = await db.prisma.evalResult.findMany({ where: { runId: run.id }, orderBy: { step: 'desc' } });
  const passAt1 = evals[0]?.pass1 ?? Number.NaN;
  // The run's per-step metrics, kept: the planner's calibration is tested on recorded runs (tests/fixtures/plan/).
  const points = await db.prisma.metricPoint.findMany({ where: { runId: run.id }, orderBy: { step: 'asc' } });
  const bySteps: Record<number, Record<string, number>> = {};
  for (const p of points) (bySteps[p.step] ??= {})[p.key] = p.value;
  fs.mkdirSync(path.join(import.meta.dirname, 'out'), { recursive: true });
  fs.writeFileSync(
    path.join(import.meta.dirname, 'out', `async-${name}.json`),
    `${JSON.stringify({ name, recipe: input, steps: bySteps }, null, 1)}\n`,
  );
  const m: Measured = {
    stepsPerHour: (3600 * steps) / wall,
    engineBusy: (rollout * engineComputeShare) / wall,
    trainerBusy: train / wall,
    passAt1,
    bound: 1 + (train + sync) / rollout,
    staleness: (await sum('async/staleness_max')) / Math.max(1, steps),
  };
  console.log(
    `  [${name}] ${steps} RL steps in ${wall.toFixed(0)} s: ${m.stepsPerHour.toFixed(0)} steps/h, engine busy ${pct(m.engineBusy)}, trainer busy ${pct(m.trainerBusy)}, mean staleness ${m.staleness.toFixed(2)}, held-out pass@1 ${pct(m.passAt1)}`,
  );
  return m;
}

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '-');
const band = (t: { mean: number; lo: number; hi: number }, f: (x: number) => string) =>
  `${f(t.mean)} [${f(t.lo)}, ${f(t.hi)}]`;

console.log(
  `bench:async — sync vs async (k = 1) × ${SEEDS} seeds, ${totalSteps} RL steps each (${stages.map((s) => s.name).join(', ')}), from the same SFT checkpoint; ${os.availableParallelism()} cores`,
);
const sync: Measured[] = [];
const asyncRuns: Measured[] = [];
for (let seed = 0; seed < SEEDS; seed++) {
  // Alternating, so that a slow hour of the machine falls on both arms.
  sync.push(await arm(false, seed));
  asyncRuns.push(await arm(true, seed));
}
const col = (xs: Measured[], k: keyof Measured) => xs.map((x) => x[k]);
const speed = tInterval(asyncRuns.map((a, i) => a.stepsPerHour / sync[i]!.stepsPerHour));
const bound = tInterval(col(sync, 'bound'));
console.log('\n| | synchronous | async (k = 1) |');
console.log('|---|--:|--:|');
console.log(
  `| RL steps per hour | ${band(tInterval(col(sync, 'stepsPerHour')), (x) => x.toFixed(0))} | ${band(tInterval(col(asyncRuns, 'stepsPerHour')), (x) => x.toFixed(0))} |`,
);
console.log(
  `| engine busy (share of RL wall clock inside the model) | ${pct(tInterval(col(sync, 'engineBusy')).mean)} | ${pct(tInterval(col(asyncRuns, 'engineBusy')).mean)} |`,
);
console.log(
  `| trainer busy (share of RL wall clock training) | ${pct(tInterval(col(sync, 'trainerBusy')).mean)} | ${pct(tInterval(col(asyncRuns, 'trainerBusy')).mean)} |`,
);
console.log(
  `| held-out pass@1 after the last stage | ${band(tInterval(col(sync, 'passAt1')), pct)} | ${band(tInterval(col(asyncRuns, 'passAt1')), pct)} |`,
);
const diff = tInterval(asyncRuns.map((a, i) => a.passAt1 - sync[i]!.passAt1));
const pts = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)} pts`;
console.log(`\nspeed, async ÷ sync (paired by seed): ${band(speed, (x) => `${x.toFixed(2)}×`)}`);
console.log(
  `bound an overlap can reach, 1 + (train + sync) / rollout from the synchronous runs: ${band(bound, (x) => `${x.toFixed(2)}×`)}`,
);
console.log(
  `share of the bound's gain reached: ${pct((speed.mean - 1) / Math.max(1e-9, bound.mean - 1))} (target ≥ 80%)`,
);
console.log(`pass@1, async − sync (paired by seed): ${band(diff, pts)} (target: interval above −2 pts)`);
await verifier.close();
await sandbox.close();
await db.close();
