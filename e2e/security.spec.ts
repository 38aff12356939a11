import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { signIn } from './helpers.ts';

/**
 * Attacks through the browser. (1) Signed out, every app page sends you to sign-in and the API answers 401.
 * (2) Model-written tool output with an OSC 8 hyperlink, a title change, cursor movement and an erase: the terminal
 * shows the text and its colour, but no link to click (no dialog, no new page), no forged line over another.
 */
test('signed out: pages go to sign-in, the API says 401; hostile terminal escapes are shown as plain text', async ({
  page,
  browser,
}) => {
  const anon = await browser.newContext();
  const a = await anon.newPage();
  await a.goto('/recipes');
  await a.waitForURL(/\/sign-in\?next=%2Frecipes$/);
  await expect(a.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  const api = await a.request.get('/api/trpc/runs.list');
  expect(api.status()).toBe(401);
  expect(((await api.json()) as { error: { data: { code: string } } }).error.data.code).toBe('UNAUTHORIZED');
  await anon.close();

  const root = process.cwd();
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'e2e/seed-terminal-escapes.ts'], {
    cwd: root,
    env: { ...process.env, TOOLSMITH_DATA_DIR: path.join(root, 'data/e2e'), DATABASE_URL: '' },
    encoding: 'utf8',
  });
  const { id } = JSON.parse(out.trim().split('\n').pop()!) as { id: string };
  await signIn(page);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const popups: string[] = [];
  page.on('popup', (p) => popups.push(p.url()));
  await page.goto(`/trajectories/${id}`);
  const term = page.getByTestId('tool-xterm').first();
  await expect(term).toHaveAttribute('data-ready', 'true');
  const rows = term.locator('.xterm-rows');
  await expect(rows).toContainText('before click me red');
  await expect(rows).toContainText('forged line');
  await expect(rows).not.toContainText('evil');
  // The forged line did not move up over the first one: both are on the screen, in order.
  const text = (await rows.innerText()).replace(/\u00a0/g, ' ');
  expect(text.indexOf('before click me red')).toBeLessThan(text.indexOf('forged line'));
  expect(await page.title()).not.toContain('forged');
  // Clicking where the link text is opens nothing. xterm opens an OSC 8 link from its mouseup handler, at once:
  // confirm() to ask, then window.open(). Both are recorded in the page as they are called, so once the click is
  // done there is nothing left to arrive, and no wait for a popup that must not come (a wait a busy machine outlasts).
  await page.evaluate(() => {
    const w = window as Window & { linkCalls?: string[] };
    const calls: string[] = [];
    w.linkCalls = calls;
    w.open = (url?: string | URL) => {
      calls.push(`open ${String(url ?? '')}`);
      return null;
    };
    w.confirm = (message?: string) => {
      calls.push(`confirm ${message ?? ''}`);
      return false;
    };
  });
  await expect(rows.locator('a[href]')).toHaveCount(0);
  // xterm's screen layer takes the pointer, as it does for a person clicking there.
  await rows.getByText('click me').first().click({ force: true });
  expect(await page.evaluate(() => (window as Window & { linkCalls?: string[] }).linkCalls)).toEqual([]);
  expect(popups).toEqual([]);
  expect(dialogs).toEqual([]);
});

/**
 * The content security policy admits scripts by the response's nonce only (no 'unsafe-inline'): on every page,
 * signed out and in, each script Next rendered carries that nonce, the bootstrap scripts ran (the page hydrated),
 * and the browser reported no violation.
 */
test('every page runs its scripts by the nonce: no inline script without it, no CSP violation', async ({ page }) => {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(`${page.url()}: ${m.text()}`);
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`Content Security Policy violation: ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  const visit = async (pathname: string) => {
    const response = await page.goto(pathname);
    const csp = (await response!.allHeaders())['content-security-policy'] ?? '';
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce, `${pathname}: ${csp}`).toBeTruthy();
    expect(csp, pathname).not.toMatch(/script-src[^;]*unsafe-inline/);
    // Next's flight data arrives through inline `self.__next_f.push` scripts: present only if they ran.
    await expect.poll(() => page.evaluate(() => typeof (self as { __next_f?: unknown }).__next_f)).toBe('object');
    // Every script the server rendered carries it (scripts loaded later are admitted by 'strict-dynamic').
    const tags = (await response!.text()).match(/<script\b[^>]*>/g) ?? [];
    expect(tags.length, pathname).toBeGreaterThan(0);
    for (const tag of tags) expect(tag, pathname).toContain(`nonce="${nonce}"`);
  };
  await visit('/sign-in');
  await signIn(page);
  for (const p of ['/', '/recipes', '/datasets', '/models', '/system', '/account', '/compare']) await visit(p);
  await page.goto('/recipes');
  const recipe = await page.locator('a[href^="/recipes/"]').first().getAttribute('href');
  if (recipe) await visit(recipe);
  expect(violations).toEqual([]);
});
