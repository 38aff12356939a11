import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Database } from '../../server/db/client.ts';
import { redact } from '../../server/db/url.ts';
import { countAppliedMigrations, pingDatabase } from '../../server/store/health.ts';
import { config } from '../../server/config.ts';
import type { SandboxPool } from '../sandbox/pool.ts';
import { trainerPython } from '../trainer/python.ts';

/**
 * Environment checks the other parts of Toolsmith depend on. Each returns a status and, when it is not ok,
 * the one command or setting that fixes it.
 */
import type { CheckResult, CheckStatus, DiagnosticsReport } from '../../contracts/events.ts';
import { mkdirPrivate } from '../../server/db/private-files.ts';

type Check = { name: string; run: () => Promise<Omit<CheckResult, 'name' | 'ms'>> };

const APT = 'apt-get install -y';

function exec(
  file: string,
  args: string[],
  timeoutMs = 20000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { timeout: timeoutMs, env: { PATH: '/usr/bin:/bin', HOME: os.tmpdir() } as unknown as NodeJS.ProcessEnv },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : -1
          : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr || (err && code === -1 ? err.message : '')) });
      },
    );
  });
}

export const PYTHON_PACKAGES: { module: string; needed: string; apt?: string; fix?: string }[] = [
  { module: 'numpy', apt: 'python3-numpy', needed: 'sandbox' },
  { module: 'sympy', apt: 'python3-sympy', needed: 'sandbox and verifier' },
  { module: 'scipy', apt: 'python3-scipy', needed: 'sandbox' },
  { module: 'seccomp', apt: 'python3-seccomp', needed: "sandbox's syscall filter" },
  {
    module: 'math_verify',
    needed: "verifier's last step (Math-Verify)",
    fix: 'node scripts/setup.mjs (installs workers/reward/requirements-sandbox.txt for this interpreter)',
  },
];

/** The processes a check starts, assembled by the caller (the diagnostics job, the CLI). */
export interface CheckDeps {
  startSandboxPool: () => Promise<SandboxPool>;
}

