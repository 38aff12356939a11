import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { watchErrors } from './helpers.ts';

/**
 * Share links in a fresh browser context, never signed in: each page shows what its link names
 * and carries no link into the app (no top bar, every href stays under /s/<token>); a step or trajectory page
 * shows no error text and no seed of the run. Seeded by e2e/seed-share-scope.ts into the e2e server's database.
 */
test('shared pages: no navigation into the app; step and trajectory links do not show the whole run', async ({
  browser,
}) => {
  const root = process.cwd();
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'e2e/seed-share-scope.ts'], {
    cwd: root,
    env: { ...process.env, TOOLSMITH_DATA_DIR: path.join(root, 'data/e2e'), DATABASE_URL: '' },
    encoding: 'utf8',
  });
  const seed = JSON.parse(out.trim().split('\n').pop()!) as {
    runId: string;
    trajectoryId: string;
    run: string;
    step: string;
    trajectory: string;
    error: string;
    seed: number;
  };
  const problems: string[] = [];
  const guest = await browser.newContext();
  const page = await guest.newPage();
  watchErrors(page, problems);
  // A signed-out page answers 401 for app procedures: a console error from one would mean the page called one.

  async function expectNoWayIn(p: Page, token: string) {
    await expect(p.getByRole('navigation', { name: 'Main' })).toHaveCount(0);
    await expect(p.locator('header.topbar')).toHaveCount(0);
    const hrefs = await p
      .locator('a[href]')
      .evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).getAttribute('href') ?? ''));
    for (const href of hrefs) {
      const u = new URL(href, p.url());
      expect(u.origin === new URL(p.url()).origin ? u.pathname : href, `link ${href} leaves the share link`).toMatch(
        new RegExp(`^/s/${token}(/|$)`),
      );
    }
  }

  await page.goto(`/s/${seed.run}`);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('e2e-share-scope');
  await expect(page.getByText(seed.error).first()).toBeVisible(); // a run link shows its error (header and log)
  await expectNoWayIn(page, seed.run);

  for (const token of [seed.step, seed.trajectory]) {
    await page.goto(`/s/${token}`);
    await expect(page.getByRole('heading', { level: 1 })).toContainText('e2e-share-scope');
    await expect(
      page
        .getByText('The answer is 42.')
        .or(page.getByRole('link', { name: `Open trajectory ${seed.trajectoryId}` }))
        .first(),
    ).toBeVisible();
    await expect(page.locator('body')).not.toContainText(seed.error);
    await expect(page.locator('body')).not.toContainText(`seed ${seed.seed}`);
    await expectNoWayIn(page, token);
  }

  // The step page's trajectory page: still no way in.
  await page.goto(`/s/${seed.step}/t/${seed.trajectoryId}`);
  await expect(page.getByText('The answer is 42.')).toBeVisible();
  await expectNoWayIn(page, seed.step);
  await guest.close();
  expect(problems).toEqual([]);
});
