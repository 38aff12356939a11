import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { expectAccessibleNames, shot, signIn, watchErrors } from './helpers.ts';

/**
 * A run trained elsewhere, in Chromium: a verl dump folder under the e2e server's import root
 * (data/e2e/imports, the default TOOLSMITH_IMPORT_ROOTS) opened with *Import run* on the Dashboard; a folder outside
 * the roots refused with the reason; the worker reads it; the run page says where it came from and draws its
 * dashboard; the rollout explorer lists its trajectories and the trace inspector opens one with its prompt, answer
 * and the source's reward. Any console error fails the test.
 */
test('Import run: a verl folder becomes a read-only run every viewer opens', async ({ page }) => {
  const problems: string[] = [];
  watchErrors(page, problems);
  const root = path.join(process.cwd(), 'data/e2e/imports');
  const folder = path.join(root, `verl-${Date.now()}`);
  fs.mkdirSync(path.join(folder, 'rollout'), { recursive: true });
  for (const step of [1, 2]) {
    const lines = [0, 1, 2, 3].map((i) =>
      JSON.stringify({
        input: `Problem ${i % 2}: what is ${i % 2} + ${step}?`,
        output: `The answer is ${i === 0 ? 99 : (i % 2) + step}.`,
        gts: String((i % 2) + step),
        score: i === 0 ? 0 : 1,
        step,
        uid: `p${i % 2}`,
      }),
    );
    fs.writeFileSync(path.join(folder, 'rollout', `${step}.jsonl`), `${lines.join('\n')}\n`);
  }

  await signIn(page);
  await page.goto('/');
  await page.getByRole('button', { name: 'Import run' }).click();
  const form = page.getByRole('form', { name: 'Import a run trained elsewhere' });
  await expect(form).toContainText(root);
  await form.getByLabel('Folder').fill('/etc');
  await form.getByRole('button', { name: 'Import', exact: true }).click();
  await expect(form.getByRole('alert')).toContainText('not inside an import root');
  await expectAccessibleNames(page);

  // The reward weights are checked in the page, the field named; the framework version goes with the run.
  await form.getByLabel('Folder').fill(folder);
  await form.getByLabel('Reward weights').fill('score');
  await form.getByRole('button', { name: 'Import', exact: true }).click();
  await expect(form.getByRole('alert').filter({ hasText: 'Reward weights' })).toHaveText(
    'Reward weights: "score" is not name=number',
  );
  await form.getByLabel('Reward weights').fill('');
  await form.getByLabel('Framework version').fill('0.9.1');
  await form.getByLabel('Name').fill('verl from e2e');
  // Follow is off unless asked for (a followed import holds a worker slot).
  await expect(form.getByRole('checkbox')).not.toBeChecked();
  await form.getByRole('button', { name: 'Import', exact: true }).click();
  await page.waitForURL(/\/runs\/run_/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('verl from e2e');
  // The worker reads it once (Follow was off): the run ends succeeded, its chart drawn from the steps' mean reward.
  const badge = page.locator('[data-status]').first();
  await expect(badge).toHaveAttribute('data-status', 'succeeded');
  await expect(badge).toHaveText('imported');
  // The request did not walk the folder: the import job found the format from its layout.
  await expect(page.getByLabel('Imported from')).toContainText(`verl rollouts from ${folder} (0.9.1)`);
  await shot(page, 'imported-run');
  const runUrl = page.url();

  await page.getByRole('link', { name: 'Rollout explorer' }).click();
  await page.waitForURL(/\/explorer/);
  const open = page.getByRole('link', { name: /^Open trajectory ti_/ });
  try {
    await expect(open.first()).toBeVisible();
  } catch (e) {
    // Once in a fresh-clone run (2026-12-07) no row appeared in 60 s (the explorer took the run page's empty list
    // of steps: docs/testing.md), and the clone's screenshot went with it: say what the explorer showed.
    const shown = (await page.locator('main').textContent()) ?? '';
    throw new Error(`${(e as Error).message}\nthe explorer showed:\n${shown.slice(0, 3000)}`);
  }
  await open.first().click();
  await page.waitForURL(/\/trajectories\/ti_/);
  await page.locator('summary', { hasText: 'Prompt' }).click();
  await expect(page.getByRole('region', { name: 'Prompt text' })).toHaveText(/^Problem \d: what is \d \+ \d\?$/);
  await expect(page.getByText(/^The answer is \d+\.$/)).toBeVisible();
  await expect(page.getByText(/imported from verl: the reward .* is the source's/)).toBeVisible();
  // One verdict everywhere: verl keeps a reward, not a verdict, so the header and the answer box both say none.
  for (const where of ['trajectory summary', 'answer and verdict']) {
    const region = page.getByRole('region', { name: where });
    await expect(region.locator('.badge', { hasText: 'no verdict' })).toBeVisible();
    await expect(region.locator('.badge', { hasText: /^(correct|incorrect)$/ })).toHaveCount(0);
  }
  // Values verl does not keep are absent, not 0.
  await expect(page.getByRole('article', { name: 'turn 1' })).toContainText('— tokens · generated in — ·');
  await shot(page, 'imported-trajectory');

  // Following holds one of the worker's side slots, not its only lane: while the first run is followed, a
  // second import of the folder is read and ends; switched off, the first reads as stopped.
  await page.goto(runUrl);
  const follow = page.getByRole('checkbox', { name: 'Follow' });
  await expect(follow).not.toBeChecked();
  await follow.check();
  await expect(badge).toHaveText('following');
  await expect(follow).toBeChecked();
  await page.goto('/');
  await page.getByRole('button', { name: 'Import run' }).click();
  await form.getByLabel('Folder').fill(folder);
  await form.getByLabel('Name').fill('verl again, beside the follow');
  await form.getByRole('button', { name: 'Import', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('verl again, beside the follow');
  await expect(badge).toHaveText('imported');
  await page.goto(runUrl);
  await expect(badge).toHaveText('following');
  await follow.uncheck();
  await expect(badge).toHaveText('stopped');
  await expect(follow).not.toBeChecked();

  // The refused folder's 400 is the one error the page was meant to see (the browser logs every 4xx it loads).
  expect(problems.filter((p) => !/status of 400 .*runs\.importFolder/.test(p))).toEqual([]);
  expect(problems.length).toBe(1);
});
