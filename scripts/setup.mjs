// Idempotent set-up shared by `npm start` and `npm test`: each step records a hash of its inputs under
// data/.setup/ and is skipped while the inputs are unchanged, so a second run takes seconds.
// Uses only Node's standard library: it runs before node_modules exists.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheEntry } from './build-cache.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAMPS = path.join(ROOT, 'data/.setup');

/** apt packages the runtime needs, and what each is for (printed when they cannot be installed). */
export const RUNTIME_APT = {
  'python3-numpy': 'numpy in the Python sandbox',
  'python3-sympy': 'sympy in the sandbox and the answer verifier',
  'python3-scipy': 'scipy in the sandbox',
  'python3-venv': "the trainer's virtual environment (PyTorch, transformers)",
  bubblewrap: 'isolation of model-written code',
  'python3-seccomp': "the sandbox's system-call filter (libseccomp)",
};
export const TEST_APT = {
  chromium: "end-to-end tests (Playwright drives Debian's Chromium)",
  postgresql: 'the postgresql test part',
  iproute2: 'the Ray tests (`ip link set lo up` in their network namespace)',
};

export function log(msg) {
  console.log(`[setup] ${msg}`);
}

function hashOf(paths) {
  const h = createHash('sha256');
  const walk = (p) => {
    const abs = path.join(ROOT, p);
    if (!fs.existsSync(abs)) return;
    const st = fs.statSync(abs);
    if (st.isDirectory()) {
      for (const f of fs.readdirSync(abs).sort())
        if (!['node_modules', '.next', 'generated'].includes(f)) walk(path.join(p, f));
    } else {
      h.update(p);
      h.update(fs.readFileSync(abs));
    }
  };
  paths.forEach(walk);
  return h.digest('hex');
}

function stamped(name, hash) {
  const f = path.join(STAMPS, name);
  return fs.existsSync(f) && fs.readFileSync(f, 'utf8') === hash;
}
function stamp(name, hash) {
  fs.mkdirSync(STAMPS, { recursive: true });
  fs.writeFileSync(path.join(STAMPS, name), hash);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, {
    cwd: ROOT,
    stdio: opts.quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    env: { ...process.env, ...opts.env },
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    if (opts.quiet) process.stderr.write(`${r.stdout ?? ''}${r.stderr ?? ''}`);
    throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
  }
  return r;
}

export function checkNode() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 20) throw new Error(`Node ${process.versions.node} is too old: install Node 20 or newer`);
}

/** Copy the folder `src` to `dst` (which must not exist) as hard links where both are on one filesystem (seconds for
 *  node_modules' 33,000 files), else as a plain copy. */
function linkTree(src, dst) {
  if (spawnSync('cp', ['-al', src, dst], { stdio: 'ignore' }).status === 0) return;
  fs.rmSync(dst, { recursive: true, force: true });
  run('cp', ['-a', src, dst], { quiet: true });
}

const warn = (m) => log(`warning: ${m}`);

/**
 * npm packages, from package-lock.json. onnxruntime-node's installer would try to download CUDA: skip it. Most of
 * `npm ci`'s time is better-sqlite3 compiling SQLite, so the installed tree is kept in the build cache, keyed by the
 * lock file, Node's version and the platform, and a fresh clone takes it as hard links; an entry is used only while
 * every file has the size and time recorded when it was made (a file changed in place, through any link, fails it).
 */
export function ensureNpm() {
  // The lock file alone decides: editing package.json scripts must not trigger a reinstall.
  const hash = `${hashOf(['package-lock.json'])}:${process.version}:${process.platform}-${process.arch}`;
  const modules = path.join(ROOT, 'node_modules');
  if (stamped('npm', hash) && fs.existsSync(path.join(modules, '.bin/next'))) return;
  const entry = cacheEntry('npm', hash, 'stat');
  if (entry?.ready()) {
    log(`npm packages from the build cache (${entry.dir})…`);
    fs.rmSync(modules, { recursive: true, force: true });
    linkTree(path.join(entry.dir, 'node_modules'), modules);
  } else {
    log('installing npm packages (npm ci)…');
    run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { env: { ONNXRUNTIME_NODE_INSTALL: 'skip' } });
    entry?.save((dir) => linkTree(modules, path.join(dir, 'node_modules')), warn);
  }
  stamp('npm', hash);
}

function dpkgInstalled(pkg) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('install ok installed');
}

/**
 * Install missing apt packages when we can (root + apt-get). Otherwise say what to install and carry on:
 * the parts that need them report it themselves (diagnostics shows a fix for each).
 */
