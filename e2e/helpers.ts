import fs from 'node:fs';
import path from 'node:path';
import { expect, type Page } from '@playwright/test';

/** Shared by the e2e specs: screenshots for people to look at, console errors, accessible names. */
const SHOTS = path.join(process.cwd(), 'test-results/screenshots');

export async function shot(page: Page, name: string) {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

export function watchErrors(page: Page, problems: string[]) {
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}${m.location().url ? ` (${m.location().url})` : ''}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.stack ?? e.message}`));
}

/** Every visible button, select, input, link (native or by role) must have a non-empty accessible name. */
export async function expectAccessibleNames(page: Page) {
  const controls = page.locator('button, select, input:not([type=hidden]), textarea, a[href], [role="button"], [role="link"], [role="combobox"], [role="slider"], [role="checkbox"]').filter({ visible: true });
  const n = await controls.count();
  expect(n, 'the page has controls').toBeGreaterThan(0);
  for (let i = 0; i < n; i++) {
    const el = controls.nth(i);
    const what = await el.evaluate((e) => e.outerHTML.slice(0, 160));
    await expect(el, `accessible name of ${what}`).toHaveAccessibleName(/\S/);
  }
}
