import { spawn } from 'node:child_process';
import path from 'node:path';
import { UserError } from '../contracts/errors.ts';
import { config } from '../server/config.ts';
import { parseFlags } from './args.ts';
import type { Command } from './command.ts';
import { readSecret, refuseSecretFlags, type SecretSource } from './secrets.ts';

const TOKEN_SOURCE: SecretSource = { refused: ['token'], env: 'TOOLSMITH_RAY_TOKEN_FILE', fileFlag: 'token-file' };

/** `npx toolsmith ray start`: a Ray head or node of the trainer's environment, bound to --address, in the foreground. */
async function rayStart(args: string[]): Promise<number> {
  refuseSecretFlags(args, TOKEN_SOURCE);
  const f = parseFlags(args, {
    head: 'boolean',
    join: 'string',
    address: 'string',
    port: 'number',
    'dashboard-port': 'number',
    'num-cpus': 'number',
    'num-gpus': 'number',
    resources: 'string',
    'object-store-mb': 'number',
    'token-file': 'string',
    'temp-dir': 'string',
  });
  if (Boolean(f.head) === (f.join !== undefined))
    throw new UserError('ray start needs --head or --join HEAD:PORT (one of them)', { field: '--head' });
  const tokenFile = (f['token-file'] as string | undefined) ?? config().rayTokenFile;
  if (!tokenFile)
    throw new UserError('ray start needs the cluster token: --token-file FILE or TOOLSMITH_RAY_TOKEN_FILE', {
      field: '--token-file',
      fix: 'openssl rand -hex 32 > ~/.ray/auth_token && chmod 600 ~/.ray/auth_token (the same file on every node)',
    });
  readSecret(tokenFile, undefined, TOKEN_SOURCE); // readable, not empty; warns when others can read it
  let resources: Record<string, number> | undefined;
  if (f.resources !== undefined) {
    try {
      resources = JSON.parse(f.resources as string);
    } catch {
      throw new UserError(`--resources: not JSON (${f.resources})`, {
        field: '--resources',
        fix: `e.g. '{"toolsmith_sandbox": 1}'`,
      });
    }
    if (typeof resources !== 'object' || resources === null || Array.isArray(resources))
      throw new UserError('--resources: not a JSON object of resource amounts', { field: '--resources' });
  }
  const { rayStartInvocation } = await import('../workers/cluster/ray-start.ts');
  const { trainerPython } = await import('../workers/trainer/python.ts');
  const start = rayStartInvocation({
    join: f.join as string | undefined,
    address: f.address as string | undefined,
    port: f.port as number | undefined,
    dashboardPort: f['dashboard-port'] as number | undefined,
    cpus: f['num-cpus'] as number | undefined,
    gpus: f['num-gpus'] as number | undefined,
    resources,
    objectStoreBytes: f['object-store-mb'] === undefined ? undefined : (f['object-store-mb'] as number) * 2 ** 20,
    tempDir: f['temp-dir'] as string | undefined,
    tokenFile: path.resolve(tokenFile),
  });
  console.error(
    start.loopbackOnly
      ? 'every Ray port of this node is bound to 127.0.0.1: reachable from this machine only'
      : 'warning: Ray 2.60 binds its GCS, raylet and object manager on every interface for an address other than 127.0.0.1 (it has no option for it): keep the nodes on a trusted private network, or firewall the Ray ports',
  );
  if (start.dashboardUrl)
    console.error(
      `point Toolsmith at it: TOOLSMITH_RAY_ADDRESS=${start.dashboardUrl} TOOLSMITH_RAY_TOKEN_FILE=${path.resolve(tokenFile)}${start.loopbackOnly ? '' : `; other nodes: npx toolsmith ray start --join ${start.gcsAddress} --address THEIRS`}`,
    );
  const ray = path.join(path.dirname(trainerPython()), 'ray');
  const child = spawn(ray, start.args, { stdio: 'inherit', env: { ...process.env, ...start.env } });
  // `ray start --block` stops its processes on SIGTERM/SIGINT; pass ours on and wait for it.
  const forward = (sig: NodeJS.Signals) => child.kill(sig);
  process.on('SIGTERM', forward);
  process.on('SIGINT', forward);
  return new Promise((resolve, reject) => {
    child.once('error', (e) =>
      reject(new UserError(`cannot run ${ray}: ${e.message}`, { fix: 'node scripts/setup.mjs' })),
    );
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 0 : 1)));
  });
}

export const rayCommand: Command = {
  name: 'ray',
  summary: 'start a Ray head or node for runs placed on a cluster, bound to the address given (127.0.0.1 by default)',
  usage: `start --head|--join HEAD:PORT [options]

  ray start --head [--address A] [--port 6379] [--dashboard-port 8265] [--num-cpus N] [--num-gpus N]
                   [--resources JSON] [--object-store-mb M] [--token-file FILE] [--temp-dir DIR]
  ray start --join HEAD:PORT --address A [--num-cpus N] [--num-gpus N] [--resources JSON] [--object-store-mb M]
                   [--token-file FILE]
      runs the trainer environment's \`ray start --block\` in the foreground (SIGTERM/SIGINT stop the node) with
      token authentication on (the token's file: --token-file or TOOLSMITH_RAY_TOKEN_FILE, the same on every node).
      --address is the node's address, 127.0.0.1 by default: then every Ray port is bound to loopback and the node
      is reachable from this machine only (and the machine runs that one node, its head). Another address (the
      node's on a private network; --join needs one) is registered as given, but Ray binds its GCS, raylet and
      object manager on every interface: keep the nodes on a trusted network. The head prints the
      TOOLSMITH_RAY_ADDRESS to give the web server and workers.`,
  async run(args) {
    const [sub, ...rest] = args;
    if (sub === 'start') return rayStart(rest);
    throw new UserError(sub ? `unknown ray subcommand "${sub}"` : 'ray needs a subcommand', {
      fix: 'npx toolsmith ray start --head (see --help)',
    });
  },
};
