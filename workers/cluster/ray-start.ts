import net from 'node:net';
import { UserError } from '../../contracts/errors.ts';

/**
 * How `npx toolsmith ray start` starts a Ray node (cli/ray.ts), and the Ray tests' clusters with it: `ray start`'s
 * arguments and environment for a head or a node that joins one, bound to the address it is given.
 *
 * Why the environment matters: Ray 2.60's GCS, raylet and object manager listen on 127.0.0.1 only when the node's
 * address *is* 127.0.0.1, and on every interface otherwise — and `ray start` replaces a loopback
 * `--node-ip-address` with the machine's primary address (`resolve_ip_for_localhost`) unless Ray's single-machine
 * mode is on (`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`, the default on macOS and Windows, where `get_node_ip_address`
 * answers 127.0.0.1). So a loopback node turns that mode on, and every process the node starts (its job drivers
 * included) inherits it. That mode refuses a second node (`ray start --address` aborts), and a node on a loopback
 * address could not be reached from another machine anyway: a machine bound to loopback runs one node, the head.
 * Any other address binds the wildcard whatever is asked: Ray has no option for it.
 */

/** The only loopback address Ray binds as loopback (its gRPC servers compare with this string). */
export const RAY_LOOPBACK = '127.0.0.1';
export const RAY_GCS_PORT = 6379;
export const RAY_DASHBOARD_PORT = 8265;

export interface RayNodeOptions {
  /** The head's GCS address (host:port) to join; absent: start a head. */
  join?: string;
  /** This node's address: what it registers as, and binds when it is 127.0.0.1 (the default). */
  address?: string;
  /** The head's GCS port. */
  port?: number;
  /** The head's dashboard (Jobs REST API) port. */
  dashboardPort?: number;
  cpus?: number;
  gpus?: number;
  /** Custom resources, e.g. {toolsmith_sandbox: 1}. */
  resources?: Record<string, number>;
  objectStoreBytes?: number;
  tempDir?: string;
  /** The cluster's token (Ray's token authentication is always on). */
  tokenFile: string;
}

export interface RayStart {
  /** `ray start` arguments (with --block: the node lives as long as this process). */
  args: string[];
  /** Added to the environment of `ray start`. */
  env: Record<string, string>;
  /** Whether every Ray port of the node is bound to loopback. */
  loopbackOnly: boolean;
  /** The node's GCS address (the head's for a joining node): what RAY_ADDRESS names for a driver. */
  gcsAddress: string;
  /** The head's Jobs REST API: TOOLSMITH_RAY_ADDRESS for the web server and workers (a head only). */
  dashboardUrl?: string;
}

const port = (value: number | undefined, fallback: number, field: string): number => {
  const p = value ?? fallback;
  if (!Number.isInteger(p) || p < 1 || p > 65535)
    throw new UserError(`${field}: ${p} is not a port (1-65535)`, { field });
  return p;
};

const count = (value: number | undefined, field: string): number | undefined => {
  if (value !== undefined && !(Number.isInteger(value) && value >= 0))
    throw new UserError(`${field}: ${value} is not a whole number ≥ 0`, { field });
  return value;
};

const objectStore = (bytes: number): number => {
  // Ray's own minimum is 75 MiB.
  if (!(Number.isInteger(bytes) && bytes >= 75 * 2 ** 20))
    throw new UserError(`--object-store-mb: ${bytes / 2 ** 20} is not a whole number of MiB ≥ 75`, {
      field: '--object-store-mb',
    });
  return bytes;
};

/** An IP literal this node can be bound to, checked; 'localhost' means 127.0.0.1. */
export function rayNodeAddress(value: string | undefined): string {
  const a = (value ?? RAY_LOOPBACK).trim();
  if (a === 'localhost') return RAY_LOOPBACK;
  if (!net.isIP(a))
    throw new UserError(`--address: "${a}" is not an IP address`, {
      field: '--address',
      fix: `give this node's address on the cluster's private network, or ${RAY_LOOPBACK} for one machine`,
    });
  if (a === '0.0.0.0' || a === '::')
    throw new UserError(`--address: ${a} is every interface; a Ray node registers as one address`, {
      field: '--address',
      fix: `give this node's address on the cluster's private network, or ${RAY_LOOPBACK} for one machine`,
    });
  if (a !== RAY_LOOPBACK && (a.startsWith('127.') || a === '::1'))
    throw new UserError(`--address: Ray binds loopback only for ${RAY_LOOPBACK}, not ${a}`, { field: '--address' });
  return a;
}

