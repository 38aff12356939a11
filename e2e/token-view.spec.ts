import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { expectAccessibleNames, shot, watchErrors, signIn } from './helpers.ts';

/**
 * The token view in Chromium: a trained-on trajectory (seeded by e2e/seed-token-view.ts into the e2e server's
 * database) shown token by token, coloured by each quantity, with values on hover and the tool response greyed
 * out; a trajectory without a record says so; a share link shows the same view. Any console error fails the test.
 */
test('token view: colours by quantity, values on hover, tool tokens masked; also through a share link', async ({
  page,
  browser,
}) => {
  const problems: string[] = [];
  watchErrors(page, problems);
  const root = process.cwd();
  // The same database the e2e server uses (playwright.config.ts gives it data/e2e).
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'e2e/seed-token-view.ts'], {
    cwd: root,
    env: { ...process.env, TOOLSMITH_DATA_DIR: path.join(root, 'data/e2e'), DATABASE_URL: '' },
    encoding: 'utf8',
  });
  const seed = JSON.parse(out.trim().split('\n').pop()!) as {
    withTokens: string;
    without: string;
    token: string;
    modelTokens: number;
    toolPieces: number;
  };

  await signIn(page);
  await page.goto(`/trajectories/${seed.withTokens}`);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Trajectory ${seed.withTokens}`);
  await page.getByRole('group', { name: 'Trace view' }).getByRole('button', { name: 'Tokens' }).click();
  await expect(page).toHaveURL(/[?&]view=tokens/);
  const view = page.getByRole('region', { name: 'token view' });
  await checkTokenView(page, view, seed);
  await shot(page, 'token-view');
  await expectAccessibleNames(page);

  // A trajectory stored without a record: the view says so instead of showing nothing.
  await page.goto(`/trajectories/${seed.without}?view=tokens`);
  await expect(page.getByRole('status').filter({ hasText: 'No token record was stored' })).toBeVisible();

  // The share link, in a fresh context: the same view, read-only.
  const guest = await browser.newContext();
  const g = await guest.newPage();
  watchErrors(g, problems);
  await g.goto(`/s/${seed.token}`);
  await g.getByRole('group', { name: 'Trace view' }).getByRole('button', { name: 'Tokens' }).click();
  await checkTokenView(g, g.getByRole('region', { name: 'token view' }), seed);
  await shot(g, 'shared-token-view');
  await guest.close();
  expect(problems).toEqual([]);
});

async function checkTokenView(
  page: Page,
  view: ReturnType<Page['getByRole']>,
  seed: { modelTokens: number; toolPieces: number },
) {
  await expect(view.locator('[data-kind="model"]')).toHaveCount(seed.modelTokens);
  await expect(view.locator('[data-kind="tool"]')).toHaveCount(seed.toolPieces);
  // Turn 1's model tokens spell its text exactly; the appended tool response follows, greyed.
  const turn1 = view.getByRole('article', { name: 'turn 1 tokens' });
  const spelled = await turn1
    .locator('[data-kind="model"]')
    .evaluateAll((els) => els.map((e) => e.textContent).join(''));
  expect(spelled).toBe(
    `Compute it.</reason>\n<tool_call>\n${JSON.stringify({ name: 'python', arguments: { code: 'print(6*7)', input: '' } })}\n</tool_call>`,
  );
  const tool = turn1.locator('[data-kind="tool"]');
  await expect(tool).toContainText('<tool_response>');
  await expect(tool).toHaveCSS('opacity', '0.55');

  const q = view.getByLabel('Colour tokens by');
  const first = turn1.locator('[data-i="0"]');
  // Trained on: the default is the trainer − rollout difference; token 0 differs by +1 (the largest): full blue.
  await expect(q).toHaveValue('diff');
  await expect(first).toHaveCSS('background-color', 'rgba(59, 130, 246, 0.85)');
  await q.selectOption('rollout');
  // log p = −5: 0.85 × (1 − e⁻⁵) ≈ 0.84 red.
  await expect(first).toHaveCSS('background-color', 'rgba(239, 68, 68, 0.84)');
  await first.hover();
  const readout = view.getByLabel('hovered token');
  await expect(readout).toContainText('rollout logprob -5.0000 (p 0.007)');
  await expect(readout).toContainText('trainer logprob -4.0000 · trainer − rollout 1.0000');
  await expect(first).toHaveAttribute('title', /token 0 · id \d+ · turn 1 · "C"/);

  await q.selectOption('advclip');
  await expect(turn1.locator('[data-i="1"]')).toHaveCSS('text-decoration-line', 'underline');
  await expect(turn1.locator('[data-i="2"]')).toHaveCSS('text-decoration-line', 'line-through');
  await expect(turn1.locator('[data-i="3"]')).toHaveCSS('background-color', 'rgba(236, 72, 153, 0.6)');
  await expect(turn1.locator('[data-i="5"]')).toHaveCSS('background-color', 'rgba(34, 197, 94, 0.49)');
  await expect(view.getByRole('list', { name: 'token colour legend' })).toContainText('masked by TIS (weight 0)');
  await turn1.locator('[data-i="2"]').hover();
  await expect(readout).toContainText('TIS weight 0.000 · masked by TIS (weight 0)');
  await tool.hover();
  await expect(readout).toContainText('tool response, turn 1: masked out of the loss');
}
