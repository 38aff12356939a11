// Requests to a running web server from a chosen loopback address (which peer the server sees), each over a fresh
// connection and timed, and a flood of wrong-password sign-ins: shared by the sign-in limits' test (what the limits
// do) and `npm run bench:signin` (how fast a signed-in request stays under the flood).
import { setMaxListeners } from 'node:events';
import http from 'node:http';

/** The address the test server trusts as a proxy (TOOLSMITH_TRUSTED_PROXIES), and another peer on the same loopback. */
export const TRUSTED = '127.0.0.1';
export const UNTRUSTED = '127.0.0.2';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  ms: number;
}

export interface RequestOptions {
  from?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | null;
  chunks?: Buffer[];
  signal?: AbortSignal;
}

/** A request over a fresh connection from `opts.from` (a loopback address; UNTRUSTED when not given). */
export function request(port: number, method: string, urlPath: string, opts: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...opts.headers };
    if (method !== 'GET') headers.origin ??= `http://127.0.0.1:${port}`;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: urlPath,
        headers,
        localAddress: opts.from ?? UNTRUSTED,
        agent: false,
        signal: opts.signal,
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: text, ms: performance.now() - t0 }),
        );
      },
    );
    req.on('error', reject);
    if (opts.chunks) {
      for (const c of opts.chunks) req.write(c);
      req.end();
    } else req.end(opts.body ?? undefined);
  });
}

export function signIn(
  port: number,
  email: string,
  password: string,
  from: string,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
) {
  return request(port, 'POST', '/api/auth/sign-in/email', {
    from,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ email, password }),
    signal,
  });
}

export const cookieOf = (r: Reply) => (r.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

let attacks = 0;
/**
 * `attackers` callers behind the trusted proxy, each with its own address and made-up account (so neither the
 * per-address limit nor the sign-in delays stop them: only the hash cap stands between them and the server), each
 * sending its next wrong sign-in as soon as the last is answered. `stop()` hangs them all up and returns the answers'
 * statuses by code. Addresses and accounts never repeat within a process.
 */
export function startFlood(port: number, attackers = 60) {
  const stop = new AbortController();
  setMaxListeners(attackers + 1, stop.signal); // every caller's request listens to the one signal
  let outstanding = 0;
  const statuses = new Map<number, number>();
  const attack = async () => {
    while (!stop.signal.aborted) {
      const i = attacks++;
      outstanding++;
      const r = await signIn(
        port,
        `flood${i}@example.com`,
        'not the password',
        TRUSTED,
        { 'x-forwarded-for': `100.64.${(i >> 8) & 255}.${i & 255}` },
        stop.signal,
      ).catch(() => null);
      outstanding--;
      if (r) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    }
  };
  const all = Array.from({ length: attackers }, attack);
  return {
    outstanding: () => outstanding,
    /** How many of the flood's sign-ins were answered with `status` so far. */
    answered: (status: number) => statuses.get(status) ?? 0,
    stop: async () => {
      stop.abort();
      await Promise.all(all);
      return statuses;
    },
  };
}
