/**
 * What runs in front of Better Auth's handler (app/api/auth/[...all]/route.ts), beyond Better Auth's own
 * per-address rate limit (server/auth/auth.ts, keyed on the address the web server recorded):
 *  - bodies: the same cap as the rest of the API (TOOLSMITH_MAX_BODY_BYTES), declared or streamed → 413;
 *  - password sign-in: at most 5 a minute per client address in this process (before anything is written), and
 *    growing delays after repeated failures, per address and per account (the lower-cased email)
 *    but never a lock, counted in the database so every web server shares them and a restart keeps them
 *    (server/http/sign-in-throttle.ts, server/store/sign-in-throttle.ts), answered 429 with Retry-After alike for
 *    known and unknown emails; and at most a few scrypt hashes at once, later ones queued and, past the queue,
 *    refused with 503, so a flood does not starve other requests;
 *  - one-time-link requests: limited per address and per email, and nothing is created for an email that has no
 *    account (the answer is the same, so it reveals nothing);
 *  - every refusal is counted (server/http/refusals.ts), never written to the database.
 * tests/integration/sign-in-limits.test.ts (against the real server), tests/integration/sign-in-throttle.test.ts
 * (several instances over one database) and tests/unit/sign-in-limits.test.ts.
 */
import os from 'node:os';
import { readCapped } from './limits.ts';
import { addressBucket, requestAddress } from './client-address.ts';
import { WindowLimiter, type WindowRule } from './window-limiter.ts';
import { ConcurrencyGate, type GateResult } from './concurrency-gate.ts';
import { refusals as processRefusals, type RefusalCounter } from './refusals.ts';
import type { SignInAttempts } from '../store/sign-in-throttle.ts';

type Handler = (req: Request) => Promise<Response>;

export interface EdgeLimits {
  /**
   * Password sign-ins per client address, counted here before the throttle writes its row: Better Auth's own limit
   * (the same numbers) runs only after that, so without this one address could write rows as fast as it can send
   * made-up emails.
   */
  signInPerAddress: WindowRule;
  /** One-time-link requests per email, and per client address. */
  linkPerEmail: WindowRule;
  linkPerAddress: WindowRule;
  /** scrypt hashes computed at once (each ~32 MB on one of libuv's 4 threads), and how many more may wait. */
  hashConcurrency: number;
  hashQueue: number;
}

export const EDGE_LIMITS: EdgeLimits = {
  signInPerAddress: { max: 5, windowMs: 60_000 },
  linkPerEmail: { max: 3, windowMs: 15 * 60_000 },
  linkPerAddress: { max: 5, windowMs: 60_000 },
  // Half the cores, at most 2: the other libuv threads and cores stay free for everyone else's requests.
  hashConcurrency: Math.max(1, Math.min(2, Math.floor(os.availableParallelism() / 2))),
  hashQueue: 64,
};

