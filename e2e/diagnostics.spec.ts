import fs from 'node:fs';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import { expect, test } from '@playwright/test';
import { E2E_ADMIN, expectAccessibleNames, shot, signIn } from './helpers.ts';

/** The state letter of each thread of process `pid` (/proc/PID/task/TID/stat: "T" stopped; "X" one just gone). */
function threadStates(pid: number): string[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return stat.charAt(stat.lastIndexOf(')') + 2);
    } catch {
      return 'X';
    }
  });
}

/**
 * Hold the e2e server's worker still (SIGSTOP) until the returned function lets it go (SIGCONT): a run launched
 * meanwhile waits, queued, so its page is open before the run begins, on any machine, under any load. It is held
 * only while it holds no write lock on the database (the web server's writes, the launch among them, would wait for
 * it): stopped in the middle of a write, it is let go to finish it and held again.
 */
async function holdWorker(): Promise<() => void> {
  const dataDir = path.join(process.cwd(), 'data/e2e');
  const record = JSON.parse(fs.readFileSync(path.join(dataDir, 'supervisor.json'), 'utf8')) as {
    worker: { state: string; pid: number | null };
  };
  const pid = record.worker.pid;
  if (record.worker.state !== 'running' || !pid) throw new Error(`no running worker: ${JSON.stringify(record.worker)}`);
  const db = new Sqlite(path.join(dataDir, 'toolsmith.db'), { timeout: 0 });
  const release = () => process.kill(pid, 'SIGCONT');
  try {
    for (;;) {
      process.kill(pid, 'SIGSTOP');
      // kill() only sends the stop: wait until every thread of the worker has stopped.
      await expect.poll(() => threadStates(pid).every((s) => ['T', 'Z', 'X'].includes(s))).toBe(true);
      try {
        db.exec('BEGIN IMMEDIATE');
        db.exec('ROLLBACK');
        return release;
      } catch (e) {
        if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
        release();
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  } catch (e) {
    release();
    throw e;
  } finally {
    db.close();
  }
}

/**
 * The first thing a new user does: open the dashboard, run diagnostics, watch the checks stream into the run
 * page's terminal and chart, then read the report on /system. Any browser console error or uncaught page error
 * fails the test. Screenshots go to test-results/screenshots/ for people to look at.
 */
test('diagnostics: dashboard → live run page (terminal, chart, status) → system report', async ({ page }) => {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error')
      problems.push(`console.error: ${m.text()}${m.location().url ? ` (${m.location().url})` : ''}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.stack ?? e.message}`));

  // Dashboard: an empty installation (the e2e server has a data folder of its own).
  await signIn(page);
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Runs', level: 1 })).toBeVisible();
  await expect(page.getByText('No runs yet')).toBeVisible();
  const launch = page.getByRole('button', { name: 'Run diagnostics' });
  await expect(launch).toBeEnabled();
  await expectAccessibleNames(page);
  await shot(page, 'dashboard-empty');

  // Run diagnostics: the button queues a run and opens its live page. The worker is held until the page shows the
  // run queued (its snapshot taken before the run began), so every line the run writes can only reach the page by
  // its stream: how fast the browser and the worker each are on this machine decides nothing.
  const terminal = page.getByRole('log', { name: 'Run log terminal' });
  const badge = page.locator('[data-status]').first();
  const release = await holdWorker();
  let runId: string;
  const samples: number[] = [];
  try {
    await launch.click();
    await page.waitForURL(/\/runs\/run_[a-z0-9]+$/);
    runId = page.url().split('/').pop()!;
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(/^diagnostics \d{4}-\d\d-\d\d/);
    await expect(terminal).toHaveAttribute('data-ready', 'true');
    await expect(badge).toHaveAttribute('data-status', 'queued');
    samples.push(Number(await terminal.getAttribute('data-lines')));
  } finally {
    release();
  }

  // The terminal pane fills as the worker streams events: sample data-lines until the run has finished.
  await expect
    .poll(
      async () => {
        const lines = Number(await terminal.getAttribute('data-lines'));
        if (samples.at(-1) !== lines) samples.push(lines);
        return `${await badge.getAttribute('data-status')} with ${lines > 3 ? 'more than 3' : lines} lines`;
      },
      { timeout: 90_000, intervals: [100] },
    )
    .toMatch(/^(succeeded|failed|cancelled) with more than 3 lines$/);
  test.info().annotations.push({ type: 'terminal data-lines seen', description: samples.join(' → ') });
  expect(samples.length, `data-lines grew while the page watched (${samples.join(' → ')})`).toBeGreaterThan(1);
  await expect(badge).toHaveAttribute('data-status', 'succeeded');

  // The final lines reach the xterm rows (DOM renderer).
  const rows = terminal.locator('.xterm-rows');
  await expect(rows).toContainText(/all checks passed|check\(s\) failed: see the fixes above/);
  await expect(rows).toContainText('run succeeded');
  // A finished run writes nothing more, so the page stops streaming.
  await expect(page.getByLabel('Stream state')).toHaveText('finished');

  // Snapshot + stream wrote each event exactly once: the terminal's line count is the last event seq.
  const seqText = page.getByText(/event #\d+$/);
  await expect
    .poll(
      async () =>
        `${await terminal.getAttribute('data-lines')} lines, ${(await seqText.textContent())?.match(/event #\d+$/)?.[0]}`,
    )
    .toMatch(/^(\d+) lines, event #\1$/);
  expect(
    Number(await terminal.getAttribute('data-lines')),
    'a line and a metric line per check, a summary, status lines',
  ).toBeGreaterThanOrEqual(20);

  // The chart: one check_ms point per check, drawn as an SVG line.
  const chart = page.getByTestId('metric-chart');
  await expect.poll(async () => Number(await chart.getAttribute('data-points'))).toBeGreaterThan(0);
  await expect(chart.locator('svg path.recharts-line-curve')).toHaveAttribute('d', /^M[\d.-]+,[\d.-]+/);
  await expect(page.getByRole('combobox', { name: 'Metric' })).toHaveValue('check_ms');
  const points = Number(await chart.getAttribute('data-points'));

  // The header's run details follow the run to its end (one progress step per check), not the page's first load.
  await expect(seqText).toContainText(`step ${points} / ${points} ·`);
  await expect(seqText).not.toContainText('started —');

  // Nothing went wrong on the way.
  await expect(page.getByRole('main').getByRole('alert'), 'error messages on the page').toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Cancel run' })).toBeDisabled();
  await expectAccessibleNames(page);
  await shot(page, 'run');

  // /system: the report of that very run, one row per check.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'System' }).click();
  await page.waitForURL(/\/system$/);
  const table = page.getByRole('table', { name: 'Diagnostics checks' });
  await expect(table).toBeVisible();
  await expect(page.getByRole('link', { name: runId })).toHaveAttribute('href', `/runs/${runId}`);
  for (const check of ['python', 'python:numpy', 'bubblewrap', 'onnxruntime-node', 'database', 'disk', 'cores']) {
    const row = table.locator(`tr[data-check="${check}"]`);
    await expect(row, `row for ${check}`).toBeVisible();
    await expect(row.locator('[data-status]')).toHaveAttribute('data-status', /^(ok|warn|fail)$/);
  }
  await expect(table.locator('tr[data-check="database"] [data-status]')).toHaveAttribute('data-status', 'ok');
  await expect(table.locator('tbody tr'), 'one chart point per check').toHaveCount(points);
  await expect(page.getByRole('table', { name: 'Runs' }).getByRole('link', { name: /^diagnostics / })).toHaveCount(1);
  // The admin sections: the users (the e2e admin), and the audit log with the launch this test made.
  await expect(
    page.getByRole('region', { name: 'Users' }).getByRole('cell', { name: E2E_ADMIN.email, exact: true }),
  ).toBeVisible();
  const audit = page
    .getByRole('region', { name: 'Audit log' })
    .getByRole('row')
    .filter({ hasText: 'system.runDiagnostics' });
  await expect(audit.first()).toContainText(E2E_ADMIN.email);
  await expect(audit.first()).toContainText('ok');
  await expect(page.getByRole('main').getByRole('alert'), 'error messages on the page').toHaveCount(0);
  await expectAccessibleNames(page);
  await shot(page, 'system');

  // Back on the dashboard, the run is listed as succeeded.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboard' }).click();
  await page.waitForURL(/\/$/);
  const runRow = page
    .getByRole('table', { name: 'Runs' })
    .getByRole('row')
    .filter({ has: page.locator(`a[href="/runs/${runId}"]`) });
  await expect(runRow.locator('[data-status]')).toHaveAttribute('data-status', 'succeeded');
  await expectAccessibleNames(page);
  await shot(page, 'dashboard');

  expect(problems, 'browser console errors and page errors').toEqual([]);
});
