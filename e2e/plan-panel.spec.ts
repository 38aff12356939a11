import { expect, type Locator, test } from '@playwright/test';
import { expectAccessibleNames, shot, signIn, watchErrors } from './helpers.ts';

/**
 * The designer's Plan panel in Chromium: the micro template planned as it is edited: a stage's step
 * time follows its fields, the bound phase is named, the SFT stage and the evaluations are planned, the cluster
 * preset changes the figures, and a named model asks for its parameter count, whose size then slows the CPU plan. Any console error fails the test.
 */
test('Plan panel: the recipe planned as it is edited, on a cluster preset', async ({ page }) => {
  const problems: string[] = [];
  watchErrors(page, problems);
  await signIn(page);
  await page.goto('/recipes/new?template=micro');
  const plan = page.getByRole('region', { name: 'Plan' });
  const rows = plan.getByRole('table', { name: 'Plan per stage' }).getByRole('row');
  await expect(rows).toHaveCount(2); // the header and the micro recipe's one RL stage
  await expect(plan.getByLabel('Plan totals')).toContainText(/RL steps in .* bound by (rollout|train|sync|overhead)/);
  // SFT and the evaluations are planned too: the micro recipe's 60 demonstrations × 2
  // epochs in batches of 4, and an evaluation after each of its 2 stages of 4 problems × k = 2.
  const phases = plan.getByRole('list', { name: 'Run phases' });
  await expect(phases).toContainText(/^run .*: SFT .*, RL .*, evaluation /);
  await expect(phases).toContainText('sft: 30 SFT steps, 120 demonstrations');
  await expect(phases).toContainText('evaluation: 2 × 4 problems × k = 8 responses');
  const embeddedStep = seconds(await stepCell(plan).textContent());
  const before = await plan.getByLabel('Plan totals').textContent();
  // More steps: the run's total follows once the recipe validates again.
  await page.locator('[id="f-stages.1.steps"]').fill('40');
  await expect(plan.getByLabel('Plan totals')).toContainText(/^40 RL steps/);
  expect(await plan.getByLabel('Plan totals').textContent()).not.toBe(before);
  // The report's cluster: GPU-hours appear.
  await plan.getByLabel('Cluster').selectOption('report');
  await expect(plan.getByLabel('Plan totals')).toContainText(/[1-9]\d* GPU-hours|0 GPU-hours/);
  await expect(plan.getByRole('img', { name: 'Step time by phase' })).toBeVisible();
  // Why the bound phase bounds, and every assumption with its source.
  await expect(plan.getByRole('list', { name: 'Why the bound phase bounds' })).toContainText(
    /bounds the step — .* takes/,
  );
  await plan.getByText('Assumptions and their sources').click();
  await expect(plan.getByRole('table', { name: 'Plan assumptions' })).toContainText('engineTokensPerS');
  await shot(page, 'plan-panel');
  // A named model that is not registered: no silent default size; the panel asks for it.
  await page.locator('[id="f-model.kind"]').selectOption('model');
  await page.locator('[id="f-model.name"]').fill('not-registered-here');
  await expect(plan.getByRole('alert')).toContainText('"not-registered-here" is not registered here');
  await expect(plan.getByRole('table', { name: 'Plan per stage' })).toHaveCount(0);
  await plan.getByLabel('Model parameters').fill('135e6');
  await expect(plan.getByRole('table', { name: 'Plan per stage' })).toBeVisible();
  // On this machine's CPUs the engine and the trainer slow with the model's size: 135M parameters against the
  // embedded model's 0.3M make the same step longer.
  await plan.getByLabel('Cluster').selectOption('local');
  await expect.poll(async () => seconds(await stepCell(plan).textContent())).toBeGreaterThan(5 * embeddedStep);
  await expect(plan.getByRole('alert')).toHaveCount(0);
  await expectAccessibleNames(page);
  expect(problems).toEqual([]);
});

/** The first RL stage's step time in the panel's table. */
const stepCell = (plan: Locator) =>
  plan.getByRole('table', { name: 'Plan per stage' }).getByRole('row').nth(1).getByRole('cell').nth(1);

/** A duration as formatSeconds prints it (s, min, h), in seconds. */
function seconds(text: string | null): number {
  const m = /^([\d.]+) (s|min|h)$/.exec((text ?? '').trim());
  if (!m) throw new Error(`not a duration: ${text}`);
  return Number(m[1]) * (m[2] === 'h' ? 3600 : m[2] === 'min' ? 60 : 1);
}
