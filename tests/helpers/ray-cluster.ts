/**
 * A real Ray cluster for a test file: a head and more nodes on this machine, each a `ray start --block` of the
 * trainer's environment with its own ports, token authentication on (a fresh token in a 0700 folder), small object
 * stores. Only inside a network namespace whose one interface is loopback (`npm test -- ray` runs the Ray files under
 * `unshare -n`): there every Ray process registers as 127.0.0.1 and nothing is reachable from outside; elsewhere
 * `rayCluster.skip` says why the tests do not run. One cluster per file, reused by its tests; stop() kills every
 * process it started (each node leads its own process group).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { trainerPython } from '../../workers/trainer/python.ts';
import type { ClusterEventData } from '../../contracts/cluster.ts';
import type { Database } from '../../server/db/client.ts';
import { MICRO_INPUT } from '../../server/recipes/defaults.ts';
import { rayNodeArgs, rayStartInvocation } from '../../workers/cluster/ray-start.ts';
import { readEvents } from '../../server/store/events.ts';
import { freshDatabase } from './db.ts';
import { waitRunEnded } from './runs.ts';
import { outputs, type Proc, ROOT, spawnWorker, waitFor } from './proc.ts';

export interface RayNodeSpec {
  cpus: number;
  gpus?: number;
  /** Custom resources (e.g. {sandbox: 1}). */
  resources?: Record<string, number>;
}

export interface RayTestCluster {
  /** GCS address (what RAY_ADDRESS names for a driver). */
  address: string;
  dashboardUrl: string;
  tokenFile: string;
  /** What a driver or client of this cluster needs in its environment. */
  env: Record<string, string>;
  nodes: ChildProcess[];
  logs(): string;
  stop(): Promise<void>;
}

const PY = trainerPython();
const RAY = path.join(path.dirname(PY), 'ray');
const hasRay = fs.existsSync(RAY) && spawnSync(PY, ['-c', 'import ray'], { stdio: 'ignore' }).status === 0;
const onlyLoopback = Object.keys(os.networkInterfaces()).every((n) => n === 'lo');

/** Why Ray tests cannot run here, or false. */
export const raySkip: string | false = !hasRay
  ? `needs ray in ${PY} (node scripts/setup.mjs installs it)`
  : !onlyLoopback
    ? 'runs only inside a network namespace with loopback alone: npm test -- ray'
    : false;

const GCS_PORT = 46379;
const DASHBOARD_PORT = 48265;

