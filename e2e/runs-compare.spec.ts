import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { signIn } from './helpers.ts';

/**
 * Compare that compares: it opens on the metrics the runs share, not on a key only one run logged, and
 * its x axis lines runs up by step, by steps since each run's first, by RL step (an SFT stage before RL shifts one
 * run's steps) or by wall time. Two runs seeded by e2e/seed-compare.ts into the e2e server's one database: the file
 * sorts after diagnostics.spec.ts, which starts from the empty dashboard (the specs run in file order, one worker).
 */
test('compare opens on the shared metrics and lines runs up by RL step', async ({ page }) => {
  const root = process.cwd();
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'e2e/seed-compare.ts'], {
    cwd: root,
    env: { ...process.env, TOOLSMITH_DATA_DIR: path.join(root, 'data/e2e'), DATABASE_URL: '' },
    encoding: 'utf8',
  });
  const { a, b } = JSON.parse(out.trim().split('\n').pop()!) as { a: string; b: string };
  await signIn(page);
  await page.goto(`/compare?runs=${a},${b}`);
  const charts = page.getByTestId('overlay-chart');
  // Only rollout/reward is logged by both runs: sft/loss and b/only are one run's each.
  await expect(charts).toHaveCount(1);
  const reward = page.locator('[data-testid="overlay-chart"][data-key="rollout/reward"]');
  // By step: A's RL at 3–5 and B's at 1–3 meet only at step 3.
  await expect(reward).toHaveAttribute('data-points', '5');
  await page.getByLabel('x axis').selectOption('rl');
  await expect(page.getByRole('heading', { name: /Metrics by RL step/ })).toBeVisible();
  // By RL step both start at 1: three shared x values.
  await expect(reward).toHaveAttribute('data-points', '3');
  await page.getByLabel('x axis').selectOption('step');
  await expect(reward).toHaveAttribute('data-points', '5');

  // The run page's panel heads show the last logged values, unsmoothed, whatever the smoothing slider says; the
  // evaluation panel is never smoothed.
  await page.goto(`/runs/${a}`);
  await expect(page.getByLabel('Smoothing')).toHaveValue('0.6');
  await expect(page.locator('[data-panel="reward"] .dash-panel-last')).toHaveText('90.0%');
  await expect(page.locator('[data-panel="eval"] .dash-panel-last')).toHaveText('80.0% [70.0%–90.0%]');
});
