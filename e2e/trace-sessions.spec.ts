import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { signIn } from './helpers.ts';

/**
 * The trace view of a trajectory whose calls ran in one sandbox session (tool.session "trajectory"), seeded from a
 * real session by e2e/seed-sessions.ts: each call says whether it opened the session, continued it or ended it, and
 * the model's view of the call that ended it says its state is gone.
 */
test("a session's calls are marked: new, continued, ended", async ({ page }) => {
  const root = process.cwd();
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'e2e/seed-sessions.ts'], {
    cwd: root,
    env: { ...process.env, TOOLSMITH_DATA_DIR: path.join(root, 'data/e2e'), DATABASE_URL: '' },
    encoding: 'utf8',
  });
  const { id } = JSON.parse(out.trim().split('\n').pop()!) as { id: string };
  await signIn(page);
  await page.goto(`/trajectories/${id}`);
  const output = (n: number) => page.getByRole('region', { name: `turn ${n} tool output` });
  await expect(output(1).getByText('new session', { exact: true })).toBeVisible();
  await expect(output(2).getByText('session continued', { exact: true })).toBeVisible();
  await expect(output(3).getByText('session continued · session ended: its state is gone')).toBeVisible();
  await output(3).getByText('What the model saw').click();
  await expect(page.getByRole('region', { name: 'turn 3 tool response text' })).toContainText(
    'the session ended: its variables, imports and files are gone',
  );
});
