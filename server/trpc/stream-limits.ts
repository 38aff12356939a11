import { TRPCError } from '@trpc/server';

/**
 * Open live streams per key (a user id): each one polls the database for as long as it is open, so a client that
 * opens hundreds would load the server for everyone. In this process only: each web server counts its own.
 */
const open = new Map<string, number>();

export function openStreams(key: string): number {
  return open.get(key) ?? 0;
}

/**
 * Count one more stream for `key`, or TOO_MANY_REQUESTS when `limit` are open. Returns the release, which is
 * idempotent: call it when the stream ends, however it ends (completion, error, abort).
 */
export function acquireStream(key: string, limit: number, what = 'live streams'): () => void {
  const n = openStreams(key);
  if (n >= limit) {
    throw new TRPCError({
      code: 'TOO_MANY_REQUESTS',
      message: `too many ${what} open: ${n} of at most ${limit} per user (TOOLSMITH_MAX_STREAMS_PER_USER); close a run page or tab first`,
    });
  }
  open.set(key, n + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = openStreams(key) - 1;
    if (left > 0) open.set(key, left);
    else open.delete(key);
  };
}
