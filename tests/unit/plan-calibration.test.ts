// The planner calibrated on a recorded run predicts another run's RL step time on this machine.
// The two runs are bench:async's synchronous arms (seeds 0 and 1), recorded as fixtures: no wall clock is read here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { CLUSTER_PRESETS, DEFAULT_CONSTANTS, embeddedParams, parseCluster, planRun } from '../../contracts/plan.ts';
import { calibrate, measuredSteps } from '../../contracts/plan-calibration.ts';
import { parseRecipe } from '../../contracts/recipe.ts';

interface Recorded {
  recipe: unknown;
  steps: Record<string, Record<string, number>>;
}

const load = (name: string) => {
  const r = JSON.parse(
    fs.readFileSync(path.join(import.meta.dirname, '../fixtures/plan', `embedded-arith-${name}.json`), 'utf8'),
  ) as Recorded;
  // The fixture's model is the SFT'd embedded model registered under a name; its size is the default recipe's.
  const recipe = parseRecipe(r.recipe);
  const series: Record<string, { step: number; value: number }[]> = {};
  for (const [step, metrics] of Object.entries(r.steps))
    for (const [key, value] of Object.entries(metrics)) (series[key] ??= []).push({ step: Number(step), value });
  for (const s of Object.values(series)) s.sort((a, b) => a.step - b.step);
  return { recipe, steps: measuredSteps(recipe, series) };
};

const PARAMS = embeddedParams({ n_layer: 4, n_embd: 64, n_head: 4 });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

test("calibrated on one recorded run, the plan predicts the other run's RL step time within 20%", () => {
  const a = load('sync-s0');
  const b = load('sync-s1');
  assert.equal(a.steps.length, 40);
  assert.equal(b.steps.length, 40);
  const cluster = parseCluster(CLUSTER_PRESETS.local);
  const constants = calibrate(a.steps, 'bench:async sync-s0');
  const predicted = planRun(b.recipe, PARAMS, cluster, constants).stepSeconds;
  // The run's mean RL step (what a run of it costs), from its recorded step times.
  const times = b.steps.map((s) => s.metrics['time/step']!);
  const measured = times.reduce((x, y) => x + y, 0) / times.length;
  const error = Math.abs(predicted - measured) / measured;
  assert.ok(
    error <= 0.2,
    `predicted ${predicted.toFixed(2)} s against ${measured.toFixed(2)} s measured (${(100 * error).toFixed(1)}%)`,
  );
  // And it predicts its own run too; the uncalibrated defaults are further off.
  const own = planRun(a.recipe, PARAMS, cluster, constants).stepSeconds;
  const ownMeasured = a.steps.reduce((x, s) => x + s.metrics['time/step']!, 0) / a.steps.length;
  assert.ok(Math.abs(own - ownMeasured) / ownMeasured <= 0.2, `${own} vs ${ownMeasured}`);
  const uncalibrated = planRun(b.recipe, PARAMS, cluster, DEFAULT_CONSTANTS).stepSeconds;
  assert.ok(Math.abs(uncalibrated - measured) / measured > error, 'calibration helps');
  assert.ok(median(times) > 0);
});
