import os from 'node:os';
import path from 'node:path';
import { parseTrustedProxies } from './http/client-address.ts';

/**
 * Every environment variable Toolsmith reads, in one place (docs/configuration.md "Configuration" mirrors this).
 * Read lazily so tests and CLIs can set variables before first use; `env` lets a caller read another environment.
 * One piece: one object literal, a property per variable, so the list reads like the documentation it mirrors.
 */
export function config(env: Record<string, string | undefined> = process.env) {
  const num = (name: string, fallback: number) => positive(env, name, fallback);
  const dataDir = path.resolve(/*turbopackIgnore: true*/ env.TOOLSMITH_DATA_DIR ?? 'data');
  const leaseSeconds = num('TOOLSMITH_LEASE_SECONDS', 30);
  return {
    dataDir,
    /** The one folder models live in, one HF-format directory per name (server/models/registry.ts). */
    modelsDir: env.TOOLSMITH_MODELS_DIR?.trim()
      ? path.resolve(/*turbopackIgnore: true*/ env.TOOLSMITH_MODELS_DIR.trim())
      : path.join(dataDir, 'models'),
    /** The shared folder the trainer writes weight versions into for rollout servers (docs/scaling-out.md "Weight sync"); serve-model's default --weights-root. */
    weightSyncDir: env.TOOLSMITH_WEIGHT_SYNC_DIR?.trim()
      ? path.resolve(/*turbopackIgnore: true*/ env.TOOLSMITH_WEIGHT_SYNC_DIR.trim())
      : path.join(dataDir, 'weight-sync'),
    /** Things rebuilt on demand and safe to delete (the tests' SFT fixture): never models a recipe names. */
    cacheDir: path.join(dataDir, 'cache'),
    databaseUrl:
      env.DATABASE_URL && env.DATABASE_URL.trim() !== ''
        ? env.DATABASE_URL.trim()
        : `file:${path.join(dataDir, 'toolsmith.db')}`,
    port: num('PORT', 3000),
    host: env.HOST ?? '127.0.0.1',
    python: env.TOOLSMITH_PYTHON ?? '/usr/bin/python3',
    /** The trainer's interpreter (default: the .venv set-up builds; workers/trainer/client.ts). */
    trainerPython: env.TOOLSMITH_TRAINER_PYTHON?.trim() || undefined,
    workerId: env.TOOLSMITH_WORKER_ID ?? `${os.hostname()}-${process.pid}`,
    leaseSeconds,
    heartbeatSeconds: num('TOOLSMITH_HEARTBEAT_SECONDS', Math.max(1, leaseSeconds / 3)),
    pollMs: num('TOOLSMITH_POLL_MS', 500),
    /** Side slots per worker process: imports, followed imports, diagnostics, model fetches and dataset adds run there, beside the main lane's job (workers/lanes.ts); 0 runs them in the main lane. */
    workerSideSlots: wholeNumber(env, 'TOOLSMITH_WORKER_SIDE_SLOTS', 4),
    shutdownGraceSeconds: num('TOOLSMITH_SHUTDOWN_GRACE_SECONDS', 10),
    /** Live streams (runs.events) one user may hold open at once, all tabs and tokens together (server/trpc/stream-limits.ts). */
    maxStreamsPerUser: Math.floor(num('TOOLSMITH_MAX_STREAMS_PER_USER', 8)),
    debug: Boolean(env.TOOLSMITH_DEBUG),
    /** Modules each sandbox interpreter imports before serving calls (unset: the pool's default list). */
    sandboxPreload: env.TOOLSMITH_SANDBOX_PRELOAD,
    sandboxLight: env.TOOLSMITH_SANDBOX_LIGHT !== '0',
    sandboxUnsafe: env.TOOLSMITH_SANDBOX_UNSAFE === '1',
    /** Measuring only (scripts/measure-syscalls.py): `1`, system calls off the allow list run and are logged instead
     *  of refused; `all`, every call but the refused ones is logged (an empty allow list). */
    sandboxSeccompLog: (['1', 'all'].includes(env.TOOLSMITH_SANDBOX_SECCOMP_LOG ?? '')
      ? env.TOOLSMITH_SANDBOX_SECCOMP_LOG
      : undefined) as '1' | 'all' | undefined,
    sandboxUrls: env.TOOLSMITH_SANDBOX_URLS?.trim() || undefined,
    sandboxToken: env.TOOLSMITH_SANDBOX_TOKEN?.trim() || undefined,
    serveApiKey: env.TOOLSMITH_SERVE_API_KEY?.trim() || undefined,
    /** Bearer key a train job sends to the recipe's rollout servers (engine.kind openai); never stored in a recipe. */
    engineApiKey: env.TOOLSMITH_ENGINE_API_KEY?.trim() || undefined,
    /** The embedded engine's onnxruntime intra-op threads (unset: onnxruntime's choice) and whether they spin. */
    engineThreads: optionalPositive(env, 'TOOLSMITH_ENGINE_THREADS'),
    engineSpin: env.TOOLSMITH_ENGINE_SPIN === '1',
    /** Rollout server base URLs a recipe's openai engine may name (contracts/preflight.ts). */
    rolloutUrls: (env.TOOLSMITH_ROLLOUT_URLS ?? '')
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean),
    /** A worker's own maxima for a run (workers/train/resources.ts; unset: what the host has). */
    maxTrainerRanks: optionalPositive(env, 'TOOLSMITH_MAX_TRAINER_RANKS'),
    maxTrainerMemoryMb: optionalPositive(env, 'TOOLSMITH_MAX_TRAINER_MEMORY_MB'),
    maxSandboxMemoryMb: optionalPositive(env, 'TOOLSMITH_MAX_SANDBOX_MEMORY_MB'),
    /** A Ray cluster runs launched for it (docs/scaling-out.md "Ray"): its dashboard URL, for the Jobs REST API. */
    rayAddress: env.TOOLSMITH_RAY_ADDRESS?.trim().replace(/\/+$/, '') || undefined,
    /** The cluster's token (RAY_AUTH_MODE=token), read from this file; never on a command line or in a recipe. */
    rayTokenFile: env.TOOLSMITH_RAY_TOKEN_FILE?.trim() || undefined,
    /** The operator accepts a cluster without token authentication (anyone who reaches it runs code). */
    rayAllowNoAuth: env.TOOLSMITH_RAY_ALLOW_NO_AUTH === '1',
    /** Where the project is checked out and set up on the cluster's nodes (default: where it is here). */
    rayProjectDir: env.TOOLSMITH_RAY_PROJECT_DIR?.trim() || process.cwd(),
    /** The database as the cluster reaches it (default: DATABASE_URL, which must then be reachable from there). */
    rayDatabaseUrl: env.TOOLSMITH_RAY_DATABASE_URL?.trim() || undefined,
    /** Seconds a run's trainer group waits to be placed before it fails naming what is missing. */
    rayPlacementTimeoutS: num('TOOLSMITH_RAY_PLACEMENT_TIMEOUT_S', 300),
    /** Seconds the cluster's dashboard may refuse connections before a run following it fails (its head is lost). */
    rayHeadLostS: num('TOOLSMITH_RAY_HEAD_LOST_S', 30),
    /** Set inside a run's Ray job (runtime env): this process is that run's orchestrator, its trainer ranks Ray actors. */
    onRay: env.TOOLSMITH_ON_RAY === '1',
    /**
     * Folders runs trained elsewhere may be imported from by the web app and the ingest API, ':'-separated;
     * a path is checked after symlinks. The CLI (an operator's shell) may import any folder it can read.
     */
    importRoots: (env.TOOLSMITH_IMPORT_ROOTS?.trim()
      ? env.TOOLSMITH_IMPORT_ROOTS.split(':')
      : [path.join(dataDir, 'imports')]
    )
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => path.resolve(/*turbopackIgnore: true*/ p)),
    /** How often a followed import looks for new lines, ms. */
    importPollMs: num('TOOLSMITH_IMPORT_POLL_MS', 1000),
    /**
     * The ingest API's limit per API token (server/imports/ingest-rate.ts): calls a second on average, and how many
     * may come back to back. Well above what one bulk importer sends (a batch carries up to 1000 trajectories).
     */
    ingestRatePerS: num('TOOLSMITH_INGEST_RATE_PER_S', 10),
    ingestRateBurst: Math.max(1, Math.floor(num('TOOLSMITH_INGEST_RATE_BURST', 100))),
    /**
     * The sign-in throttle's first delay, seconds (server/http/sign-in-throttle.ts): doubling after each further
     * failure up to 5 minutes (or this, when longer).
     */
    signInDelayS: num('TOOLSMITH_SIGN_IN_DELAY_S', 4),
    /** Register the test-only fault-injection job kinds. */
    testJobs: env.TOOLSMITH_TEST_JOBS === '1',
    /** Host[:port] values the web app answers to (server/http/gate.ts): anything else is a DNS-rebinding or misrouted request. */
    allowedHosts: allowedHosts(env),
    /** Largest request body the web app reads (tRPC POSTs), in bytes. */
    maxBodyBytes: Math.floor(num('TOOLSMITH_MAX_BODY_BYTES', 1024 * 1024)),
    /** Most procedure calls one batched tRPC request may carry. */
    maxBatch: Math.floor(num('TOOLSMITH_MAX_BATCH', 20)),
    /** Reverse proxies (IPs/CIDRs) whose X-Forwarded-For names the client (scripts/web-server.mjs); none: the socket's peer. */
    trustedProxies: parseTrustedProxies(env.TOOLSMITH_TRUSTED_PROXIES).entries,
    /** Set by npm when run through a package script. */
    packageVersion: env.npm_package_version,
    ...authConfig(env, num('PORT', 3000)),
  };
}

