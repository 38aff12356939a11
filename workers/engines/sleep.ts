/**
 * Wait `ms`, or less once `signal` aborts; the abort listener is removed either way, so a loop that sleeps on one
 * long-lived signal for hours (a retry back-off, the Ray follower's poll) adds none that stay. In engines/, the floor
 * of workers/, so that any folder may use it.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });
}
