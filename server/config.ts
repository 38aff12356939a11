import os from 'node:os';
import path from 'node:path';

/**
 * Every environment variable Toolsmith reads, in one place (the README's configuration table mirrors this).
 * Read lazily so tests and CLIs can set variables before first use; `env` lets a caller read another environment.
 */
export function config(env: Record<string, string | undefined> = process.env) {
  const num = (name: string, fallback: number) => positive(env, name, fallback);
  const dataDir = path.resolve(/*turbopackIgnore: true*/ env.TOOLSMITH_DATA_DIR ?? 'data');
  const leaseSeconds = num('TOOLSMITH_LEASE_SECONDS', 30);
  return {
    dataDir,
    /** The one folder models live in, one HF-format directory per name (server/models/registry.ts). */
    modelsDir: env.TOOLSMITH_MODELS_DIR?.trim() ? path.resolve(/*turbopackIgnore: true*/ env.TOOLSMITH_MODELS_DIR.trim()) : path.join(dataDir, 'models'),
    /** The shared folder the trainer writes weight versions into for rollout servers (README "Weight sync"); serve-model's default --weights-root. */
    weightSyncDir: env.TOOLSMITH_WEIGHT_SYNC_DIR?.trim() ? path.resolve(/*turbopackIgnore: true*/ env.TOOLSMITH_WEIGHT_SYNC_DIR.trim()) : path.join(dataDir, 'weight-sync'),
    /** Things rebuilt on demand and safe to delete (the tests' SFT fixture): never models a recipe names. */
    cacheDir: path.join(dataDir, 'cache'),
    databaseUrl: env.DATABASE_URL && env.DATABASE_URL.trim() !== '' ? env.DATABASE_URL.trim() : `file:${path.join(dataDir, 'toolsmith.db')}`,
    port: num('PORT', 3000),
    host: env.HOST ?? '127.0.0.1',
    python: env.TOOLSMITH_PYTHON ?? '/usr/bin/python3',
    /** The trainer's interpreter (default: the .venv set-up builds; workers/trainer/client.ts). */
    trainerPython: env.TOOLSMITH_TRAINER_PYTHON?.trim() || undefined,
    workerId: env.TOOLSMITH_WORKER_ID ?? `${os.hostname()}-${process.pid}`,
    leaseSeconds,
    heartbeatSeconds: num('TOOLSMITH_HEARTBEAT_SECONDS', Math.max(1, leaseSeconds / 3)),
    pollMs: num('TOOLSMITH_POLL_MS', 500),
    shutdownGraceSeconds: num('TOOLSMITH_SHUTDOWN_GRACE_SECONDS', 10),
    /** Live streams (runs.events) one user may hold open at once, all tabs and tokens together (server/trpc/stream-limits.ts). */
    maxStreamsPerUser: Math.floor(num('TOOLSMITH_MAX_STREAMS_PER_USER', 8)),
    debug: Boolean(env.TOOLSMITH_DEBUG),
    /** Modules each sandbox interpreter imports before serving calls (unset: the pool's default list). */
    sandboxPreload: env.TOOLSMITH_SANDBOX_PRELOAD,
    sandboxLight: env.TOOLSMITH_SANDBOX_LIGHT !== '0',
    sandboxUnsafe: env.TOOLSMITH_SANDBOX_UNSAFE === '1',
    sandboxUrls: env.TOOLSMITH_SANDBOX_URLS?.trim() || undefined,
    sandboxToken: env.TOOLSMITH_SANDBOX_TOKEN?.trim() || undefined,
    serveApiKey: env.TOOLSMITH_SERVE_API_KEY?.trim() || undefined,
    /** Bearer key a train job sends to the recipe's rollout servers (engine.kind openai); never stored in a recipe. */
    engineApiKey: env.TOOLSMITH_ENGINE_API_KEY?.trim() || undefined,
    /** Register the test-only fault-injection job kinds. */
    testJobs: env.TOOLSMITH_TEST_JOBS === '1',
    /** Set by npm when run through a package script. */
    packageVersion: env.npm_package_version,
  };
}

export type Config = ReturnType<typeof config>;

function positive(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`${name}=${JSON.stringify(raw)} is not a positive number — unset it or give a number such as ${fallback}`);
  }
  return value;
}
