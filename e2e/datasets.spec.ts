import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { signIn } from './helpers.ts';

/** A dataset imported with the CLI shows up on /datasets, with its problems one click away. */
test('datasets: CLI import → listed in the UI with its problems', async ({ page }) => {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  const root = process.cwd();
  // The same database the e2e server uses (playwright.config.ts gives it data/e2e).
  execFileSync(
    process.execPath,
    ['bin/toolsmith.mjs', 'dataset', 'import', 'tests/fixtures/datasets/verl.parquet', '--name', 'e2e-gsm'],
    {
      cwd: root,
      env: { ...process.env, TOOLSMITH_DATA_DIR: path.join(root, 'data/e2e'), DATABASE_URL: '' },
      stdio: 'pipe',
    },
  );
  await signIn(page);
  await page.goto('/');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Datasets' }).click();
  await page.waitForURL(/\/datasets$/);
  const row = page.getByRole('table', { name: 'Datasets' }).locator('tr[data-dataset="e2e-gsm"]');
  await expect(row).toBeVisible();
  await expect(row).toContainText('train 3');
  await page.getByRole('button', { name: /^Show problems of e2e-gsm v1$/ }).click();
  await expect(page.getByRole('table', { name: 'Dataset problems' }).locator('tbody tr')).toHaveCount(3);
  fs.mkdirSync('test-results/screenshots', { recursive: true });
  await page.screenshot({ path: 'test-results/screenshots/datasets.png', fullPage: true });
  expect(errors).toEqual([]);
});
