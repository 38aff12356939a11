import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { signIn, watchErrors } from './helpers.ts';

/**
 * Per-trajectory links do not prefetch: a page of explorer rows would otherwise have the
 * server render every trajectory page (its turns, tool calls and token record) before anyone clicks. Watches every
 * request the browser makes while the explorer's rows and its same-prompt chips are on screen and hovered; only a click fetches a trajectory.
 */
test('explorer rows: no trajectory page is fetched until one is clicked', async ({ page }) => {
  const problems: string[] = [];
  watchErrors(page, problems);
  const root = process.cwd();
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'e2e/seed-token-view.ts'], {
    cwd: root,
    env: { ...process.env, TOOLSMITH_DATA_DIR: path.join(root, 'data/e2e'), DATABASE_URL: '' },
    encoding: 'utf8',
  });
  const seed = JSON.parse(out.trim().split('\n').pop()!) as { run: string; withTokens: string; without: string };

  const fetched: string[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/trajectories/')) fetched.push(`${url.pathname}${url.search}`);
  });
  await signIn(page);
  await page.goto(`/runs/${seed.run}/explorer?step=1`);
  const rows = [seed.withTokens, seed.without].map((id) =>
    page.getByRole('link', { name: `Open trajectory ${id}`, exact: true }),
  );
  for (const row of rows) await expect(row).toBeVisible();
  // Hovering is where a router prefetches when it does not on sight; the page then settles with nothing fetched.
  for (const row of rows) await row.hover();
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(1500);
  expect(fetched).toEqual([]);
  // The same prompt's trajectories across steps: chips that link to each.
  await page.getByRole('button', { name: 'Same prompt across steps: p1' }).first().click();
  const chip = page.getByRole('link', { name: new RegExp(`^Open trajectory ${seed.without} \\(step 1`) });
  await expect(chip).toBeVisible();
  await chip.hover();
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(1500);
  expect(fetched).toEqual([]);

  await rows[0]!.click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Trajectory ${seed.withTokens}`);
  expect(fetched.length).toBeGreaterThan(0);
  expect(fetched.every((f) => f.startsWith(`/trajectories/${seed.withTokens}`))).toBe(true);
  expect(problems).toEqual([]);
});
