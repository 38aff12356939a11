// Groups that carry a signal (docs/method.md §5 "Dynamic sampling and the pass-rate curriculum") on real
// parts: a worker process, the PyTorch trainer, the embedded ONNX engine, the sandbox pool, the database. A response
// budget of one token makes every reward 0 (no `<answer>` fits), so every group has all-equal rewards: dynamic
// sampling must draw more rounds and stop at its cap, and the curriculum must set aside the problems never solved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshRunDatabase } from '../helpers/fresh-run-database.ts';
import { metricSeries, waitRunEnded } from '../helpers/runs.ts';
import { outputs, spawnWorker } from '../helpers/proc.ts';
import type { Database } from '../../server/db/client.ts';
import { MICRO_INPUT } from '../../server/recipes/defaults.ts';
import { launchTraining } from '../../server/lifecycle.ts';
import { runReport } from '../../server/store/run-report.ts';

let db: Database;
let url: string;
freshRunDatabase((fresh) => {
  ({ db, url } = fresh);
});

const FIRST_RL_STEP = 31; // after the micro recipe's 30 SFT steps
const STEPS = [FIRST_RL_STEP, FIRST_RL_STEP + 1, FIRST_RL_STEP + 2];
const CAP = 3;

test('all-equal groups: dynamic sampling draws more rounds up to its cap; the curriculum skips the never-solved', async () => {
  const { runId } = await launchTraining(db, {
    spec: {
      ...MICRO_INPUT,
      name: 'micro-sampling',
      stages: [
        MICRO_INPUT.stages[0],
        {
          ...MICRO_INPUT.stages[1],
          steps: STEPS.length,
          // 16 problems; 2 prompts × 4 rollouts a round, one token each: every group is all wrong.
          maxResponseTokens: 1,
          dynamicSampling: { enabled: true, maxGenBatches: CAP },
          curriculum: { enabled: true, minSamples: 4, windowSteps: 20 },
        },
      ],
    },
  });
  const w = spawnWorker(url, 'train-sampling', { leaseSeconds: 5, heartbeatSeconds: 1 });
  const run = await waitRunEnded(db, runId, { timeoutMs: 240_000, detail: () => outputs([w]) });
  assert.equal(run.status, 'succeeded', run.error ?? '');

  const values = async (key: string) => (await metricSeries(db, runId, key)).map(([s, v]) => [s, v]);
  const each = (v: number) => STEPS.map((s) => [s, v]);
  // Dynamic sampling: no group has mixed rewards, so every step draws a round more until the cap, and says so.
  assert.deepEqual(await values('sampling/gen_batches'), each(CAP), 'the cap holds');
  assert.deepEqual(await values('sampling/groups_drawn'), each(2 * CAP), 'drew more than its 2 prompts');
  assert.deepEqual(await values('sampling/groups_mixed'), each(0));
  assert.deepEqual(await values('sampling/short'), each(1));
  assert.deepEqual(await values('roc/groups_kept'), each(0));

  const rows = await db.prisma.trajectory.findMany({
    where: { runId, split: 'train' },
    select: { step: true, groupId: true, problemId: true, reward: true, selected: true, selectReason: true },
  });
  const problemsAt = (step: number) => new Set(rows.filter((r) => r.step === step).map((r) => r.problemId));
  for (const step of STEPS) {
    const at = rows.filter((r) => r.step === step);
    assert.equal(at.length, 2 * CAP * 4, `step ${step}: every round's rollouts are stored`);
    assert.equal(new Set(at.map((r) => r.groupId)).size, 2 * CAP);
    assert.equal(problemsAt(step).size, 2 * CAP, `step ${step}: no problem drawn twice in a step`);
    assert.ok(at.every((r) => r.reward === 0 && !r.selected && /equal rewards/.test(r.selectReason ?? '')));
  }

  // The curriculum: step 31 knows nothing yet; each problem drawn there failed 4/4 (never solved), so step 32 skips
  // those 6 and draws 6 others; step 33 draws the 4 never tried, then 2 of the 12 set aside (nothing else is left).
  assert.deepEqual(await values('curriculum/skipped'), [
    [STEPS[0], 0],
    [STEPS[1], 6],
    [STEPS[2], 10],
  ]);
  const [a, b, c] = STEPS.map(problemsAt);
  assert.ok(
    [...b!].every((p) => !a!.has(p)),
    'step 32 skips the problems step 31 never solved',
  );
  const untried = [...c!].filter((p) => !a!.has(p) && !b!.has(p));
  assert.equal(untried.length, 4, 'step 33 draws every untried problem first');

  // `train --report`: the RL stage's groups, summed.
  const report = await runReport(db, runId);
  const { rolloutTokensPerS, meanBatch, prefillFraction, ...groups } = report.stages[1]!.groups!;
  assert.deepEqual(groups, { steps: 3, drawn: 18, mixed: 0, kept: 0, skipped: 16, short: 3 });
  // The engine's rate during the stage's rollouts: 18 groups × 4 rollouts of one token each, over their rollout time.
  const generated = await db.prisma.trajectory.aggregate({
    where: { runId, split: 'train' },
    _sum: { responseTokens: true },
  });
  assert.equal(generated._sum.responseTokens, 18 * 4);
  const rolloutS = (await values('time/rollout')).reduce((a, [, v]) => a + v!, 0);
  assert.ok(rolloutS > 0 && Math.abs(rolloutTokensPerS! - (18 * 4) / rolloutS) < 1e-9, `${rolloutTokensPerS}`);
  // One token per rollout is sampled by the prefill that reads its prompt: no batched decode step ran.
  assert.equal(meanBatch, null);
  assert.ok(prefillFraction! > 0.99, `the engine's time went to prefills: ${prefillFraction}`);
  assert.equal(report.stages[0]!.groups, undefined);
});
