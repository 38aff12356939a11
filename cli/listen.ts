import { UserError } from '../contracts/errors.ts';

/** A server's failure to bind, as one line for a person (port taken, no such address); other errors pass through. */
export function listenError(e: unknown, host: string, port: number): unknown {
  const err = e as NodeJS.ErrnoException;
  if (err.code === 'EADDRINUSE') return new UserError(`port ${port} on ${host} is already in use`, { fix: 'pick another with --port' });
  if (err.code === 'EADDRNOTAVAIL') return new UserError(`cannot bind ${host}: no such local address`, { fix: 'use --host 127.0.0.1, 0.0.0.0 or one of this machine\'s addresses' });
  return e;
}

/** Whether a bind address is reachable only from this machine. */
export function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1';
}
