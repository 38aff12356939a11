import { UserError } from '../contracts/errors.ts';
import { config } from '../server/config.ts';
import { reportFatal } from '../server/errors.ts';
import { isLoopback, listenError, serviceAllowedHosts } from './listen.ts';
import { parseFlags } from './args.ts';
import { readSecret, refuseSecretFlags, type SecretSource } from './secrets.ts';
import type { Command } from './command.ts';

/** Where the node's token comes from: never argv (any local user reads a process's command line). */
const TOKEN_SOURCE: SecretSource = {
  refused: ['token', 'api-key'],
  env: 'TOOLSMITH_SANDBOX_TOKEN',
  fileFlag: 'token-file',
};

/** `npx toolsmith sandbox run`: code on stdin → one SandboxResult as JSON on stdout; 0 whenever a result was produced. */
export async function sandboxRun(args: string[]): Promise<number> {
  const f = parseFlags(args, { timeout: 'number', memory: 'number' });
  const timeoutS = f.timeout as number | undefined;
  const memoryMb = f.memory as number | undefined;
  if (timeoutS !== undefined && !(timeoutS > 0 && timeoutS <= 3600))
    throw new UserError(`option --timeout: ${timeoutS} is not a number of seconds between 0 and 3600`);
  if (memoryMb !== undefined && !(Number.isInteger(memoryMb) && memoryMb > 0))
    throw new UserError(`option --memory: ${memoryMb} is not a positive whole number of MiB`);
  if (process.stdin.isTTY) console.error('toolsmith sandbox run: reading Python code from stdin (end with Ctrl-D)');
  const code = await readStdin();
  const { SandboxPool } = await import('../workers/sandbox/pool.ts');
  let pool;
  try {
    pool = await SandboxPool.start({ size: 1, log: (line) => console.error(`[sandbox] ${line}`) });
  } catch (e) {
    // No result could be produced: not a bad flag, so 1 rather than 2.
    reportFatal('toolsmith sandbox run', e);
    return 1;
  }
  try {
    const result = await pool.run({
      code,
      ...(timeoutS !== undefined ? { timeoutS } : {}),
      ...(memoryMb !== undefined ? { memoryMb } : {}),
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } finally {
    await pool.close();
  }
}

/** `npx toolsmith sandbox serve`: a SandboxPool behind an HTTP node; resolves (0) once a signal has shut it down. */
export async function sandboxServe(args: string[]): Promise<number> {
  refuseSecretFlags(args, TOKEN_SOURCE);
  const f = parseFlags(args, {
    port: 'number',
    host: 'string',
    'token-file': 'string',
    size: 'number',
    'max-body-mb': 'number',
    'allowed-hosts': 'string',
    'max-memory-mb': 'number',
    'max-timeout-s': 'number',
    'max-output-mb': 'number',
  });
  const token = readSecret(f['token-file'] as string | undefined, config().sandboxToken, TOKEN_SOURCE);
  if (!token)
    throw new UserError('sandbox serve needs a token: the node runs arbitrary code for whoever holds it', {
      fix: 'set TOOLSMITH_SANDBOX_TOKEN or pass --token-file FILE (e.g. `openssl rand -hex 32 > FILE; chmod 600 FILE`)',
    });
  for (const k of ['max-memory-mb', 'max-timeout-s', 'max-output-mb'] as const) {
    const v = f[k] as number | undefined;
    if (v !== undefined && !(v > 0))
      throw new UserError(`option --${k}: ${v} is not a positive number`, { field: `--${k}` });
  }
  const limits = {
    memoryMb: f['max-memory-mb'] as number | undefined,
    timeoutS: f['max-timeout-s'] as number | undefined,
    maxOutputBytes:
      f['max-output-mb'] === undefined ? undefined : Math.round((f['max-output-mb'] as number) * 1024 * 1024),
  };
  const port = (f.port as number | undefined) ?? 8700;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UserError(`option --port: ${port} is not a port number (0-65535; 0 picks a free one)`);
  const size = f.size as number | undefined;
  if (size !== undefined && !(Number.isInteger(size) && size > 0))
    throw new UserError(`option --size: ${size} is not a positive whole number`);
  const maxBodyMb = f['max-body-mb'] as number | undefined;
  if (maxBodyMb !== undefined && !(maxBodyMb > 0))
    throw new UserError(`option --max-body-mb: ${maxBodyMb} is not a positive number`);
  const host = typeof f.host === 'string' ? f.host : '127.0.0.1';
  const allowedHosts = serviceAllowedHosts(host, f['allowed-hosts'] as string | undefined);

  const { SandboxPool } = await import('../workers/sandbox/pool.ts');
  const { SandboxNode } = await import('../workers/sandbox/http-node.ts');
  // A call that names no limit gets the pool's defaults: keep those within the node's maxima too.
  const pool = await SandboxPool.start({
    size,
    ...(limits.memoryMb !== undefined ? { memoryMb: Math.min(1024, limits.memoryMb) } : {}),
    ...(limits.timeoutS !== undefined ? { timeoutS: Math.min(4, limits.timeoutS) } : {}),
  });
  const node = new SandboxNode({
    sandbox: pool,
    token,
    host,
    port,
    limits,
    allowedHosts,
    maxBodyBytes: maxBodyMb ? Math.round(maxBodyMb * 1024 * 1024) : undefined,
  });
  let addr;
  try {
    addr = await node.listen();
  } catch (e) {
    await pool.close();
    throw listenError(e, host, port);
  }
  const st = pool.status();
  console.log(
    `sandbox node listening on ${addr.url} (${st.alive}/${st.size} interpreters${st.unsafe ? ', UNSAFE: no isolation' : ''}; per call at most ${node.limits.memoryMb} MiB, ${node.limits.timeoutS} s, ${node.limits.maxOutputBytes} output bytes)`,
  );
  if (!isLoopback(host)) {
    console.error(
      'toolsmith sandbox serve: serving plain HTTP beyond this machine; the token travels in clear, so keep it on a private network',
    );
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        console.error(`toolsmith sandbox serve: second ${signal}, exiting now`);
        process.exit(1);
      }
      stopping = true;
      console.log(`sandbox node: ${signal}, finishing calls in flight and stopping`);
      void (async () => {
        await node.close(30000);
        await pool.close();
        console.log('sandbox node stopped');
        resolve(0);
      })();
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

/** `npx toolsmith sandbox run|serve`. */
export const sandboxCommand: Command = {
  name: 'sandbox',
  summary: 'the Python code sandbox: run one call from stdin, or serve a pool over HTTP for other machines',
  usage: `run|serve [options]

  sandbox run [--timeout S] [--memory MB]
      reads Python code from stdin, runs it in a one-interpreter pool, prints the SandboxResult as one JSON
      object on stdout; exits 0 whenever a result was produced, whatever its status (2 for bad options)

  sandbox serve [--token-file FILE] [--port P] [--host H] [--size N] [--allowed-hosts H,H]
                [--max-memory-mb M] [--max-timeout-s S] [--max-output-mb B]
      serves a sandbox pool over HTTP (POST /run, POST /run/batch, GET /health, GET /metrics; every route needs
      Authorization: Bearer TOKEN). The token comes from TOOLSMITH_SANDBOX_TOKEN or the first line of --token-file,
      never the command line; without one it refuses to start. Binds 127.0.0.1:8700 by default (--host 0.0.0.0 to
      serve other machines; Host names beyond this machine's addresses: --allowed-hosts). A call asking for more
      than --max-memory-mb (4096), --max-timeout-s (600) or --max-output-mb (64) is refused with 400. SIGTERM/SIGINT
      stop it cleanly. Workers use the nodes when TOOLSMITH_SANDBOX_URLS=http://host:port,... and
      TOOLSMITH_SANDBOX_TOKEN are set.`,
  async run(args) {
    const [sub, ...rest] = args;
    if (sub === 'run') return sandboxRun(rest);
    if (sub === 'serve') return sandboxServe(rest);
    throw new UserError(sub ? `unknown sandbox subcommand "${sub}"` : 'sandbox needs a subcommand', {
      fix: 'use `npx toolsmith sandbox run` or `npx toolsmith sandbox serve` (see --help)',
    });
  },
};
