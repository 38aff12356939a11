/**
 * The built web app as `npm start` serves it (`node scripts/start.mjs --serve-only`: scripts/web-server.mjs and one
 * worker) on a free port, with a data folder of its own and only the Toolsmith variables the caller gives.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT, waitFor } from './proc.ts';

export const webBuilt = () => fs.existsSync(path.join(ROOT, '.next/BUILD_ID'));

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return p;
}

export interface WebServer {
  port: number;
  base: string;
  dataDir: string;
  child: ChildProcess;
  /** Everything the start script printed so far. */
  output(): string;
  /** SIGTERM (then SIGKILL to the group after 25 s), and the data folder removed. */
  stop(): Promise<void>;
}

export async function startWebServer(env: Record<string, string> = {}, prefix = 'toolsmith-web-'): Promise<WebServer> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('TOOLSMITH_') && k !== 'DATABASE_URL') childEnv[k] = v;
  Object.assign(
    childEnv,
    { PORT: String(port), HOST: '127.0.0.1', TOOLSMITH_DATA_DIR: dataDir, NEXT_TELEMETRY_DISABLED: '1' },
    env,
  );
  const child = spawn(process.execPath, ['scripts/start.mjs', '--serve-only'], {
    cwd: ROOT,
    env: childEnv as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }, 25_000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const healthy = () =>
    fetch(`${base}/api/trpc/system.health`)
      .then((r) => r.ok)
      .catch(() => false);
  try {
    await waitFor('the web server to answer system.health', healthy, {
      timeoutMs: 90_000,
      intervalMs: 200,
      detail: () => output,
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { port, base, dataDir, child, output: () => output, stop };
}