export function ensureApt(packages) {
  const hasDpkg = spawnSync('dpkg-query', ['--version']).status === 0;
  if (!hasDpkg) {
    log(
      `no dpkg here: make sure these are installed: ${Object.entries(packages)
        .map(([p, why]) => `${p} (${why})`)
        .join(', ')}`,
    );
    return Object.keys(packages);
  }
  const missing = Object.keys(packages).filter((p) => !dpkgInstalled(p));
  if (missing.length === 0) return [];
  const canApt = process.getuid?.() === 0 && spawnSync('apt-get', ['--version']).status === 0;
  if (!canApt) {
    log(`missing apt packages: ${missing.map((p) => `${p} (${packages[p]})`).join(', ')}`);
    log(`install them with: sudo apt-get install -y ${missing.join(' ')}  — continuing without them`);
    return missing;
  }
  log(`installing apt packages: ${missing.join(' ')}…`);
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  try {
    run('apt-get', ['update', '-qq'], { env, quiet: true });
    run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env, quiet: true });
  } catch (e) {
    log(`apt-get could not install ${missing.join(' ')}: ${e.message}; continuing without them`);
    return missing.filter((p) => !dpkgInstalled(p));
  }
  return [];
}

export function ensurePrismaClients() {
  const hash = hashOf(['prisma/schema.prisma', 'scripts/prisma-generate.mjs', 'package-lock.json']);
  if (stamped('prisma', hash) && fs.existsSync(path.join(ROOT, 'server/db/generated/postgresql/client.ts'))) return;
  log('generating Prisma clients…');
  run(process.execPath, ['scripts/prisma-generate.mjs'], { quiet: true });
  stamp('prisma', hash);
}

/**
 * The web app's production build (.next), from the sources it is built from. Kept in the build cache too, keyed by a
 * hash of those sources and Node's version, so a second clone of the same commit skips `next build`; an entry is used
 * only when every file matches its SHA-256. The build names its folder in two files (required-server-files): they are
 * rewritten for the clone that takes it. Next's own compiler cache (.next/cache) is not kept.
 */
export function ensureBuild() {
  const sources = hashOf([
    'app',
    'components',
    'contracts',
    'lib',
    'server',
    'public',
    'proxy.ts',
    'next.config.js',
    'tsconfig.json',
    'package-lock.json',
    'prisma/schema.prisma',
  ]);
  const hash = `${sources}:${process.version}`;
  const built = path.join(ROOT, '.next');
  if (stamped('build', hash) && fs.existsSync(path.join(built, 'BUILD_ID'))) return;
  const entry = cacheEntry('next', hash);
  if (entry?.ready()) {
    log(`the web app's build from the build cache (${entry.dir})…`);
    fs.rmSync(built, { recursive: true, force: true });
    fs.cpSync(path.join(entry.dir, 'next'), built, { recursive: true, verbatimSymlinks: true });
    const builtIn = fs.readFileSync(path.join(entry.dir, 'root'), 'utf8');
    for (const f of ['required-server-files.json', 'required-server-files.js']) {
      const file = path.join(built, f);
      if (fs.existsSync(file)) fs.writeFileSync(file, fs.readFileSync(file, 'utf8').split(builtIn).join(ROOT));
    }
  } else {
    log('building the web app (next build)…');
    run(path.join(ROOT, 'node_modules/.bin/next'), ['build'], { quiet: true, env: { NEXT_TELEMETRY_DISABLED: '1' } });
    entry?.save((dir) => {
      const compilerCache = path.join(built, 'cache');
      fs.cpSync(built, path.join(dir, 'next'), {
        recursive: true,
        verbatimSymlinks: true,
        filter: (src) => src !== compilerCache,
      });
      fs.writeFileSync(path.join(dir, 'root'), ROOT);
    }, warn);
  }
  stamp('build', hash);
}

