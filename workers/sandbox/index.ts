import { UserError } from '../../contracts/errors.ts';
import { config } from '../../server/config.ts';
import { SandboxPool, type PoolOptions } from './pool.ts';
import { parseNodeUrls, RemoteSandbox, type RemoteOptions } from './remote.ts';
import type { Sandbox } from './types.ts';

export type { Sandbox, SandboxCall, SandboxResult, RunOptions } from './types.ts';
export type { CallStatus } from '../../contracts/trajectory.ts';

export interface CreateSandboxOptions {
  pool?: PoolOptions;
  remote?: Omit<RemoteOptions, 'urls' | 'token'>;
  /** The environment to read TOOLSMITH_SANDBOX_URLS/TOKEN from (default: this process's, through server/config.ts). */
  env?: Record<string, string | undefined>;
}

/**
 * The sandbox the workers use. With TOOLSMITH_SANDBOX_URLS (comma-separated node URLs, each a
 * `npx toolsmith sandbox serve`) it is a RemoteSandbox over those nodes, authenticated with
 * TOOLSMITH_SANDBOX_TOKEN; otherwise a local SandboxPool. Both implement the same Sandbox interface.
 */
export async function createSandbox(opts: CreateSandboxOptions = {}): Promise<Sandbox> {
  const cfg = config(opts.env);
  const raw = cfg.sandboxUrls;
  if (!raw) return SandboxPool.start(opts.pool);
  let urls: string[];
  try {
    urls = parseNodeUrls(raw);
  } catch (e) {
    throw new UserError(`TOOLSMITH_SANDBOX_URLS: ${(e as Error).message}`, {
      fix: 'give comma-separated node URLs such as http://10.0.0.5:8700,http://10.0.0.6:8700',
    });
  }
  if (urls.length === 0)
    throw new UserError('TOOLSMITH_SANDBOX_URLS lists no URL', {
      fix: 'give comma-separated node URLs, or unset it to use a local pool',
    });
  const token = cfg.sandboxToken;
  if (!token)
    throw new UserError('TOOLSMITH_SANDBOX_URLS is set but TOOLSMITH_SANDBOX_TOKEN is not', {
      fix: 'set TOOLSMITH_SANDBOX_TOKEN to the token the nodes were started with',
    });
  return new RemoteSandbox({ ...opts.remote, urls, token });
}
