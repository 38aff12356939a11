import os from 'node:os';
import path from 'node:path';

/**
 * Every environment variable Toolsmith reads, in one place (the README's configuration table mirrors this).
 * Read lazily so tests and CLIs can set variables before first use.
 */
export function config() {
  const env = process.env;
  const dataDir = path.resolve(/*turbopackIgnore: true*/ env.TOOLSMITH_DATA_DIR ?? 'data');
  const leaseSeconds = num('TOOLSMITH_LEASE_SECONDS', 30);
  return {
    dataDir,
    databaseUrl: env.DATABASE_URL && env.DATABASE_URL.trim() !== '' ? env.DATABASE_URL.trim() : `file:${path.join(dataDir, 'toolsmith.db')}`,
    port: num('PORT', 3000),
    host: env.HOST ?? '127.0.0.1',
    python: env.TOOLSMITH_PYTHON ?? '/usr/bin/python3',
    workerId: env.TOOLSMITH_WORKER_ID ?? `${os.hostname()}-${process.pid}`,
    leaseSeconds,
    heartbeatSeconds: num('TOOLSMITH_HEARTBEAT_SECONDS', Math.max(1, leaseSeconds / 3)),
    pollMs: num('TOOLSMITH_POLL_MS', 500),
    shutdownGraceSeconds: num('TOOLSMITH_SHUTDOWN_GRACE_SECONDS', 10),
    debug: Boolean(env.TOOLSMITH_DEBUG),
  };
}

export type Config = ReturnType<typeof config>;

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`${name}=${JSON.stringify(raw)} is not a positive number — unset it or give a number such as ${fallback}`);
  }
  return value;
}