export type Config = ReturnType<typeof config>;

/** Sign-in (server/auth/): where the app is reached, its secret, the first admin, and an optional OIDC issuer. */
function authConfig(env: Record<string, string | undefined>, port: number) {
  const issuer = env.TOOLSMITH_OIDC_ISSUER?.trim();
  return {
    /** The URL people open (behind a proxy: its https URL): sign-in links and OIDC redirects are built from it. */
    publicUrl: (env.TOOLSMITH_PUBLIC_URL?.trim() || `http://localhost:${port}`).replace(/\/+$/, ''),
    /** Signs session cookies; unset: one is generated into <data>/auth-secret on first use. */
    authSecret: env.TOOLSMITH_AUTH_SECRET?.trim() || undefined,
    /** The admin the first start creates. */
    adminEmail: env.TOOLSMITH_ADMIN_EMAIL?.trim() || 'admin@toolsmith.local',
    oidc: issuer
      ? {
          issuer: issuer.replace(/\/+$/, ''),
          clientId: env.TOOLSMITH_OIDC_CLIENT_ID?.trim() ?? '',
          clientSecret: env.TOOLSMITH_OIDC_CLIENT_SECRET?.trim() ?? '',
          /** The button's label on the sign-in page. */
          name: env.TOOLSMITH_OIDC_NAME?.trim() || 'single sign-on',
          /** The role of a user the issuer signs in for the first time. */
          defaultRole: (env.TOOLSMITH_OIDC_DEFAULT_ROLE?.trim() || 'viewer') as 'viewer' | 'researcher' | 'admin',
          /** Let an issuer's new identity join an existing (non-admin) account with the same verified email; off by default. */
          linkByEmail:
            env.TOOLSMITH_OIDC_LINK_BY_EMAIL?.trim() === '1' ||
            env.TOOLSMITH_OIDC_LINK_BY_EMAIL?.trim().toLowerCase() === 'true',
          /** Email domains the issuer may sign in (empty: any), e.g. corp.example,lab.example. */
          allowedDomains: (env.TOOLSMITH_OIDC_ALLOWED_DOMAINS ?? '')
            .split(',')
            .map((d) => d.trim().toLowerCase().replace(/^@/, ''))
            .filter(Boolean),
        }
      : null,
  };
}

