// `npm start`: set up (idempotent), migrate, then serve the web app and one worker until Ctrl-C.
// `node scripts/start.mjs --serve-only` skips set-up (the e2e tests use it on a build they made).
// A worker that dies is restarted with back-off (scripts/supervisor.mjs) and recorded for the System page; the web
// server dying stops everything (the worker would be unreachable to its users, and the start script exits non-zero).
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { ROOT, setup, migrate, log } from './setup.mjs';
import { createRecord, nextDelay } from './supervisor.mjs';

const serveOnly = process.argv.includes('--serve-only');
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';

function fail(line) {
  console.error(`toolsmith: ${line}`);
  process.exit(1);
}

if (!Number.isInteger(port) || port <= 0 || port > 65535)
  fail(`PORT=${process.env.PORT} is not a port number — use e.g. PORT=3000`);

function portFree(p, h) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', (e) => resolve(e.code === 'EADDRINUSE' ? false : true));
    srv.listen(p, h, () => srv.close(() => resolve(true)));
  });
}

let warnings = [];
try {
  if (!serveOnly) warnings = setup();
  // From here on everything written (the database, run data, checkpoints) is owner-only, in this process and in
  // the web server and worker it starts (server/db/private-files.ts); set-up's own files keep the usual modes.
  process.umask(0o077);
  migrate();
} catch (e) {
  fail(e.userFacing ? e.message.replace(/^toolsmith migrate: /, '') : `set-up failed: ${e.message}`);
}
if (!(await portFree(port, host)))
  fail(
    `port ${port} on ${host} is already in use (another Toolsmith?) — stop that process or choose another port: PORT=${port + 1} npm start`,
  );

const children = new Map();
let stopping = false;
const dataDir = path.resolve(ROOT, process.env.TOOLSMITH_DATA_DIR ?? 'data');
const record = createRecord(dataDir, process.pid);

/** Start a child; `onExit` decides what its death means (the web's stops everything; the worker's restarts it). */
function launch(name, args, env = {}, onExit = null) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = (stream, out) => {
    let buf = '';
    stream.on('data', (d) => {
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop();
      for (const l of lines) out.write(`[${name}] ${l}\n`);
    });
  };
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping && onExit) onExit(code, signal);
    else if (!stopping) {
      console.error(`toolsmith: the ${name} process exited (${signal ?? `code ${code}`}); stopping`);
      shutdown(1);
    } else if (children.size === 0) process.exit(exitCode);
  });
  children.set(name, child);
  return child;
}

const WORKER_ARGS = [path.join(ROOT, 'bin/toolsmith.mjs'), 'worker'];
let workerDelay = null;
let restartTimer = null;

function startWorker() {
  restartTimer = null;
  if (stopping) return;
  const startedAt = Date.now();
  const child = launch('worker', WORKER_ARGS, {}, (code, signal) => {
    const ranMs = Date.now() - startedAt;
    workerDelay = nextDelay(workerDelay, ranMs);
    const exit = signal ?? `code ${code}`;
    console.error(
      `toolsmith: the worker (pid ${child.pid}) exited (${exit}) after ${Math.round(ranMs / 1000)} s; restarting it in ${workerDelay / 1000} s (the web server stays up)`,
    );
    record.died({ pid: child.pid, exit, ranMs, delayMs: workerDelay });
    restartTimer = setTimeout(startWorker, workerDelay);
  });
  record.started(child.pid, startedAt);
}

let exitCode = 0;
function shutdown(code = 0) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  if (restartTimer) clearTimeout(restartTimer);
  record.stopped();
  if (children.size === 0) process.exit(code);
  for (const c of children.values()) c.kill('SIGTERM');
  // The worker finishes or releases its job within its grace period; after that, force.
  setTimeout(() => {
    for (const c of children.values()) c.kill('SIGKILL');
    process.exit(code);
  }, 20000).unref();
}
process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));

// The built app behind scripts/web-server.mjs, which sets the client's address from the socket (or a trusted proxy).
launch('web', [path.join(ROOT, 'scripts/web-server.mjs'), String(port), host], {
  NEXT_TELEMETRY_DISABLED: '1',
  TOOLSMITH_PUBLIC_URL:
    process.env.TOOLSMITH_PUBLIC_URL ??
    `http://${host === '0.0.0.0' || host === '127.0.0.1' ? 'localhost' : host}:${port}`,
});
startWorker();

const url = `http://${host === '0.0.0.0' || host === '127.0.0.1' ? 'localhost' : host}:${port}`;
for (let i = 0; i < 600 && !stopping; i++) {
  try {
    const r = await fetch(`http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}/api/trpc/system.health`);
    if (r.ok || r.status === 421) break; // 421: up, but TOOLSMITH_ALLOWED_HOSTS does not list the loopback name
  } catch {
    /* not up yet */
  }
  await new Promise((r) => setTimeout(r, 100));
}
if (!stopping) {
  for (const w of warnings) log(`warning: ${w}`);
  console.log(`\nToolsmith is running at ${url}  (web + 1 worker; Ctrl-C stops both)`);
  // Sign-in: the first start creates the admin and prints a one-time link (as Jupyter prints its token URL);
  // later starts say how to get a new one.
  const boot = spawnSync(process.execPath, [path.join(ROOT, 'bin/toolsmith.mjs'), 'user', 'bootstrap'], {
    cwd: ROOT,
    env: { ...process.env, TOOLSMITH_PUBLIC_URL: process.env.TOOLSMITH_PUBLIC_URL ?? url },
    encoding: 'utf8',
  });
  process.stdout.write(boot.stdout ?? '');
  if (boot.status !== 0) process.stderr.write(boot.stderr ?? '');
  console.log('');
}