/** Apply migrations through the CLI (the same code the worker runs); prints its one-line result. */
export function migrate() {
  const r = spawnSync(process.execPath, ['bin/toolsmith.mjs', 'migrate'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) {
    const err = new Error((r.stderr || r.stdout).trim().split('\n')[0]);
    err.userFacing = true;
    throw err;
  }
  log(r.stdout.trim());
}

/** Where set-up keeps the trainer's interpreter (the sandbox's stays Debian's /usr/bin/python3, outside the project). */
export const VENV = path.join(ROOT, '.venv');
const TRAINER_REQUIREMENTS = 'workers/trainer/requirements.txt';
/** Exports' packages (Trackio), installed into the same environment; apart so that the SFT fixture's key ignores them. */
const EXPORT_REQUIREMENTS = 'workers/imports/requirements-export.txt';

/** Which torch build this machine wants: NVIDIA → PyPI's (CUDA) wheel, AMD → ROCm, otherwise CPU. */
function accelerator() {
  if (spawnSync('nvidia-smi', ['-L'], { stdio: 'ignore' }).status === 0) return 'cuda';
  if (fs.existsSync('/dev/kfd') || spawnSync('rocm-smi', [], { stdio: 'ignore' }).status === 0) return 'rocm';
  return 'cpu';
}

/** The interpreter the venv is made from: TOOLSMITH_VENV_PYTHON, Debian's python3 (with python3-venv), or python3. */
function venvBase() {
  const candidates = [process.env.TOOLSMITH_VENV_PYTHON, '/usr/bin/python3', 'python3'].filter(Boolean);
  return candidates.find(
    (p) =>
      spawnSync(p, ['-c', 'import venv, ensurepip, sys; assert sys.version_info >= (3, 10)'], { stdio: 'ignore' })
        .status === 0,
  );
}

/**
 * The trainer's virtual environment from workers/trainer/requirements.txt and workers/imports/requirements-export.txt:
 * built once per machine in the build cache (scripts/build-cache.mjs; a folder named by the hash of the files, the
 * accelerator and the torch index), and
 * `.venv` a link to it, so that a fresh clone's set-up takes seconds; re-created when an input changes. An entry is
 * used only when it was completed and its packages import. Returns a warning (one line saying what to do) or null.
 */
export function ensureTrainerVenv() {
  const acc = accelerator();
  const index = process.env.TOOLSMITH_TORCH_INDEX_URL?.trim() || '';
  const hash = `${hashOf([TRAINER_REQUIREMENTS, EXPORT_REQUIREMENTS])}:${acc}:${index}`;
  if (stamped('venv', hash) && fs.existsSync(path.join(VENV, 'bin/python'))) return null;
  // Checked by its completion and its imports: a Python environment writes its own byte code as it is used.
  const entry = cacheEntry('venv', hash, 'complete');
  const target = entry?.dir ?? VENV;
  if (!entry) log('no build cache: the environment is built inside the project');
  const python = path.join(target, 'bin/python');
  const imports = ['-c', 'import torch, transformers, safetensors, peft, onnx, ray'];
  const reusable = entry?.ready() && spawnSync(python, imports, { stdio: 'ignore' }).status === 0;
  if (!reusable) {
    const base = venvBase(); // only when building: it starts up to three interpreters
    if (!base)
      return 'no Python 3.10+ with venv and pip for the trainer — install it with: apt-get install -y python3-venv (or set TOOLSMITH_VENV_PYTHON)';
    if (acc === 'rocm' && !index)
      return 'an AMD GPU is present but TOOLSMITH_TORCH_INDEX_URL is not set — point it at the PyTorch ROCm wheel index to get the ROCm build, then run set-up again';
    log(`creating the trainer's Python environment (${target}, torch for ${acc}; about a minute)…`);
    if (entry) entry.begin();
    else fs.rmSync(target, { recursive: true, force: true });
    try {
      run(base, ['-m', 'venv', target], { quiet: true });
      const extra = index ? ['--extra-index-url', index] : [];
      run(
        python,
        [
          '-m',
          'pip',
          'install',
          '--disable-pip-version-check',
          '-q',
          '-r',
          path.join(ROOT, TRAINER_REQUIREMENTS),
          '-r',
          path.join(ROOT, EXPORT_REQUIREMENTS),
          ...extra,
        ],
        { quiet: true },
      );
      run(python, imports, { quiet: true });
    } catch (e) {
      return `the trainer's Python environment could not be built (${e.message}) — check that pip reaches PyPI, then run: node scripts/setup.mjs`;
    }
    entry?.seal();
  }
  if (entry) {
    fs.rmSync(VENV, { recursive: true, force: true });
    fs.symlinkSync(target, VENV);
  }
  stamp('venv', hash);
  return null;
}

const SANDBOX_REQUIREMENTS = 'workers/reward/requirements-sandbox.txt';

/**
 * Math-Verify for the sandbox's interpreter (/usr/bin/python3 or TOOLSMITH_PYTHON), from
 * workers/reward/requirements-sandbox.txt into that interpreter's local site folder (/usr/local/lib/python3.X/
 * dist-packages): on its sys.path and inside the sandbox's minimal root, with no project path to bind. Installed
 * with the trainer venv's pip (Debian's python3 has none), hashes required, no dependencies. Returns a warning or null.
 */
export function ensureSandboxPackages() {
  const python = process.env.TOOLSMITH_PYTHON ?? '/usr/bin/python3';
  const hash = `${hashOf([SANDBOX_REQUIREMENTS])}:${python}`;
  if (stamped('sandbox-python', hash) && missingPythonModules(['math_verify']).length === 0) return null;
  const pip = path.join(VENV, 'bin/python');
  if (!fs.existsSync(pip))
    return "Math-Verify was not installed for the sandbox (the trainer's Python environment, whose pip installs it, is missing) — the verifier's last step is off until set-up runs again";
  try {
    const site = run(python, ['-I', '-c', 'import site; print(site.getsitepackages()[0])'], {
      quiet: true,
    }).stdout.trim();
    log(`installing Math-Verify for the sandbox's ${python} into ${site}…`);
    fs.mkdirSync(site, { recursive: true });
    run(
      pip,
      [
        '-m',
        'pip',
        'install',
        '--disable-pip-version-check',
        '-q',
        '--no-deps',
        '--require-hashes',
        '--upgrade',
        '--target',
        site,
        '-r',
        path.join(ROOT, SANDBOX_REQUIREMENTS),
      ],
      { quiet: true },
    );
  } catch (e) {
    return `Math-Verify could not be installed for the sandbox (${e.message}) — check that pip reaches PyPI, then run: node scripts/setup.mjs`;
  }
  if (missingPythonModules(['math_verify']).length)
    return `Math-Verify was installed but ${python} does not find it — the verifier's last step is off`;
  stamp('sandbox-python', hash);
  return null;
}

/** Does /usr/bin/python3 (or TOOLSMITH_PYTHON) find these modules? Fast: find_spec does not import them. */
export function missingPythonModules(modules = ['numpy', 'sympy', 'scipy', 'seccomp']) {
  const python = process.env.TOOLSMITH_PYTHON ?? '/usr/bin/python3';
  if (!fs.existsSync(python)) return modules;
  const r = spawnSync(
    python,
    [
      '-c',
      `import importlib.util as u; print(",".join(m for m in ${JSON.stringify(modules)} if u.find_spec(m) is None))`,
    ],
    { encoding: 'utf8' },
  );
  return r.status === 0 ? r.stdout.trim().split(',').filter(Boolean) : modules;
}

/**
 * chmod -R go-rwx on the data folder (and a models folder kept elsewhere): what an older version, a copy or another
 * umask left readable to other accounts (the database holds password hashes) becomes owner-only. Idempotent; a stat
 * per file, and a chmod only where a group/other bit is set. Returns how many paths it changed.
 */
export function tightenDataDir(
  dirs = [process.env.TOOLSMITH_DATA_DIR ?? path.join(ROOT, 'data'), process.env.TOOLSMITH_MODELS_DIR].filter(Boolean),
) {
  let changed = 0;
  const walk = (p) => {
    let st;
    try {
      st = fs.lstatSync(p);
    } catch {
      return;
    }
    if (st.isSymbolicLink()) return; // chmod would follow it
    if (st.mode & 0o077) {
      fs.chmodSync(p, st.mode & 0o7700);
      changed++;
    }
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  for (const d of dirs) walk(path.resolve(ROOT, d));
  if (changed) log(`made ${changed} path(s) in the data folder owner-only (chmod go-rwx)`);
  return changed;
}

/** Everything `npm start` needs. Returns warnings to show once the app is up. */
export function setup({ forTests = false } = {}) {
  checkNode();
  tightenDataDir();
  const t0 = Date.now();
  // Where set-up's time went, for the steps that took a second or more (a fresh clone's first run).
  const took = [];
  const timed = (name, step) => {
    const t = Date.now();
    const result = step();
    const s = (Date.now() - t) / 1000;
    if (s >= 1) took.push(`${name} ${s.toFixed(0)} s`);
    return result;
  };
  timed('npm', ensureNpm);
  const missingApt = timed('apt', () => ensureApt(forTests ? { ...RUNTIME_APT, ...TEST_APT } : RUNTIME_APT));
  timed('prisma', ensurePrismaClients);
  timed('build', ensureBuild);
  const warnings = [];
  const venv = timed('venv', ensureTrainerVenv);
  if (venv) warnings.push(venv);
  const mathVerify = timed('math-verify', ensureSandboxPackages);
  if (mathVerify) warnings.push(mathVerify);
  const missingPy = missingPythonModules();
  if (missingPy.length) {
    warnings.push(
      `Python modules missing for ${process.env.TOOLSMITH_PYTHON ?? '/usr/bin/python3'}: ${missingPy.join(', ')} — install with: apt-get install -y ${missingPy.map((m) => `python3-${m}`).join(' ')}`,
    );
  }
  if (missingApt.includes('bubblewrap'))
    warnings.push(
      'bubblewrap is missing: the sandbox will refuse to run model code — install with: apt-get install -y bubblewrap',
    );
  log(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s${took.length ? ` (${took.join(', ')})` : ''}`);
  return warnings;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const warnings = setup({ forTests: process.argv.includes('--tests') });
    for (const w of warnings) log(`warning: ${w}`);
  } catch (e) {
    console.error(`[setup] ${e.message}`);
    process.exit(1);
  }
}
