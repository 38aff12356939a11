/**
 * What runs in front of Better Auth's handler (app/api/auth/[...all]/route.ts), beyond Better Auth's own
 * per-address rate limit (server/auth/auth.ts, keyed on the address the web server recorded):
 *  - bodies: the same cap as the rest of the API (TOOLSMITH_MAX_BODY_BYTES), declared or streamed → 413;
 *  - password sign-in: at most ACCOUNT_FAILURES wrong passwords per account (the lower-cased email, whatever the
 *    address) in the window, then 429 for that account, correct password included; and at most a few scrypt hashes
 *    at once, later ones queued and, past the queue, refused with 503, so a flood does not starve other requests;
 *  - one-time-link requests: limited per address and per email, and nothing is created for an email that has no
 *    account (the answer is the same, so it reveals nothing);
 *  - every refusal is counted (server/http/refusals.ts), never written to the database.
 * tests/integration/sign-in-limits.test.ts (against the real server) and tests/unit/sign-in-limits.test.ts.
 */
import os from 'node:os';
import { readCapped } from './limits.ts';
import { addressBucket, requestAddress } from './client-address.ts';
import { WindowLimiter, type WindowRule } from './window-limiter.ts';
import { ConcurrencyGate } from './concurrency-gate.ts';
import { refusals as processRefusals, type RefusalCounter } from './refusals.ts';

type Handler = (req: Request) => Promise<Response>;

export interface EdgeLimits {
  /** Wrong passwords per account (any address) before its sign-ins are refused for the rest of the window. */
  accountFailures: WindowRule;
  /** One-time-link requests per email, and per client address. */
  linkPerEmail: WindowRule;
  linkPerAddress: WindowRule;
  /** scrypt hashes computed at once (each ~32 MB on one of libuv's 4 threads), and how many more may wait. */
  hashConcurrency: number;
  hashQueue: number;
}

export const EDGE_LIMITS: EdgeLimits = {
  accountFailures: { max: 10, windowMs: 15 * 60_000 },
  linkPerEmail: { max: 3, windowMs: 15 * 60_000 },
  linkPerAddress: { max: 5, windowMs: 60_000 },
  // Half the cores, at most 2: the other libuv threads and cores stay free for everyone else's requests.
  hashConcurrency: Math.max(1, Math.min(2, Math.floor(os.availableParallelism() / 2))),
  hashQueue: 64,
};

export interface AuthEdge {
  limits: EdgeLimits;
  accountFailures: WindowLimiter;
  linkPerEmail: WindowLimiter;
  linkPerAddress: WindowLimiter;
  hashGate: ConcurrencyGate;
  refusals: RefusalCounter;
}

export function createAuthEdge(
  limits: EdgeLimits = EDGE_LIMITS,
  refusals: RefusalCounter = processRefusals,
  now?: () => number,
): AuthEdge {
  return {
    limits,
    accountFailures: new WindowLimiter(limits.accountFailures, { now }),
    linkPerEmail: new WindowLimiter(limits.linkPerEmail, { now }),
    linkPerAddress: new WindowLimiter(limits.linkPerAddress, { now }),
    hashGate: new ConcurrencyGate(limits.hashConcurrency, limits.hashQueue),
    refusals,
  };
}

// One per web process, on globalThis: Next may evaluate a module once per route bundle.
const holder = globalThis as unknown as { __toolsmithAuthEdge?: AuthEdge };
export function processAuthEdge(): AuthEdge {
  return (holder.__toolsmithAuthEdge ??= createAuthEdge());
}

export interface AuthEdgeOptions {
  maxBodyBytes: () => number;
  /** Whether an account has this (lower-cased) email. */
  knownEmail: (email: string) => Promise<boolean>;
}

/** A JSON error as Better Auth writes them (`message`, `code`), which the sign-in page shows. */
function refuse(status: number, code: string, message: string, retryAfterS?: number): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': 'no-store' };
  if (retryAfterS !== undefined) {
    headers['retry-after'] = String(retryAfterS);
    headers['x-retry-after'] = String(retryAfterS);
  }
  return new Response(JSON.stringify({ code, message }), { status, headers });
}

const minutes = (s: number) => (s < 90 ? `${s} s` : `${Math.ceil(s / 60)} minutes`);