/** A Python one-liner against the cluster (RAY_ADDRESS and the token in env). */
export function rayPython(c: RayTestCluster, code: string): string {
  const r = spawnSync(PY, ['-c', code], { env: { ...process.env, ...c.env }, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`ray python failed: ${r.stderr.slice(-2000)}`);
  return r.stdout.trim();
}

/** Live nodes as Ray reports them. */
export function aliveNodes(c: RayTestCluster): number {
  return Number(
    rayPython(
      c,
      'import ray; ray.init(logging_level="ERROR", log_to_driver=False); print(sum(1 for n in ray.nodes() if n["Alive"]))',
    ),
  );
}

export async function startRayCluster(specs: RayNodeSpec[], opts: { auth?: boolean } = {}): Promise<RayTestCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-ray-')); // 0700
  const tokenFile = path.join(dir, 'token');
  fs.writeFileSync(tokenFile, crypto.randomBytes(32).toString('hex'), { mode: 0o600 });
  const temp = path.join(dir, 't');
  const address = `127.0.0.1:${GCS_PORT}`;
  let out = '';
  const nodes: ChildProcess[] = [];
  // The head starts as `npx toolsmith ray start --head` starts it (workers/cluster/ray-start.ts), on fixed test ports.
  const head = rayStartInvocation({
    port: GCS_PORT,
    dashboardPort: DASHBOARD_PORT,
    cpus: specs[0]!.cpus,
    gpus: specs[0]!.gpus ?? 0,
    resources: specs[0]!.resources,
    objectStoreBytes: 100 << 20,
    tokenFile,
    tempDir: temp,
  });
  // The other nodes stand for other machines: Ray's single-machine mode (the head's) refuses them, and in this
  // namespace, whose one address is loopback, Ray registers them as 127.0.0.1 by itself.
  const joinArgs = (spec: RayNodeSpec, i: number) => [
    'start',
    '--address',
    address,
    ...rayNodeArgs(
      { cpus: spec.cpus, gpus: spec.gpus ?? 0, resources: spec.resources, objectStoreBytes: 100 << 20 },
      '127.0.0.1',
    ),
    // Every agent of a node on a shared host needs ports of its own.
    '--dashboard-agent-listen-port',
    String(52400 + 10 * i),
    '--dashboard-agent-grpc-port',
    String(52401 + 10 * i),
    '--metrics-export-port',
    String(52402 + 10 * i),
    '--runtime-env-agent-port',
    String(52403 + 10 * i),
  ];
  // Without auth (only to show that Toolsmith refuses such a cluster) the nodes are told so explicitly.
  const env: Record<string, string> = { ...head.env, RAY_ADDRESS: address };
  if (opts.auth === false) {
    env.RAY_AUTH_MODE = 'disabled';
    delete env.RAY_AUTH_TOKEN_PATH;
  }
  const { RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER: _single, ...nodeEnv } = env;
  const startNode = (spec: RayNodeSpec, i: number) => {
    const args = i === 0 ? head.args : joinArgs(spec, i);
    const own = i === 0 ? env : nodeEnv;
    const p = spawn(RAY, args, {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...own },
    });
    const keep = (d: Buffer) => {
      out = (out + d.toString()).slice(-20_000);
    };
    p.stdout!.on('data', keep);
    p.stderr!.on('data', keep);
    nodes.push(p);
  };
  const cluster: RayTestCluster = {
    address,
    dashboardUrl: `http://127.0.0.1:${DASHBOARD_PORT}`,
    tokenFile,
    env,
    nodes,
    logs: () => out,
    async stop() {
      for (const p of nodes) {
        try {
          process.kill(-p.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      await new Promise((r) => setTimeout(r, 300));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    startNode(specs[0]!, 0);
    await waitFor(
      'the Ray head',
      async () => {
        const r = await fetch(`${cluster.dashboardUrl}/api/version`).catch(() => null);
        return r !== null;
      },
      { timeoutMs: 90_000, intervalMs: 500, detail: () => out },
    );
    for (let i = 1; i < specs.length; i++) startNode(specs[i]!, i);
    await waitFor('every Ray node', () => aliveNodes(cluster) === specs.length, {
      timeoutMs: 90_000,
      intervalMs: 1000,
      detail: () => out,
    });
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}

/** Actors of a Ray namespace that the cluster still counts as alive. */
export function liveActors(c: RayTestCluster, namespace: string): number {
  return Number(
    rayPython(
      c,
      `import ray
from ray.util.state import list_actors
ray.init(logging_level="ERROR", log_to_driver=False)
print(len(list_actors(filters=[("state", "=", "ALIVE"), ("ray_namespace", "=", ${JSON.stringify(namespace)})])))`,
    ),
  );
}

/** A worker that sends runs launched for Ray to this cluster (its token file; one trainer thread). */
export function rayWorker(c: RayTestCluster, databaseUrl: string, id: string, env: Record<string, string> = {}): Proc {
  return spawnWorker(databaseUrl, id, {
    leaseSeconds: 10,
    heartbeatSeconds: 1,
    env: {
      TOOLSMITH_RAY_ADDRESS: c.dashboardUrl,
      TOOLSMITH_RAY_TOKEN_FILE: c.tokenFile,
      TOOLSMITH_TRAINER_THREADS: '1',
      ...env,
    },
  });
}

/** Wait for a run to end (succeeded, failed, cancelled or paused); on a timeout, say what the workers and nodes said. */
export function runEnded(db: Database, c: RayTestCluster, runId: string, procs: Proc[], timeoutMs = 400_000) {
  return waitRunEnded(db, runId, { timeoutMs, intervalMs: 500, detail: () => `${outputs(procs)}\n${c.logs()}` });
}

/** A run's `cluster` events' data, oldest first. */
export async function clusterEvents(db: Database, runId: string): Promise<ClusterEventData[]> {
  return (await readEvents(db, runId, 0, 10_000))
    .filter((e) => e.type === 'cluster')
    .map((e) => e.data as ClusterEventData);
}

/** The micro recipe with its trainer on two nodes (one rank each, CPU) and `rlSteps` RL steps. */
export const microOnTwoNodes = (name: string, rlSteps: number) => ({
  ...MICRO_INPUT,
  name,
  trainer: { nodes: 2, ranks: 1, device: 'cpu' },
  stages: [MICRO_INPUT.stages[0], { ...MICRO_INPUT.stages[1], steps: rlSteps }],
});

export interface RayRunFixture {
  cluster: RayTestCluster;
  fresh: Awaited<ReturnType<typeof freshDatabase>>;
  db: Database;
  stop(): Promise<void>;
}

/**
 * What a file of runs launched for Ray needs: the cluster, a fresh database, and TOOLSMITH_RAY_ADDRESS set in this
 * process (the launching side checks that a cluster is configured); stop() undoes all three.
 */
export async function startRayRunFixture(specs: RayNodeSpec[], opts: { auth?: boolean } = {}): Promise<RayRunFixture> {
  const cluster = await startRayCluster(specs, opts);
  const fresh = await freshDatabase();
  process.env.TOOLSMITH_RAY_ADDRESS = cluster.dashboardUrl;
  return {
    cluster,
    fresh,
    db: fresh.db,
    async stop() {
      delete process.env.TOOLSMITH_RAY_ADDRESS;
      await fresh.close();
      await cluster.stop();
    },
  };
}
