import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { shot, signIn, watchErrors } from './helpers.ts';

/**
 * The run page's step timeline, as a researcher reads it: a lane per trajectory and one for the step's phases, each
 * block naming itself and its duration on hover, the critical path marked; the download is the Perfetto trace the
 * CLI writes; a share link to the step shows the same timeline. Seeded by e2e/seed-timeline.ts.
 */
test('step timeline: lanes, hover names and durations, critical path, Perfetto download, on a step link', async ({
  page,
  browser,
}) => {
  const root = process.cwd();
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'e2e/seed-timeline.ts'], {
    cwd: root,
    env: { ...process.env, TOOLSMITH_DATA_DIR: path.join(root, 'data/e2e'), DATABASE_URL: '' },
    encoding: 'utf8',
  });
  const { runId, token } = JSON.parse(out.trim().split('\n').pop()!) as { runId: string; token: string };
  const problems: string[] = [];
  watchErrors(page, problems);
  await signIn(page);
  await page.goto(`/runs/${runId}`);
  const panel = page.getByRole('region', { name: 'Step timeline' });
  await expect(panel.getByLabel('Timeline step')).toHaveValue('2');
  await expect(panel.getByTestId('timeline-summary')).toContainText(
    '3.85 s from the first generation to the last phase',
  );
  await expect(panel.getByTestId('timeline-summary')).toContainText('training 1.39 s');
  const lanes = panel.locator('.timeline-lane');
  await expect(lanes).toHaveCount(3);
  // Hovering a block names it and its duration (its title, which the browser shows as the tooltip).
  const train = panel.getByRole('img', { name: 'train · 1.39 s · critical path' });
  await expect(train).toHaveAttribute('data-critical', 'true');
  await train.hover();
  await expect(panel.getByRole('img', { name: 'turn 1 tool call queued · 100 ms · critical path' })).toBeVisible();
  // Sample 1 finished first: its block is off the critical path.
  await expect(panel.getByRole('img', { name: 'turn 1 generation · 600 ms' })).toHaveAttribute(
    'data-critical',
    'false',
  );

  await panel.scrollIntoViewIfNeeded();
  await shot(page, 'step-timeline');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    panel.getByRole('button', { name: 'Download Perfetto trace' }).click(),
  ]);
  expect(download.suggestedFilename()).toBe(`${runId}-step2.perfetto.json`);
  const doc = JSON.parse(fs.readFileSync((await download.path())!, 'utf8')) as {
    traceEvents: { ph: string; name: string; args?: { kind?: string } }[];
  };
  const slices = doc.traceEvents.filter((e) => e.ph === 'X');
  expect(slices.map((e) => e.args?.kind).sort()).toEqual(
    ['generate', 'generate', 'generate', 'tool_queue', 'tool', 'reward', 'roc', 'train', 'sync', 'storage'].sort(),
  );
  expect(doc.traceEvents.filter((e) => e.name === 'thread_name')).toHaveLength(3);
  expect(problems).toEqual([]);

  // A link to the step shows its timeline, signed out.
  const guest = await browser.newContext();
  const shared = await guest.newPage();
  watchErrors(shared, problems);
  await shared.goto(`/s/${token}`);
  const sharedPanel = shared.getByRole('region', { name: 'Step timeline' });
  await expect(sharedPanel.getByRole('heading', { name: 'Step timeline · step 2' })).toBeVisible();
  await expect(sharedPanel.getByRole('img', { name: 'train · 1.39 s · critical path' })).toBeVisible();
  await guest.close();
  expect(problems).toEqual([]);
});
