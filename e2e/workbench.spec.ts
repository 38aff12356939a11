import { expect, test } from '@playwright/test';
import { expectAccessibleNames, shot, watchErrors, signIn } from './helpers.ts';

/**
 * The researcher's loop, in Chromium against the real server and worker: design a micro recipe, launch it, watch
 * live rollouts appear, open a trace and replay it, share it, open the link in a fresh browser context (no other
 * access), check that the token cannot change anything, revoke it and see it die. Screenshots of each main page go
 * to test-results/screenshots/. Any console error or uncaught page error fails the test.
 */
test('design → launch → live rollouts → trace and replay → share read-only → revoke', async ({ page, browser }) => {
  test.setTimeout(300_000);
  await page.setViewportSize({ width: 1280, height: 800 });
  const problems: string[] = [];
  watchErrors(page, problems);

  // Design: the micro template, renamed, with more RL steps so rollouts stream for a while.
  await signIn(page);
  await page.goto('/recipes');
  await expect(page.getByRole('heading', { name: 'Recipes', level: 1 })).toBeVisible();
  await shot(page, 'recipes');
  await expectAccessibleNames(page);
  await page.getByRole('group', { name: 'New from template' }).getByRole('link', { name: 'micro' }).click();
  await page.waitForURL(/\/recipes\/new\?template=micro/);
  await page.locator('#f-name').fill('e2e-micro');
  await page.locator('[id="f-stages.1.steps"]').fill('6');
  await page.locator('[id="f-stages.1.maxResponseTokens"]').fill('300');
  // Inline validation names the field.
  await page.locator('[id="f-stages.1.keep"]').fill('9');
  await expect(page.locator('[id="f-stages.1.keep-err"]')).toContainText(/rolloutsPerPrompt/);
  await page.locator('[id="f-stages.1.keep"]').fill('2');
  const launch = page.getByRole('button', { name: 'Launch run' });
  await expect(launch).toBeEnabled();
  await shot(page, 'recipe-designer');
  await expectAccessibleNames(page);
  await launch.click();
  await page.waitForURL(/\/runs\/run_[a-z0-9]+$/);
  const runId = page.url().split('/').pop()!;

  // Live rollouts stream in while RL steps generate; then the step's groups and the finished run.
  const live = page.getByRole('region', { name: 'Live rollouts' });
  await expect(live.getByRole('article').first()).toBeVisible({ timeout: 180_000 });
  await shot(page, 'run-live-rollouts');
  await expect(page.locator('[data-status]').first()).toHaveAttribute('data-status', 'succeeded', { timeout: 180_000 });
  await expect(page.getByRole('region', { name: 'Training dashboard' })).toBeVisible();
  // The plan of the run's recipe against its measured RL steps.
  await expect(page.getByLabel('Plan against measured')).toContainText(
    /RL step: measured median [\d.]+ s over 6 steps; planned before launch [\d.]+ s .*calibrated on these steps [\d.]+ s/,
  );
  // The policy engine's figures (waiting, running, KV blocks, tokens/s, weight version) from its 'engines' events.
  const engines = page.getByRole('region', { name: 'Inference engines' });
  await expect(engines.getByRole('row')).toHaveCount(2);
  await expect(engines.getByRole('cell').last()).toHaveText(/^v\d+$/);
  await expect(engines.getByRole('meter')).toHaveCount(1);
  await shot(page, 'run-dashboard');
  await expectAccessibleNames(page);

  // Explorer → a trajectory.
  await page.getByRole('link', { name: 'Rollout explorer' }).click();
  await page.waitForURL(new RegExp(`/runs/${runId}/explorer`));
  const open = page.getByRole('link', { name: /^Open trajectory / }).first();
  await expect(open).toBeVisible();
  await shot(page, 'explorer');
  await expectAccessibleNames(page);
  await open.click();
  await page.waitForURL(/\/trajectories\/tr_/);
  const trajectoryId = page.url().split('/').pop()!.split('?')[0]!;
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Trajectory ${trajectoryId}`);

  // Replay: step from the start; the URL carries the position.
  const replay = page.getByRole('region', { name: 'Replay' });
  await replay.getByRole('slider', { name: 'Replay position' }).fill('0');
  await replay.getByRole('button', { name: 'Step forward a turn' }).click();
  await expect(page).toHaveURL(/[?&]t=\d+/);
  await replay.getByRole('button', { name: 'Play replay' }).click();
  const pause = replay.getByRole('button', { name: 'Pause replay' });
  await expect(pause).toBeVisible();
  // A trajectory can finish replaying before a click lands, however fast or slow the machine is. So the toggle is
  // pressed only if it still says Pause, checked and clicked in one step in the page (nothing can change between
  // them); paused or played to its end, the replay stops, and the toggle is back to Play.
  const toggle = replay.getByRole('button', { name: /^(Pause|Play) replay$/ });
  await toggle.evaluate((b: HTMLButtonElement) => {
    if (b.getAttribute('aria-label') === 'Pause replay') b.click();
  });
  await expect(replay.getByRole('button', { name: 'Play replay' })).toBeVisible();
  await shot(page, 'trace-replay');
  await expectAccessibleNames(page);

  // Share the trajectory.
  await page.getByRole('button', { name: 'Share trajectory' }).click();
  const dialog = page.getByRole('dialog', { name: 'Share this trajectory' });
  await dialog.getByRole('textbox', { name: 'Link label' }).fill('e2e link');
  await dialog.getByRole('button', { name: 'Create link' }).click();
  const url = await dialog.getByRole('textbox', { name: 'Share URL' }).inputValue();
  expect(url).toMatch(/\/s\/[A-Za-z0-9_-]{43}$/);
  const token = url.split('/').pop()!;
  await shot(page, 'share-dialog');

  // A fresh context: no cookies, no history; the link shows exactly the trajectory, read-only.
  const guest = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const g = await guest.newPage();
  const guestProblems: string[] = [];
  watchErrors(g, guestProblems);
  await g.goto(url);
  await expect(g.getByRole('complementary', { name: 'Read-only shared view' })).toBeVisible();
  await expect(g.getByRole('region', { name: 'Turn 1' })).toBeVisible();
  await expect(g.getByRole('button', { name: /Cancel run|Pause run|Launch run|Share/ })).toHaveCount(0);
  await shot(g, 'shared-trajectory');
  await expectAccessibleNames(g);

  // The token opens nothing else and changes nothing: mutations with it are refused and the link still works.
  const revokeWithToken = await g.request.post('/api/trpc/share.revoke', { data: { id: token } });
  expect(revokeWithToken.ok()).toBe(false);
  const otherRun = await g.request.get(
    `/api/trpc/share.view.metrics?input=${encodeURIComponent(JSON.stringify({ token, runId }))}`,
  );
  expect(otherRun.status()).toBe(404);
  const summary = await g.request.get(
    `/api/trpc/share.view.summary?input=${encodeURIComponent(JSON.stringify({ token }))}`,
  );
  expect(summary.ok()).toBe(true);

  // Revoke in the owner's dialog; the guest's link is dead.
  await dialog.getByRole('button', { name: 'Revoke link e2e link' }).click();
  await expect(dialog.getByRole('table', { name: 'Share links' })).toContainText(/revoked/i);
  const beforeDead = [...guestProblems];
  await g.reload(); // from here the server answers 404, which Chromium logs as a failed resource
  await expect(g.getByRole('heading', { name: "This link doesn't open anything" })).toBeVisible();
  await shot(g, 'shared-dead');
  await guest.close();

  // The other main pages render with this run's data.
  await page.goto(`/runs/${runId}/evals`);
  await expect(page.getByRole('heading', { name: 'Reference (rStar2-Agent report)' })).toBeVisible();
  // Every figure with its interval; the two stage-end evaluations compared on the same problems.
  await expect(page.getByRole('table', { name: /Evaluation results at step/ })).toContainText(
    /95% CI \d+\.\d%–\d+\.\d%/,
  );
  await expect(page.getByRole('table', { name: /Paired comparison: step \d+ against step \d+/ })).toContainText(
    /[+−]\d+\.\d pts \[/,
  );
  await shot(page, 'evals');
  await expectAccessibleNames(page);
  await page.goto('/compare');
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await shot(page, 'compare');
  await expectAccessibleNames(page);

  expect(problems, problems.join('\n')).toEqual([]);
  expect(beforeDead, beforeDead.join('\n')).toEqual([]);
});
