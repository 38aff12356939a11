import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';
import { crashDetails } from '../../scripts/failure-details.mjs';
import { playwrightFileTimes, slowestFiles } from '../../scripts/file-times.mjs';
import { SUITE_MARKER, holdsMarker, leftoverProcesses, markedProcesses } from '../../scripts/leftovers.mjs';

/** What `npm test` adds to its summary: the slowest files, a crashed suite's last lines, processes left running. */

test("Playwright's list lines become per-file times (failed specs too; colours and other lines ignored)", () => {
  const out = [
    '\u001b[32m  ✓  1 e2e/a.spec.ts:10:1 › one (13.6s)\u001b[39m',
    '  ✘  2 e2e/a.spec.ts:20:1 › two (400ms)',
    '[WebServer] [worker] job succeeded (3.0s)',
    '  ✓  3 e2e/b.spec.ts:5:1 › three (1.2m)',
    '  8 passed (1.7m)',
  ].join('\n');
  assert.deepEqual(playwrightFileTimes(out), [
    { file: 'e2e/a.spec.ts', ms: 14_000 },
    { file: 'e2e/b.spec.ts', ms: 72_000 },
  ]);
  assert.deepEqual(playwrightFileTimes(fs.readFileSync('tests/fixtures/test-output/playwright-list.txt', 'utf8')), [
    { file: 'fail.spec.ts', ms: 47 },
  ]);
});

test('the slowest files over every suite, a file run by two suites once per suite', () => {
  const slow = slowestFiles(
    [
      {
        suite: 'sqlite',
        files: [
          { file: 'x.test.ts', ms: 5 },
          { file: 'y.test.ts', ms: 50 },
        ],
      },
      { suite: 'postgresql', files: [{ file: 'x.test.ts', ms: 7 }] },
      { suite: 'unit', files: [] },
    ],
    2,
  );
  assert.deepEqual(slow, [
    { suite: 'sqlite', file: 'y.test.ts', ms: 50 },
    { suite: 'postgresql', file: 'x.test.ts', ms: 7 },
  ]);
});

test('a suite that crashed says how it ended and shows its last lines', () => {
  const out = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
  const why = crashDetails(out, null, 'SIGKILL');
  assert.match(why, /ended \(signal SIGKILL\) without naming a failed test/);
  assert.ok(why.includes('line 29') && why.includes('line 15') && !why.includes('line 14\n'));
  assert.match(crashDetails('boom', 3, null), /exit code 3/);
});

test('the marker is matched as a whole variable', () => {
  const env = ['PATH=/bin', `${SUITE_MARKER}=12-3`, 'X=1'].join('\0');
  assert.ok(holdsMarker(env, '12-3'));
  assert.ok(!holdsMarker(env, '12-30'));
  assert.ok(!holdsMarker(env, '12'));
});

test('a process left behind with the suite marker is found, named and killed; one that ends in time is not', async (t) => {
  const id = `unit-${process.pid}-${Date.now()}`;
  const spawnMarked = (ms: number) =>
    spawn(process.execPath, ['-e', `setTimeout(() => {}, ${ms})`], {
      detached: true, // a daemon leaves its starter's process group, as a leftover would
      stdio: 'ignore',
      env: { ...process.env, [SUITE_MARKER]: id },
    });
  const stays = spawnMarked(120_000);
  const ends = spawnMarked(500);
  const exited = new Promise((r) => stays.once('exit', (_code, signal) => r(signal)));
  ends.unref();
  t.after(() => stays.kill('SIGKILL')); // should an assertion fail first
  const pids = [stays.pid, ends.pid].sort();
  // Both are found while they run (polled until the new processes are readable).
  const found = () =>
    markedProcesses(id)
      .map((p) => p.pid)
      .sort();
  for (let i = 0; i < 50 && found().length < 2; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(found(), pids);
  const left = await leftoverProcesses(id, 3000);
  assert.deepEqual(
    left.map((p) => p.pid),
    [stays.pid],
    'only the one still running after the grace',
  );
  assert.match(left[0]!.command, /-e setTimeout\(\(\) => \{\}, 120000\)/);
  assert.equal(await exited, 'SIGKILL');
  assert.deepEqual(markedProcesses(id), []);
});