/** The arguments every node takes, head or joining: `--block`, the address it registers as, its resources, object
 *  store and temp folder. Exported for the Ray tests, whose other nodes stand for other machines on loopback (which
 *  rayStartInvocation refuses for a joining node). */
export function rayNodeArgs(
  o: Pick<RayNodeOptions, 'cpus' | 'gpus' | 'resources' | 'objectStoreBytes' | 'tempDir'>,
  address: string,
): string[] {
  const resources = o.resources;
  if (resources !== undefined) {
    for (const [k, v] of Object.entries(resources))
      if (!/^[A-Za-z_][\w.-]*$/.test(k) || !(typeof v === 'number' && Number.isFinite(v) && v >= 0))
        throw new UserError(`--resources: "${k}": ${JSON.stringify(v)} is not a resource name with an amount ≥ 0`, {
          field: '--resources',
        });
  }
  return [
    '--block',
    '--node-ip-address',
    address,
    ...(count(o.cpus, '--num-cpus') !== undefined ? ['--num-cpus', String(o.cpus)] : []),
    ...(count(o.gpus, '--num-gpus') !== undefined ? ['--num-gpus', String(o.gpus)] : []),
    ...(o.objectStoreBytes !== undefined ? ['--object-store-memory', String(objectStore(o.objectStoreBytes))] : []),
    ...(resources && Object.keys(resources).length ? ['--resources', JSON.stringify(resources)] : []),
    ...(o.tempDir !== undefined ? ['--temp-dir', o.tempDir] : []),
  ];
}

/** `ray start`'s arguments and environment for the node `o` describes; a UserError naming the field when it cannot be. */
export function rayStartInvocation(o: RayNodeOptions): RayStart {
  const address = rayNodeAddress(o.address);
  const loopbackOnly = address === RAY_LOOPBACK;
  const env: Record<string, string> = {
    RAY_AUTH_MODE: 'token',
    RAY_AUTH_TOKEN_PATH: o.tokenFile,
    RAY_USAGE_STATS_ENABLED: '0',
    // Ray's single-machine mode: the node stays 127.0.0.1, so its servers bind loopback (see above).
    ...(loopbackOnly ? { RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER: '0' } : {}),
  };
  const common = rayNodeArgs(o, address);
  if (o.join === undefined) {
    const gcsPort = port(o.port, RAY_GCS_PORT, '--port');
    const dashboardPort = port(o.dashboardPort, RAY_DASHBOARD_PORT, '--dashboard-port');
    const host = address.includes(':') ? `[${address}]` : address;
    return {
      args: [
        'start',
        '--head',
        '--port',
        String(gcsPort),
        '--dashboard-host',
        address,
        '--dashboard-port',
        String(dashboardPort),
        '--include-dashboard',
        'true',
        ...common,
      ],
      env,
      loopbackOnly,
      gcsAddress: `${host}:${gcsPort}`,
      dashboardUrl: `http://${host}:${dashboardPort}`,
    };
  }
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):(\d{1,5})$/.exec(o.join.trim());
  if (!m)
    throw new UserError(`--join: "${o.join}" is not the head's HOST:PORT`, {
      field: '--join',
      fix: `e.g. --join 10.0.0.1:${RAY_GCS_PORT}`,
    });
  if (loopbackOnly)
    throw new UserError(
      `--join: a node bound to ${RAY_LOOPBACK} cannot join a cluster; one machine runs one node, its head`,
      {
        field: '--join',
        fix: "start this machine's node with --head, or give --address this node's address on the cluster's private network",
      },
    );
  return {
    args: ['start', '--address', `${m[1]}:${port(Number(m[2]), RAY_GCS_PORT, '--join')}`, ...common],
    env,
    loopbackOnly,
    gcsAddress: o.join.trim(),
  };
}
