import { UserError } from '../contracts/errors.ts';
import { config } from '../server/config.ts';
import { reportFatal } from '../server/errors.ts';
import { isLoopback, listenError } from './listen.ts';
import { parseFlags } from './args.ts';

/** `npx toolsmith sandbox run`: code on stdin → one SandboxResult as JSON on stdout; 0 whenever a result was produced. */
export async function sandboxRun(args: string[]): Promise<number> {
  const f = parseFlags(args, { timeout: 'number', memory: 'number' });
  const timeoutS = f.timeout as number | undefined;
  const memoryMb = f.memory as number | undefined;
  if (timeoutS !== undefined && !(timeoutS > 0 && timeoutS <= 3600)) throw new UserError(`option --timeout: ${timeoutS} is not a number of seconds between 0 and 3600`);
  if (memoryMb !== undefined && !(Number.isInteger(memoryMb) && memoryMb > 0)) throw new UserError(`option --memory: ${memoryMb} is not a positive whole number of MiB`);
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
    const result = await pool.run({ code, ...(timeoutS !== undefined ? { timeoutS } : {}), ...(memoryMb !== undefined ? { memoryMb } : {}) });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } finally {
    await pool.close();
  }
}

/** `npx toolsmith sandbox serve`: a SandboxPool behind an HTTP node; resolves (0) once a signal has shut it down. */
export async function sandboxServe(args: string[]): Promise<number> {
  const f = parseFlags(args, { port: 'number', host: 'string', token: 'string', size: 'number', 'max-body-mb': 'number' });
  const token = (typeof f.token === 'string' ? f.token : config().sandboxToken ?? '').trim();
  if (!token) throw new UserError('sandbox serve needs a token: the node runs arbitrary code for whoever holds it', { fix: 'pass --token T or set TOOLSMITH_SANDBOX_TOKEN (e.g. `openssl rand -hex 32`)' });
  const port = (f.port as number | undefined) ?? 8700;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`option --port: ${port} is not a port number (0-65535; 0 picks a free one)`);
  const size = f.size as number | undefined;
  if (size !== undefined && !(Number.isInteger(size) && size > 0)) throw new UserError(`option --size: ${size} is not a positive whole number`);
  const maxBodyMb = f['max-body-mb'] as number | undefined;
  if (maxBodyMb !== undefined && !(maxBodyMb > 0)) throw new UserError(`option --max-body-mb: ${maxBodyMb} is not a positive number`);
  const host = typeof f.host === 'string' ? f.host : '127.0.0.1';

  const { SandboxPool } = await import('../workers/sandbox/pool.ts');
  const { SandboxNode } = await import('../workers/sandbox/http-node.ts');
  const pool = await SandboxPool.start({ size });
  const node = new SandboxNode({ sandbox: pool, token, host, port, maxBodyBytes: maxBodyMb ? Math.round(maxBodyMb * 1024 * 1024) : undefined });
  let addr;
  try {
    addr = await node.listen();
  } catch (e) {
    await pool.close();
    throw listenError(e, host, port);
  }
  const st = pool.status();
  console.log(`sandbox node listening on ${addr.url} (${st.alive}/${st.size} interpreters${st.unsafe ? ', UNSAFE: no isolation' : ''})`);
  if (!isLoopback(host)) {
    console.error('toolsmith sandbox serve: serving plain HTTP beyond this machine; the token travels in clear, so keep it on a private network');
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