const HOST_ENTRY = /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::\d{1,5})?$/;

/** TOOLSMITH_ALLOWED_HOSTS (comma-separated host[:port]), else the loopback names plus HOST when it names one interface. */
function allowedHosts(env: Record<string, string | undefined>): string[] {
  const raw = env.TOOLSMITH_ALLOWED_HOSTS?.trim();
  if (!raw) {
    const out = ['localhost', '127.0.0.1', '[::1]'];
    // The public URL's host (behind a proxy) is where browsers come from.
    const pub = env.TOOLSMITH_PUBLIC_URL?.trim();
    if (pub) {
      try {
        const h = new URL(pub).host.toLowerCase();
        if (!out.includes(h)) out.push(h);
      } catch {
        /* checked where it is used */
      }
    }
    const host = env.HOST?.trim().toLowerCase();
    if (host && host !== '0.0.0.0' && host !== '::' && host !== '[::]') {
      const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
      if (!out.includes(h)) out.push(h);
    }
    return out;
  }
  return raw
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean)
    .map((e) => {
      if (!HOST_ENTRY.test(e)) {
        throw new Error(
          `TOOLSMITH_ALLOWED_HOSTS: ${JSON.stringify(e)} is not a host[:port] — give names such as toolsmith.example.com,localhost:3000 (IPv6 in brackets: [::1])`,
        );
      }
      return e;
    });
}

function optionalPositive(env: Record<string, string | undefined>, name: string): number | undefined {
  return env[name] === undefined || env[name] === '' ? undefined : positive(env, name, 1);
}

function wholeNumber(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 64) {
    throw new Error(
      `${name}=${JSON.stringify(raw)} is not a whole number from 0 to 64 — unset it or give one such as ${fallback}`,
    );
  }
  return value;
}

function positive(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(
      `${name}=${JSON.stringify(raw)} is not a positive number — unset it or give a number such as ${fallback}`,
    );
  }
  return value;
}
