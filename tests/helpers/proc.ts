import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/toolsmith.mjs');

/**
 * How long waitFor and waitReady wait by default. The wait only bounds something that must come (a test asserts the
 * condition, never how soon it came), so it is generous: with both cores busy, things take many times as long.
 */
const WAIT_FOR_MS = 60_000;

/** Poll `fn` until it returns something truthy; fail with `what` (and `detail()`) after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false | 0 | ''> | T | null | undefined | false | 0 | '',
  opts: { timeoutMs?: number; intervalMs?: number; detail?: () => string } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? WAIT_FOR_MS);
  for (;;) {
    const v = await fn();
    if (v) return v as T;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${opts.timeoutMs ?? WAIT_FOR_MS} ms waiting for ${what}${opts.detail ? `\n${opts.detail()}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}

/** The environment for a child: ours minus anything Toolsmith reads, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('TOOLSMITH_') && k !== 'DATABASE_URL') base[k] = v;
  return { ...base, ...env } as NodeJS.ProcessEnv;
}

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  output(): string;
  /** Resolves when the process has exited (immediately if it already has). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
}

const live = new Set<Proc>();

function track(name: string, child: ChildProcess): Proc {
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  const p: Proc = { name, child, pid: child.pid!, output: () => out, exited, alive: () => !done };
  live.add(p);
  exited.then(() => live.delete(p));
  return p;
}

/** Run `npx toolsmith <args> | cat` to completion: its output through a real pipe into another program. */
export async function runCliPiped(args: string[], env: Record<string, string>, timeoutMs = 60000) {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('bash', ['-o', 'pipefail', '-c', `${quoted} | cat`], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const p = track(`toolsmith ${args.join(' ')} | cat`, child);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const { code, signal } = await p.exited;
  clearTimeout(timer);
  return { code, signal, stdout, stderr };
}

/** Run `npx toolsmith <args>` to completion. */
export async function runCli(args: string[], env: Record<string, string>, timeoutMs = 60000) {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const p = track(`toolsmith ${args.join(' ')}`, child);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const { code, signal } = await p.exited;
  clearTimeout(timer);
  return { code, signal, stdout, stderr };
}

/** Start a long-running `npx toolsmith <args>` (e.g. serve-model); killAll() stops it. */
export function startCli(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return track(`toolsmith ${args.join(' ')}`, child);
}

let dataDir: string | undefined;

export interface WorkerSettings {
  leaseSeconds?: number;
  heartbeatSeconds?: number;
  pollMs?: number;
  graceSeconds?: number;
  env?: Record<string, string>;
}

/** Start a real worker process (`toolsmith worker`) with the test-only job kinds and a short lease. */
export function spawnWorker(databaseUrl: string, id: string, s: WorkerSettings = {}): Proc {
  dataDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-worker-data-'));
  const env = {
    DATABASE_URL: databaseUrl,
    TOOLSMITH_WORKER_ID: id,
    TOOLSMITH_LEASE_SECONDS: String(s.leaseSeconds ?? 2),
    TOOLSMITH_HEARTBEAT_SECONDS: String(s.heartbeatSeconds ?? 0.5),
    TOOLSMITH_POLL_MS: String(s.pollMs ?? 100),
    TOOLSMITH_SHUTDOWN_GRACE_SECONDS: String(s.graceSeconds ?? 5),
    TOOLSMITH_TEST_JOBS: '1',
    TOOLSMITH_DATA_DIR: dataDir,
    ...s.env,
  };
  const child = spawn(process.execPath, [BIN, 'worker'], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return track(`worker ${id}`, child);
}

/** Wait for a worker's "ready" line. */
export function waitReady(p: Proc, timeoutMs = WAIT_FOR_MS) {
  return waitFor(
    `${p.name} to be ready`,
    () => {
      if (!p.alive()) throw new Error(`${p.name} exited before it was ready:\n${p.output()}`);
      return /\] ready \(/.test(p.output());
    },
    { timeoutMs, intervalMs: 50 },
  );
}

/** SIGKILL every process these helpers started that is still running, and wait for them to go. */
export async function killAll(): Promise<void> {
  const procs = [...live];
  for (const p of procs) if (p.alive()) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
}

/** Every live worker's output, for failure messages. */
export function outputs(procs: Proc[]): string {
  return procs
    .map(
      (p) => `--- ${p.name} (${p.alive() ? 'running' : 'exited'}) ---\n${p.output().split('\n').slice(-40).join('\n')}`,
    )
    .join('\n');
}

export interface HostProcess {
  uid: number;
  pid: number;
  ppid: number;
  args: string;
}

/** Every process on the host, from ps. */
export function ps(): HostProcess[] {
  return execFileSync('ps', ['-eo', 'uid=,pid=,ppid=,args='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => {
      const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(l)!;
      return { uid: Number(m[1]), pid: Number(m[2]), ppid: Number(m[3]), args: m[4] };
    });
}

/** Processes below `root` (children, grandchildren, ...), not `root` itself: so a test sees only its own pool. */
export function descendants(root = process.pid, all = ps()): HostProcess[] {
  const out = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all)
      if (out.has(p.ppid) && !out.has(p.pid)) {
        out.add(p.pid);
        grew = true;
      }
  }
  return all.filter((p) => p.pid !== root && out.has(p.pid));
}
