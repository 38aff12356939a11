import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';
import { crashDetails } from '../../scripts/failure-details.mjs';
import { playwrightFileTimes, slowestFiles } from '../../scripts/file-times.mjs';
import { PART_MARKER, holdsMarker, leftoverProcesses, markedProcesses } from '../../scripts/leftovers.mjs';
import { GROUPS, PARTS, partsWanted } from '../../scripts/test-parts.mjs';

/** What `npm test` adds to its summary: the slowest files, a crashed part's last lines, processes left running. */

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

test('the slowest files over every part, a file run by two parts once per part', () => {
  const slow = slowestFiles(
    [
      {
        part: 'sqlite',
        files: [
          { file: 'x.test.ts', ms: 5 },
          { file: 'y.test.ts', ms: 50 },
        ],
      },
      { part: 'postgresql', files: [{ file: 'x.test.ts', ms: 7 }] },
      { part: 'unit', files: [] },
    ],
    2,
  );
  assert.deepEqual(slow, [
    { part: 'sqlite', file: 'y.test.ts', ms: 50 },
    { part: 'postgresql', file: 'x.test.ts', ms: 7 },
  ]);
});

test('a part that crashed says how it ended and shows its last lines', () => {
  const out = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
  const why = crashDetails(out, null, 'SIGKILL');
  assert.match(why, /ended \(signal SIGKILL\) without naming a failed test/);
  assert.ok(why.includes('line 29') && why.includes('line 15') && !why.includes('line 14\n'));
  assert.match(crashDetails('boom', 3, null), /exit code 3/);
});

test('the marker is matched as a whole variable', () => {
  const env = ['PATH=/bin', `${PART_MARKER}=12-3`, 'X=1'].join('\0');
  assert.ok(holdsMarker(env, '12-3'));
  assert.ok(!holdsMarker(env, '12-30'));
  assert.ok(!holdsMarker(env, '12'));
});

test('a process left behind with the part marker is found, named and killed; one that ends in time is not', async (t) => {
  // Two markers, so that neither half depends on how fast a busy machine runs the processes: the one that ends is
  // told to end once its grace has begun, and the grace waits for it (polled; a generous bound, over as soon as it has
  // gone); the one that stays runs for two minutes, far past its short grace.
  const id = `unit-${process.pid}-${Date.now()}`;
  const spawnMarked = (marker: string, code: string, stdin: 'ignore' | 'pipe') =>
    spawn(process.execPath, ['-e', code], {
      detached: true, // a daemon leaves its starter's process group, as a leftover would
      stdio: [stdin, 'ignore', 'ignore'],
      env: { ...process.env, [PART_MARKER]: marker },
    });
  const stays = spawnMarked(`${id}-stays`, 'setTimeout(() => {}, 120000)', 'ignore');
  // Ends when its stdin closes, and not before.
  const ends = spawnMarked(`${id}-ends`, "process.stdin.on('data', () => {}).on('end', () => process.exit(0))", 'pipe');
  const exited = new Promise((r) => stays.once('exit', (_code, signal) => r(signal)));
  const endsExited = new Promise((r) => ends.once('exit', (code) => r(code)));
  t.after(() => {
    stays.kill('SIGKILL'); // should an assertion fail first
    ends.kill('SIGKILL');
  });
  // Each is found while it runs (polled until the new process has exec'd and its environment is readable: it must
  // come, so the bound is only a failure bound).
  const found = (marker: string) => markedProcesses(marker).map((p) => p.pid);
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    if (found(`${id}-stays`).length > 0 && found(`${id}-ends`).length > 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(found(`${id}-stays`), [stays.pid]);
  assert.deepEqual(found(`${id}-ends`), [ends.pid]);
  // The grace begins with a look at the processes (still running: the one that ends has not been told yet).
  const ending = leftoverProcesses(`${id}-ends`, 60_000);
  ends.stdin!.end();
  assert.deepEqual(await ending, [], 'a process that ends in the grace is no leftover');
  assert.equal(await endsExited, 0, 'it ended by itself, not killed');
  const left = await leftoverProcesses(`${id}-stays`, 200);
  assert.deepEqual(
    left.map((p) => p.pid),
    [stays.pid],
    'the one still running after the grace',
  );
  assert.match(left[0]!.command, /-e setTimeout\(\(\) => \{\}, 120000\)/);
  assert.equal(await exited, 'SIGKILL');
  assert.deepEqual(markedProcesses(`${id}-stays`), []);
});

test('each part has one name: the word that runs it, its tag and its summary line; an unknown word is refused', () => {
  const names = PARTS.map((p) => p.name);
  assert.equal(new Set(names).size, names.length, 'no two parts share a name');
  assert.deepEqual([...partsWanted([])], names, 'no word: every part');
  assert.deepEqual([...partsWanted(['no-database', 'unit'])].sort(), ['no-database', 'unit']);
  assert.deepEqual([...partsWanted(['integration'])], ['sqlite', 'postgresql', 'no-database', 'alone']);
  for (const group of Object.values(GROUPS)) for (const n of group) assert.ok(names.includes(n), n);
  // The no-database part once answered to four names (sandbox, nodb, no-db and its title): the old words are refused.
  for (const old of ['sandbox', 'nodb', 'no-db', 'load'])
    assert.throws(() => partsWanted([old]), new RegExp(`no test part named "${old}" \\(one of: lint, unit, `));
  // The runner names each part only through these: no other part name is written in it.
  const runner = fs.readFileSync('scripts/test.mjs', 'utf8');
  const calls = [...runner.matchAll(/\bpart\('([^']+)'/g)].map((m) => m[1]);
  assert.deepEqual([...calls].sort(), [...names].sort(), 'every part declared once, by its name');
});