// One piece: the table of checks in the order `npx toolsmith diagnostics` runs and prints them, each a name and its probe.
export function checks(db: Database, deps: CheckDeps): Check[] {
  const python = config().python;
  return [
    {
      name: 'python',
      run: async () => {
        if (!fs.existsSync(python))
          return { status: 'fail', detail: `${python} not found`, fix: `${APT} python3 (or set TOOLSMITH_PYTHON)` };
        const r = await exec(python, ['-c', 'import sys; print(sys.version.split()[0])']);
        return r.code === 0
          ? { status: 'ok', detail: `${python} ${r.stdout.trim()}` }
          : { status: 'fail', detail: r.stderr.trim().split('\n').pop() ?? 'python failed', fix: `${APT} python3` };
      },
    },
    ...PYTHON_PACKAGES.map(
      (p): Check => ({
        name: `python:${p.module}`,
        run: async () => {
          // Not every module has a __version__ (seccomp, math_verify): then its distribution's, or just that it imports.
          const r = await exec(
            python,
            [
              '-c',
              `import importlib.metadata as m, ${p.module}\ntry: print(${p.module}.__version__)\nexcept AttributeError:\n  try: print(m.version('${p.module.replace('_', '-')}'))\n  except Exception: print('(no version)')`,
            ],
            60000,
          );
          if (r.code === 0) return { status: 'ok', detail: `${p.module} ${r.stdout.trim()}` };
          return {
            status: 'fail',
            detail: `${p.module} cannot be imported by ${python} (needed by the ${p.needed})`,
            fix: p.fix ?? `${APT} ${p.apt}`,
          };
        },
      }),
    ),
    {
      // The trainer runs in its own virtual environment (workers/trainer/requirements.txt), not the sandbox's Python.
      name: 'trainer python',
      run: async () => {
        const py = trainerPython();
        if (!fs.existsSync(py))
          return {
            status: 'fail',
            detail: `${py} not found`,
            fix: "run node scripts/setup.mjs (it builds the trainer's virtual environment)",
          };
        const r = await exec(
          py,
          [
            '-c',
            'import torch, transformers; print(f"torch {torch.__version__}, transformers {transformers.__version__}, cuda {torch.cuda.is_available()}")',
          ],
          120000,
        );
        if (r.code === 0) return { status: 'ok', detail: `${py}: ${r.stdout.trim()}` };
        return {
          status: 'fail',
          detail: `the trainer's Python cannot import torch and transformers: ${r.stderr.trim().split('\n').pop() ?? ''}`,
          fix: 'run node scripts/setup.mjs again',
        };
      },
    },
    {
      name: 'bubblewrap',
      run: async () => {
        const bwrap = ['/usr/bin/bwrap', '/bin/bwrap'].find((f) => fs.existsSync(f));
        if (!bwrap)
          return {
            status: 'fail',
            detail: 'bwrap not installed (the sandbox needs it for isolation)',
            fix: `${APT} bubblewrap`,
          };
        // The same isolation the sandbox uses: no network, read-only root, private /tmp, nobody user.
        const r = await exec(bwrap, [
          '--ro-bind',
          '/',
          '/',
          '--tmpfs',
          '/tmp',
          '--proc',
          '/proc',
          '--dev',
          '/dev',
          '--unshare-all',
          '--die-with-parent',
          '--uid',
          '65534',
          '--gid',
          '65534',
          '--',
          python,
          '-c',
          'import socket,os; print(len(socket.if_nameindex()), os.getuid())',
        ]);
        if (r.code !== 0)
          return {
            status: 'fail',
            detail: `bwrap could not start an isolated process: ${r.stderr.trim().split('\n')[0]}`,
            fix: 'run as root, or enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)',
          };
        const [ifaces, uid] = r.stdout.trim().split(/\s+/);
        return { status: 'ok', detail: `isolated: ${ifaces} network interface (loopback only), uid ${uid}` };
      },
    },
    {
      name: 'sandbox',
      run: async () => {
        // A real call through the real pool: isolation, the warm interpreter and the fork per call.
        let pool;
        try {
          pool = await deps.startSandboxPool();
        } catch (e) {
          return {
            status: 'fail',
            detail: (e as Error).message.split(' — ')[0],
            fix: (e as { fix?: string }).fix ?? 'see npx toolsmith diagnostics',
          };
        }
        try {
          const r = await pool.run({
            code: 'import socket, os\ntry:\n    socket.create_connection(("1.1.1.1", 53), timeout=1); net = "network reachable"\nexcept OSError:\n    net = "no network"\nprint(2 + 2, net, os.getuid())',
          });
          if (r.status !== 'ok' || !r.stdout.startsWith('4 no network'))
            return {
              status: 'fail',
              detail: `sandbox call returned ${r.status}: ${(r.stdout + r.stderr).trim().slice(0, 200)}`,
              fix: 'check bubblewrap (apt-get install -y bubblewrap)',
            };
          return {
            status: pool.opts.unsafe ? 'warn' : 'ok',
            detail: `call ok in ${r.durationMs.toFixed(1)} ms, ${r.stdout.trim().split(' ').slice(1).join(' ')}${pool.opts.unsafe ? ' — UNSAFE mode, no isolation' : ', isolated'}`,
          };
        } finally {
          await pool.close();
        }
      },
    },
    {
      name: 'onnxruntime-node',
      run: async () => {
        try {
          const ort = await import('onnxruntime-node');
          const version =
            (ort as unknown as { env?: { versions?: Record<string, string> } }).env?.versions?.node ?? 'loaded';
          return { status: 'ok', detail: `onnxruntime-node ${version} (CPU execution provider)` };
        } catch (e) {
          return {
            status: 'fail',
            detail: `onnxruntime-node does not load: ${(e as Error).message.split('\n')[0]}`,
            fix: 'ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30.0',
          };
        }
      },
    },
    {
      name: 'database',
      run: async () => {
        const t0 = performance.now();
        await pingDatabase(db);
        const ms = performance.now() - t0;
        const migrations = await countAppliedMigrations(db);
        return {
          status: 'ok',
          detail: `${db.dialect} at ${redact(db.url)}; ${migrations} migration(s) applied; round trip ${ms.toFixed(1)} ms`,
        };
      },
    },
    {
      name: 'disk',
      run: async () => {
        const dir = config().dataDir;
        mkdirPrivate(dir);
        const s = await fs.promises.statfs(dir);
        const freeGiB = (s.bavail * s.bsize) / 2 ** 30;
        const detail = `${freeGiB.toFixed(1)} GiB free under ${path.resolve(dir)}`;
        if (freeGiB < 1)
          return { status: 'fail', detail, fix: 'free disk space or set TOOLSMITH_DATA_DIR to a larger disk' };
        if (freeGiB < 5)
          return { status: 'warn', detail, fix: 'checkpoints and trajectories need room: free some disk space' };
        return { status: 'ok', detail };
      },
    },
    {
      name: 'cores',
      run: async () => {
        const cores = os.availableParallelism();
        const memGiB = os.totalmem() / 2 ** 30;
        const detail = `${cores} cores, ${memGiB.toFixed(1)} GiB memory (the sandbox pool defaults to one interpreter per core)`;
        return cores < 2
          ? { status: 'warn', detail, fix: 'rollouts and tool calls share one core: expect slow runs' }
          : { status: 'ok', detail };
      },
    },
  ];
}

/** Run every check, reporting each as it finishes. A check that throws is a failed check, not a failed run. */
export async function runChecks(
  db: Database,
  deps: CheckDeps,
  onResult?: (r: CheckResult, index: number) => Promise<void> | void,
): Promise<DiagnosticsReport> {
  const results: CheckResult[] = [];
  for (const [i, c] of checks(db, deps).entries()) {
    const t0 = performance.now();
    let r: Omit<CheckResult, 'name' | 'ms'>;
    try {
      r = await c.run();
    } catch (e) {
      r = { status: 'fail', detail: (e as Error).message.split('\n')[0], fix: 'see the worker log' };
    }
    const result = { name: c.name, ...r, ms: Math.round((performance.now() - t0) * 10) / 10 };
    results.push(result);
    await onResult?.(result, i);
  }
  return {
    at: new Date().toISOString(),
    host: os.hostname(),
    ok: results.every((r) => r.status !== 'fail'),
    checks: results,
  };
}
