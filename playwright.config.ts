import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from '@playwright/test';

/**
 * End-to-end tests: Debian's Chromium (never a downloaded browser) against `node scripts/start.mjs --serve-only`
 * (the built web app + one worker) on a fixed port, with a data folder of its own that is emptied at the start
 * of every test run, so a run never sees data from an earlier one. The build must be current: `npm test` (or
 * `node scripts/setup.mjs`) rebuilds it when sources change.
 */
const ROOT = path.dirname(fileURLToPath(import.meta.url));
const PORT = Number(process.env.TOOLSMITH_E2E_PORT ?? 3217);
const DATA_DIR = path.join(ROOT, 'data/e2e');

// The config is evaluated again in each worker process (which inherits this process's environment): empty the
// folder only the first time, in the main process, before the web server starts.
if (!process.env.TOOLSMITH_E2E_DATA_READY) {
  process.env.TOOLSMITH_E2E_DATA_READY = '1';
  fs.rmSync(DATA_DIR, { recursive: true, force: true });
  fs.mkdirSync(DATA_DIR, { recursive: true });
}

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results/artifacts',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: Boolean(process.env.CI),
  reporter: 'list',
  timeout: 120_000,
  // Every expect waits for a state that must come (a page rendered, a run finished): its timeout bounds a failure,
  // never how soon it came, so it is generous. With both cores busy, Next and Chromium take many times as long.
  expect: { timeout: 60_000 },
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    browserName: 'chromium',
    viewport: { width: 1400, height: 900 },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: {
    command: 'node scripts/start.mjs --serve-only',
    url: `http://127.0.0.1:${PORT}/api/trpc/system.health`,
    cwd: ROOT,
    env: {
      PORT: String(PORT),
      HOST: '127.0.0.1',
      TOOLSMITH_DATA_DIR: DATA_DIR,
      // The e2e server always uses its own SQLite file, whatever the shell exported.
      DATABASE_URL: '',
      NEXT_TELEMETRY_DISABLED: '1',
    },
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: 'pipe',
    stderr: 'pipe',
    gracefulShutdown: { signal: 'SIGTERM', timeout: 25_000 },
  },
});
