// `npm test`: set-up (npm packages, apt packages incl. chromium and postgresql, Prisma clients, build), then
// unit tests, integration tests on SQLite and on a throwaway PostgreSQL cluster, and Playwright e2e tests in
// Chromium. `npm test -- lint|unit|integration|sqlite|postgresql|sandbox|model|ray|e2e` runs a subset (sandbox = the no-database
// integration files; model = tests/model/, the real pretrained model; ray = tests/ray/, a real Ray cluster). Ends with "N passed, N failed".
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, setup, log } from './setup.mjs';
import { startPg } from './pg.mjs';
import { inLoopbackNamespace } from './netns.mjs';
import { failureDetails } from './failure-details.mjs';

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const want = (name, group) => wanted.length === 0 || wanted.includes(name) || (group && wanted.includes(group));

function files(dir) {
  const abs = path.join(ROOT, dir);
  if (!fs.existsSync(abs)) return [];
  return fs
    .readdirSync(abs)
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => path.join(dir, f));
}

/** Run a command, echo its output, and count results from its closing lines. */
function runSuite(name, cmd, args, env = {}) {
  return new Promise((resolve) => {
    log(`— ${name} —`);
    const t0 = Date.now();
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const tee = (s, w) =>
      s.on('data', (d) => {
        out += d;
        w.write(d);
      });
    tee(child.stdout, process.stdout);
    tee(child.stderr, process.stderr);
    child.on('exit', (code) => {
      const n = (re) => {
        const m = [...out.matchAll(re)].pop();
        return m ? Number(m[1]) : 0;
      };
      // node --test (spec reporter): "ℹ pass N" / "ℹ fail N"; Playwright: "N passed" / "N failed" / "N flaky".
      const passed = n(/ℹ pass (\d+)/g) + n(/^\s*(\d+) passed/gm) + n(/^\s*(\d+) flaky/gm);
      const failed = n(/ℹ fail (\d+)/g) + n(/^\s*(\d+) failed/gm);
      const ok = code === 0 && failed === 0;
      // A suite that crashed before reporting counts as one failure, so it can never read as green.
      const s = Math.round((Date.now() - t0) / 1000);
      const took = `${Math.floor(s / 60)} min ${s % 60} s`;
      resolve({
        name,
        passed,
        failed: ok ? failed : Math.max(failed, 1),
        ok,
        took,
        why: ok ? '' : failureDetails(out),
      });
    });
  });
}

const nodeTest = (list) => [process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...list]];

try {
  for (const w of setup({ forTests: true })) log(`warning: ${w}`);
} catch (e) {
  console.error(`[test] set-up failed: ${e.message}`);
  process.exit(1);
}

const results = [];
const unit = files('tests/unit');
// Tests that do not touch the database (sandbox, engines, trainer, rollouts) say `@no-database` in their header:
// they run once, not once per database.
const allIntegration = files('tests/integration');
const noDatabase = (f) => fs.readFileSync(path.join(ROOT, f), 'utf8').slice(0, 600).includes('@no-database');
const sandbox = allIntegration.filter(noDatabase);
const integration = allIntegration.filter((f) => !sandbox.includes(f));
// Formatting and lint (Biome, biome.jsonc): a check that never rewrites; `npm run format` applies it.
if (want('lint'))
  results.push(
    await runSuite('format and lint (biome ci)', path.join(ROOT, 'node_modules/.bin/biome'), [
      'ci',
      '--reporter=summary',
      '.',
    ]),
  );
if (want('unit') && unit.length) results.push(await runSuite('unit', ...nodeTest(unit)));
if (want('sqlite', 'integration') && integration.length) {
  results.push(await runSuite('integration (sqlite)', ...nodeTest(integration), { TOOLSMITH_TEST_DIALECT: 'sqlite' }));
}
if (want('postgresql', 'integration') && integration.length) {
  let pg;
  try {
    pg = await startPg();
    log(`PostgreSQL test cluster on 127.0.0.1:${pg.port}`);
    results.push(
      await runSuite('integration (postgresql)', ...nodeTest(integration), {
        TOOLSMITH_TEST_DIALECT: 'postgresql',
        TOOLSMITH_TEST_PG_ADMIN_URL: pg.adminUrl,
      }),
    );
  } catch (e) {
    console.error(`[test] PostgreSQL suite could not run: ${e.message}`);
    results.push({ name: 'integration (postgresql)', passed: 0, failed: 1, ok: false, why: e.message });
  } finally {
    pg?.stop();
  }
}
if ((want('sandbox', 'integration') || want('nodb')) && sandbox.length)
  results.push(await runSuite('integration (no database: sandbox, engines, trainer, rollouts)', ...nodeTest(sandbox)));
// The real model (tests/model/): SmolLM2-135M-Instruct fetched from PyPI by its pins, then served, trained and
// evaluated. Slow (a 135M-parameter model on CPUs): `npm test -- model` runs it alone.
const modelFiles = files('tests/model');
if (want('model') && modelFiles.length)
  results.push(
    await runSuite('real model (SmolLM2-135M from PyPI)', ...nodeTest(['--test-concurrency=1', ...modelFiles])),
  );
// Ray (tests/ray/): each file starts a real Ray cluster (a head and more nodes on this machine, token
// authentication on); the files run inside a network namespace of their own with loopback alone (unshare -n, root),
// so every Ray process registers as 127.0.0.1 and nothing of it is reachable from outside. Slow (a cluster per file):
// `npm test -- ray` runs it alone.
const rayFiles = files('tests/ray');
if (want('ray') && rayFiles.length) {
  // One file at a time whatever the cores: each file's cluster takes the same fixed ports inside the namespace.
  const [node, args] = nodeTest(['--test-concurrency=1', ...rayFiles]);
  results.push(await runSuite('ray (a real cluster in a network namespace)', ...inLoopbackNamespace(node, args)));
}
if (want('e2e') && fs.existsSync(path.join(ROOT, 'e2e'))) {
  results.push(
    await runSuite('e2e (chromium)', path.join(ROOT, 'node_modules/.bin/playwright'), ['test', '--reporter=list']),
  );
}

const passed = results.reduce((s, r) => s + r.passed, 0);
const failed = results.reduce((s, r) => s + r.failed, 0);
console.log('\nsummary:');
for (const r of results)
  console.log(
    `  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.passed} passed, ${r.failed} failed${r.took ? ` (${r.took})` : ''}`,
  );
// After the table, so that a CI log's last lines say why.
for (const r of results.filter((r) => r.why)) console.log(`failures in ${r.name}:\n${r.why}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || results.some((r) => !r.ok) ? 1 : 0);
