/**
 * A run's services on a Ray cluster (ray_services.py): one actor per chosen node running a command that prints the
 * URL it serves on (sandbox nodes, rollout servers), restarted by Ray when it dies. This side starts the driver,
 * follows its {"services": [...]} lines and tells the caller each time the serving set changes. Closing it (or this
 * process dying) ends the driver, and Ray removes its actors.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

export const RAY_SERVICES_SCRIPT = path.join(import.meta.dirname, 'ray_services.py');

export interface RayServiceSpec {
  /** What the services are (for messages): "sandbox", "rollout". */
  name: string;
  /** The command each actor runs; "{host}" becomes the node's address, "{port}" a free port there. Without
   *  "{port}" it must print "… on http://host:port …" (serve-model, sandbox serve with --port 0). */
  argv: string[];
  /** With "{port}" in argv: the route that answers once the server is up (e.g. /health). */
  healthPath?: string;
  /** Plain settings for the command's environment (no secret). */
  env?: Record<string, string>;
  /** The variable that carries the services' token: read from this process's environment, never from argv. */
  secretEnv?: string;
  /** Nodes offering this custom resource get one each (holding one unit); else nodes without GPUs, else all. */
  resource?: string;
  /** Run on GPU nodes too (rollout servers): default false. */
  gpuNodes?: boolean;
  /** A flag appended with the node's CPU count (e.g. "--size": a sandbox pool sized to the node's cores). */
  sizeToCores?: string;
  cpus?: number;
  gpus?: number;
  maxNodes?: number;
  maxRestarts?: number;
  startTimeoutS?: number;
  namespace?: string;
}

export interface ServiceInfo {
  url: string;
  /** Ray's node id and the node's address. */
  node: string;
  address: string;
  /** The actor's pid and its service's pid on that node. */
  pid: number;
  child: number;
  index: number;
  /** Times Ray restarted this actor. */
  restarts: number;
}

export class RayServices {
  private current: ServiceInfo[] = [];
  private listeners: ((s: ServiceInfo[]) => void)[] = [];
  private stderrTail = '';
  private exited = false;
  /** How many services the driver started (one per chosen node). */
  expected = 0;

  private constructor(private readonly proc: ChildProcess) {
    let buf = '';
    proc.stdout!.setEncoding('utf8');
    proc.stdout!.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          const msg = JSON.parse(line) as { services?: ServiceInfo[]; expected?: number };
          if (Array.isArray(msg.services)) {
            this.current = msg.services;
            this.expected = msg.expected ?? msg.services.length;
            for (const l of this.listeners) l(this.current);
          }
        } catch {
          /* not a protocol line */
        }
      }
    });
    proc.stderr!.setEncoding('utf8');
    proc.stderr!.on('data', (d: string) => {
      this.stderrTail = (this.stderrTail + d).slice(-4096);
    });
    proc.on('exit', () => {
      this.exited = true;
    });
  }

  /** Start the services and wait until every chosen node serves (or fail with the driver's reason, or time out). */
  static async start(python: string, spec: RayServiceSpec, env: NodeJS.ProcessEnv = process.env): Promise<RayServices> {
    const wire = {
      name: spec.name,
      argv: spec.argv,
      env: spec.env,
      secret_env: spec.secretEnv,
      resource: spec.resource,
      gpu_nodes: spec.gpuNodes,
      size_to_cores: spec.sizeToCores,
      cpus: spec.cpus,
      gpus: spec.gpus,
      max_nodes: spec.maxNodes,
      max_restarts: spec.maxRestarts,
      start_timeout_s: spec.startTimeoutS,
      health_path: spec.healthPath,
      namespace: spec.namespace,
    };
    const proc = spawn(python, ['-u', RAY_SERVICES_SCRIPT, JSON.stringify(wire)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...env, TOOLSMITH_SERVICES_PARENT_PID: String(process.pid), PYTHONUNBUFFERED: '1' },
    });
    const s = new RayServices(proc);
    const timeoutMs = ((spec.startTimeoutS ?? 120) + 60) * 1000;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`the ${spec.name} services did not start within ${timeoutMs / 1000} s: ${s.stderrTail}`));
        void s.close();
      }, timeoutMs);
      s.onChange((list) => {
        if (list.length > 0 && list.length >= s.expected) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the ${spec.name} services' driver exited (code ${code}): ${s.stderrTail.trim()}`));
      });
    });
    return s;
  }

  /** The services serving now. */
  get services(): ServiceInfo[] {
    return this.current;
  }
  get urls(): string[] {
    return this.current.map((s) => s.url);
  }
  get alive(): boolean {
    return !this.exited;
  }
  get log(): string {
    return this.stderrTail;
  }
  onChange(fn: (s: ServiceInfo[]) => void) {
    this.listeners.push(fn);
  }

  /** End the driver (its actors go with it). */
  async close(graceMs = 10_000): Promise<void> {
    if (this.exited) return;
    const done = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.stdin!.end();
    const t = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    await done;
    clearTimeout(t);
  }
}