export interface AuthEdge {
  limits: EdgeLimits;
  signInPerAddress: WindowLimiter;
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
    signInPerAddress: new WindowLimiter(limits.signInPerAddress, { now }),
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
  /** Password sign-in attempts, counted in the database (server/store/sign-in-throttle.ts's storedAttempts). */
  attempts: SignInAttempts;
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

const MAX_EMAIL_LENGTH = 254;

const minutes = (s: number) => (s < 90 ? `${s} s` : `${Math.ceil(s / 60)} minutes`);

function emailOf(body: unknown): string | null {
  const e = body && typeof body === 'object' ? (body as { email?: unknown }).email : undefined;
  return typeof e === 'string' && e.trim() !== '' ? e.trim().toLowerCase() : null;
}

/** A password sign-in: the per-address limit, the failure delays, then Better Auth behind the hash gate. */
async function passwordSignIn(
  handler: Handler,
  edge: AuthEdge,
  opts: AuthEdgeOptions,
  req: Request,
  email: string,
): Promise<Response> {
  const { refusals } = edge;
  const address = addressBucket(requestAddress(req.headers) ?? 'unknown');
  const byAddress = edge.signInPerAddress.hit(address);
  if (!byAddress.ok) {
    refusals.count('sign-in: address limit');
    return refuse(
      429,
      'TOO_MANY_REQUESTS',
      `too many sign-in attempts from this address: try again in ${minutes(byAddress.retryAfterS)}`,
      byAddress.retryAfterS,
    );
  }
  const held = await opts.attempts.claim(email, address);
  if (!held.ok) {
    // The same words for an email with no account: the answer must not tell which emails have one.
    refusals.count(`sign-in: ${held.scope} delay`);
    return refuse(
      429,
      'TOO_MANY_FAILED_SIGN_INS',
      `too many failed sign-ins: try again in ${minutes(held.retryAfterS)}, or ask an admin for a one-time link (npx toolsmith user reset-link EMAIL)`,
      held.retryAfterS,
    );
  }
  let ran: GateResult<Response>;
  try {
    ran = await edge.hashGate.run(() => handler(req), req.signal);
  } catch (e) {
    await opts.attempts.settle(email, address, 'not-checked'); // a failure of ours is no guess of theirs
    throw e;
  }
  if (!ran.ok) {
    await opts.attempts.settle(email, address, 'not-checked');
    refusals.count(ran.reason === 'busy' ? 'sign-in: busy' : 'sign-in: gone');
    return refuse(503, 'BUSY', 'the server is busy with other sign-ins: try again in a few seconds', 2);
  }
  // 401 is Better Auth's answer to a wrong email or password; anything else but a success made no guess that counts
  // (its own per-address 429, a disabled account's refusal).
  const status = ran.value.status;
  await opts.attempts.settle(email, address, status === 401 ? 'failure' : status === 200 ? 'success' : 'not-checked');
  return ran.value;
}

/** A one-time-link request: limited per address and per email, and nothing stored for an unknown email. */
async function linkRequest(
  handler: Handler,
  edge: AuthEdge,
  opts: AuthEdgeOptions,
  req: Request,
  email: string,
): Promise<Response> {
  const { refusals } = edge;
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

/**
 * A request's body read under the limit, with the request rebuilt around the bytes read and the body parsed as
 * JSON (undefined when it is not); a 413 when it is over the limit.
 */
async function readBody(
  req: Request,
  opts: AuthEdgeOptions,
  refusals: RefusalCounter,
): Promise<{ req: Request; body: unknown } | Response> {
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
  const read = new Request(req.url, {
    method: req.method,
    headers: req.headers,
    body: bytes.byteLength > 0 ? bytes : null,
    signal: req.signal,
  });
  try {
    return { req: read, body: bytes.byteLength > 0 ? JSON.parse(new TextDecoder().decode(bytes)) : undefined };
  } catch {
    return { req: read, body: undefined };
  }
}

export function withAuthEdge(betterAuth: Handler, edge: AuthEdge, opts: AuthEdgeOptions): Handler {
  const { refusals } = edge;
  const handler: Handler = async (req) => {
    const res = await betterAuth(req);
    if (res.status === 429) refusals.count('auth: address limit'); // Better Auth's own per-address limit
    return res;
  };

  return async (input) => {
    let req = input;
    const method = req.method.toUpperCase();
    let body: unknown;
    if (method !== 'GET' && method !== 'HEAD') {
      const read = await readBody(req, opts, refusals);
      if (read instanceof Response) return read;
      ({ req, body } = read);
    }
    const path = new URL(req.url).pathname.replace(/^\/api\/auth/, '').replace(/\/+$/, '');
    const email = emailOf(body);
    // No address is longer (RFC 5321): refused before it could become a stored key.
    if (email && email.length > MAX_EMAIL_LENGTH) {
      refusals.count('auth: email too long');
      return refuse(400, 'INVALID_EMAIL', `the email is longer than ${MAX_EMAIL_LENGTH} characters`);
    }
    if (method === 'POST' && path === '/sign-in/email' && email) return passwordSignIn(handler, edge, opts, req, email);
    if (method === 'POST' && path === '/sign-in/magic-link' && email)
      return linkRequest(handler, edge, opts, req, email);
    return handler(req);
  };
}
