import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { shot, signIn, watchErrors } from './helpers.ts';

/**
 * Several runs in one trace view, as a researcher reaches it: from Compare, pick the problem, read
 * the two runs' trajectories turn by turn with their rewards and verdicts, pick another sample (kept in the URL);
 * then the trace-view share link in a signed-out context, with no way into the app. Seeded by e2e/seed-traces.ts.
 */
test('trajectories side by side: from compare, aligned by turn, picks in the URL, and as a share link', async ({
  page,
  browser,
}) => {
  const root = process.cwd();
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'e2e/seed-traces.ts'], {
    cwd: root,
    env: { ...process.env, TOOLSMITH_DATA_DIR: path.join(root, 'data/e2e'), DATABASE_URL: '' },
    encoding: 'utf8',
  });
  const seed = JSON.parse(out.trim().split('\n').pop()!) as Record<
    'base' | 'tuned' | 'base0' | 'base1' | 'tuned0' | 'token',
    string
  >;
  const problems: string[] = [];
  watchErrors(page, problems);
  await signIn(page);
  await page.goto(`/compare?runs=${seed.base},${seed.tuned}`);
  await page.getByRole('link', { name: 'Trajectories side by side' }).click();
  await expect(page).toHaveURL(new RegExp(`/compare/traces\\?runs=${seed.base},${seed.tuned}$`));
  await page.getByLabel('Problem', { exact: true }).selectOption('e2e:7');
  await expect(page).toHaveURL(/problem=e2e%3A7/);

  const a = page.getByRole('region', { name: 'Column A: e2e-traces base' });
  const b = page.getByRole('region', { name: 'Column B: e2e-traces tuned' });
  // Each column starts on its latest step's first sample: base's wrong one, tuned's right one.
  await expect(a.getByTestId('column-A-outcome')).toContainText('reward 0.00');
  await expect(a.getByTestId('column-A-outcome')).toContainText('incorrect');
  await expect(b.getByTestId('column-B-outcome')).toContainText('reward 1.00');
  await expect(b.getByTestId('column-B-outcome').getByText('correct', { exact: true })).toBeVisible();
  const turn1 = page.getByRole('region', { name: 'Turn 1 across runs' });
  const turn2 = page.getByRole('region', { name: 'Turn 2 across runs' });
  await expect(turn1).toHaveAttribute('data-agreement', 'same');
  await expect(turn2).toHaveAttribute('data-agreement', 'different');
  await expect(turn1.getByRole('article', { name: 'A turn 1' })).toContainText('Let me compute it.');
  await expect(turn1.getByRole('region', { name: 'B turn 1 code' })).toContainText('print(17 * 23)');
  await expect(turn2.getByRole('article', { name: 'B turn 2' })).toContainText('The product is 391.');
  await expect(page.getByRole('region', { name: 'A answer and verdict' })).toContainText('544');

  // Another sample of A: a one-turn right answer; turn 2 is now B's only.
  await page.getByLabel('Trajectory shown for A').selectOption(seed.base1);
  await expect(a.getByTestId('column-A-outcome')).toContainText('reward 1.00');
  await expect(turn1).toHaveAttribute('data-agreement', 'different');
  await expect(turn2).toHaveAttribute('data-agreement', 'partial');
  await expect(turn2.getByText('A ended after 1 turn.')).toBeVisible();
  await expect(page).toHaveURL(new RegExp(`pick=${seed.base1},${seed.tuned0}`));
  // The URL is the view: reloading keeps the problem and the picks.
  await page.reload();
  await expect(page.getByLabel('Trajectory shown for A')).toHaveValue(seed.base1);
  await expect(page.getByRole('button', { name: 'Share these traces' })).toBeVisible();
  await shot(page, 'traces-side-by-side');
  expect(problems).toEqual([]);

  // The trace-view link, signed out: the same columns, nothing of the app.
  const guest = await browser.newContext();
  const shared = await guest.newPage();
  const guestProblems: string[] = [];
  watchErrors(shared, guestProblems);
  await shared.goto(`/s/${seed.token}`);
  await expect(shared.getByRole('heading', { level: 1 })).toHaveText('Problem e2e:7 in 2 runs');
  await expect(shared.getByRole('region', { name: 'Column B: e2e-traces tuned' })).toBeVisible();
  await expect(shared.getByRole('region', { name: 'Turn 1 across runs' })).toHaveAttribute('data-agreement', 'same');
  await shared.getByLabel('Trajectory shown for A').selectOption(seed.base1);
  await expect(shared.getByRole('region', { name: 'Turn 2 across runs' })).toHaveAttribute('data-agreement', 'partial');
  await expect(shared.getByRole('navigation', { name: 'Main' })).toHaveCount(0);
  const hrefs = await shared.locator('a[href]').evaluateAll((as) => as.map((x) => x.getAttribute('href') ?? ''));
  for (const href of hrefs) expect(href, `link ${href} leaves the share link`).toMatch(new RegExp(`^/s/${seed.token}`));
  await guest.close();
  expect(guestProblems).toEqual([]);
});
