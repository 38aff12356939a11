import { spawnSync } from 'node:child_process';
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
  page.on('console', (m) => {
    if (m.type() === 'error')
      problems.push(`console.error: ${m.text()}${m.location().url ? ` (${m.location().url})` : ''}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.stack ?? e.message}`));
}

/** Every visible button, select, input, link (native or by role) must have a non-empty accessible name. */
export async function expectAccessibleNames(page: Page) {
  const controls = page
    .locator(
      'button, select, input:not([type=hidden]), textarea, a[href], [role="button"], [role="link"], [role="combobox"], [role="slider"], [role="checkbox"]',
    )
    .filter({ visible: true });
  const n = await controls.count();
  expect(n, 'the page has controls').toBeGreaterThan(0);
  for (let i = 0; i < n; i++) {
    const el = controls.nth(i);
    const what = await el.evaluate((e) => e.outerHTML.slice(0, 160));
    await expect(el, `accessible name of ${what}`).toHaveAccessibleName(/\S/);
  }
}

/** The e2e admin: created once through the CLI on the e2e server's own database, then signed in through the form. */
export const E2E_ADMIN = { email: 'e2e-admin@toolsmith.local', password: 'e2e-password-123' };

export function ensureE2eUser(user = E2E_ADMIN, role = 'admin') {
  const root = process.cwd();
  const r = spawnSync(
    process.execPath,
    [path.join(root, 'bin/toolsmith.mjs'), 'user', 'add', user.email, '--role', role, '--password-stdin'],
    {
      cwd: root,
      input: user.password,
      encoding: 'utf8',
      env: { ...process.env, TOOLSMITH_DATA_DIR: path.join(root, 'data/e2e'), DATABASE_URL: '' },
    },
  );
  if (r.status !== 0 && !/already exists/.test(r.stderr)) throw new Error(`could not create the e2e user: ${r.stderr}`);
}

/**
 * The session cookies each user got from the form, kept for the next spec in this worker: the specs share one
 * client address, which the server lets sign in 5 times a minute (server/auth/auth.ts), and seven specs sign in
 * within a minute. A worker restarted after a failure signs in afresh.
 */
const sessions = new Map<string, Awaited<ReturnType<ReturnType<Page['context']>['cookies']>>>();

/** Signed in as `user`: with this worker's session for them when the server still takes it, else through the form. */
export async function signIn(page: Page, user = E2E_ADMIN, role = 'admin') {
  ensureE2eUser(user, role);
  const kept = sessions.get(user.email);
  if (kept) {
    await page.context().addCookies(kept);
    // Whether the server still takes the session is the server's answer, not how soon a page shows it: a page slow
    // to render on a busy machine must not cost a sign-in (the address's 5 a minute are shared by every spec).
    const r = await page.request.get('/api/auth/get-session');
    const session = r.ok() ? ((await r.json()) as { user?: { email?: string } } | null) : null;
    if (session?.user?.email === user.email) {
      await page.goto('/');
      await expect(page.getByLabel('Signed in as')).toContainText(user.email);
      return;
    }
    // Ended since (a reset, a role change, a sign-out): sign in again.
    await page.context().clearCookies();
    sessions.delete(user.email);
  }
  await signInWithForm(page, user);
  sessions.set(user.email, await page.context().cookies());
}

/** Sign in through the sign-in page with email and password (a real Better Auth session cookie). */
export async function signInWithForm(page: Page, user = E2E_ADMIN) {
  await page.goto('/sign-in');
  await page.getByLabel('Email', { exact: true }).fill(user.email);
  await page.getByLabel('Password', { exact: true }).fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
  await expect(page.getByLabel('Signed in as')).toContainText(user.email);
}
