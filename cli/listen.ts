import os from 'node:os';
import { UserError } from '../contracts/errors.ts';
import { isLoopbackAddress, LOOPBACK_HOSTS, parseHostList } from '../contracts/hosts.ts';

/** A server's failure to bind, as one line for a person (port taken, no such address); other errors pass through. */
export function listenError(e: unknown, host: string, port: number): unknown {
  const err = e as NodeJS.ErrnoException;
  if (err.code === 'EADDRINUSE')
    return new UserError(`port ${port} on ${host} is already in use`, { fix: 'pick another with --port' });
  if (err.code === 'EADDRNOTAVAIL')
    return new UserError(`cannot bind ${host}: no such local address`, {
      fix: "use --host 127.0.0.1, 0.0.0.0 or one of this machine's addresses",
    });
  return e;
}

/** Whether a bind address is reachable only from this machine. */
export function isLoopback(host: string): boolean {
  return isLoopbackAddress(host);
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);
const bracket = (a: string) => (a.includes(':') && !a.startsWith('[') ? `[${a}]` : a);

/**
 * The Host values an API service (serve-model, a sandbox node) answers to: the loopback names, the address it binds
 * (all of this machine's addresses and its host name for a wildcard bind), and the operator's `--allowed-hosts`.
 */
export function serviceAllowedHosts(host: string, extra: string | undefined): string[] {
  const out = new Set<string>(LOOPBACK_HOSTS);
  if (WILDCARDS.has(host.trim())) {
    for (const addrs of Object.values(os.networkInterfaces()))
      for (const a of addrs ?? []) out.add(bracket(a.address.toLowerCase()));
    out.add(os.hostname().toLowerCase());
  } else out.add(bracket(host.trim().toLowerCase()));
  if (extra !== undefined) {
    try {
      for (const h of parseHostList(extra, '--allowed-hosts')) out.add(h);
    } catch (e) {
      throw new UserError((e as Error).message);
    }
  }
  return [...out];
}