function emailOf(body: unknown): string | null {
  const e = body && typeof body === 'object' ? (body as { email?: unknown }).email : undefined;
  return typeof e === 'string' && e.trim() !== '' ? e.trim().toLowerCase() : null;
}

export function withAuthEdge(betterAuth: Handler, edge: AuthEdge, opts: AuthEdgeOptions): Handler {
  const { refusals } = edge;
  const handler: Handler = async (req) => {
    const res = await betterAuth(req);
    if (res.status === 429) refusals.count('auth: address limit'); // Better Auth's own per-address limit
    return res;
  };

  async function passwordSignIn(req: Request, email: string): Promise<Response> {
    const held = edge.accountFailures.reserve(email);
    if (!held.ok) {
      refusals.count('sign-in: account limit');
      return refuse(
        429,
        'TOO_MANY_FAILED_SIGN_INS',
        `too many failed sign-ins for this account: try again in ${minutes(held.retryAfterS)}, or ask an admin for a one-time link (npx toolsmith user reset-link EMAIL)`,
        held.retryAfterS,
      );
    }
    const ran = await edge.hashGate.run(() => handler(req), req.signal);
    if (!ran.ok) {
      held.settle(false);
      refusals.count(ran.reason === 'busy' ? 'sign-in: busy' : 'sign-in: gone');
      return refuse(503, 'BUSY', 'the server is busy with other sign-ins: try again in a few seconds', 2);
    }
    // 401 is Better Auth's answer to a wrong email or password; anything else made no guess that counts.
    held.settle(ran.value.status === 401);
    return ran.value;
  }

  async function linkRequest(req: Request, email: string): Promise<Response> {
    const address = addressBucket(requestAddress(req.headers) ?? 'unknown');
    const byAddress = edge.linkPerAddress.hit(address);
    if (!byAddress.ok) {
      refusals.count('sign-in link: address limit');
      return refuse(
        429,
        'TOO_MANY_REQUESTS',
        `too many sign-in link requests from this address: try again in ${minutes(byAddress.retryAfterS)}`,
        byAddress.retryAfterS,
      );
    }
    const byEmail = edge.linkPerEmail.hit(email);
    if (!byEmail.ok) {
      refusals.count('sign-in link: email limit');
      return refuse(
        429,
        'TOO_MANY_REQUESTS',
        `too many sign-in link requests for this email: try again in ${minutes(byEmail.retryAfterS)}`,
        byEmail.retryAfterS,
      );
    }
    if (!(await opts.knownEmail(email))) {
      // Better Auth would store a Verification row for any email: answer as it does, and store nothing.
      refusals.count('sign-in link: unknown email');
      return new Response(JSON.stringify({ status: true }), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    }
    return handler(req);
  }

  return async (input) => {
    let req = input;
    const method = req.method.toUpperCase();
    let body: unknown;
    if (method !== 'GET' && method !== 'HEAD') {
      const limit = opts.maxBodyBytes();
      const length = req.headers.get('content-length');
      const tooLarge = () => {
        refusals.count('auth: body too large');
        return refuse(
          413,
          'PAYLOAD_TOO_LARGE',
          `the request body is over the limit of ${limit} bytes (TOOLSMITH_MAX_BODY_BYTES)`,
        );
      };
      if (length !== null && /^\d+$/.test(length.trim()) && Number(length) > limit) return tooLarge();
      const bytes = await readCapped(req.body, limit);
      if (bytes === null) return tooLarge();
      req = new Request(req.url, {
        method: req.method,
        headers: req.headers,
        body: bytes.byteLength > 0 ? bytes : null,
        signal: req.signal,
      });
      try {
        body = bytes.byteLength > 0 ? JSON.parse(new TextDecoder().decode(bytes)) : undefined;
      } catch {
        body = undefined;
      }
    }
    const path = new URL(req.url).pathname.replace(/^\/api\/auth/, '').replace(/\/+$/, '');
    const email = emailOf(body);
    if (method === 'POST' && path === '/sign-in/email' && email) return passwordSignIn(req, email);
    if (method === 'POST' && path === '/sign-in/magic-link' && email) return linkRequest(req, email);
    return handler(req);
  };
}
