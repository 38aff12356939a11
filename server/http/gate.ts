/**
 * The request gate every web request passes before Next routes it (proxy.ts calls it): pure functions of the
 * request's method, raw URL and headers, so they are tested without a server.
 *
 *  - Host must be an allowed host (DNS rebinding: a foreign name resolving to this server) → 421.
 *  - A path with a malformed percent-escape is refused here → 400, before a page or param decode can throw.
 *  - State-changing methods: no form or text bodies (the only kinds a cross-site page can POST without a CORS
 *    preflight) → 415; Origin (or Referer) must be this server, port included (originAllowed in contracts/hosts.ts)
 *    → 403; a script with `Authorization: Bearer` and no cookie may omit both (a cross-site page cannot set that
 *    header without a preflight); a declared Content-Length over the body cap → 413 before anything reads the body.
 */

import { hostAllowed, originAllowed, parseHost } from '../../contracts/hosts.ts';

export interface GateRequest {
  method: string;
  /** The request URL as received (path and query still percent-encoded). */
  url: string;
  headers: { get(name: string): string | null };
}

export interface GatePolicy {
  allowedHosts: string[];
  maxBodyBytes: number;
}

export interface GateRefusal {
  status: number;
  code: string;
  message: string;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The content types an HTML form or a no-cors fetch can send cross-site without a preflight. */
const SIMPLE_BODIES = ['multipart/form-data', 'application/x-www-form-urlencoded', 'text/plain'];

// The host checks are shared with serve-model and sandbox nodes (contracts/hosts.ts).
export { parseHost, hostAllowed };

function pathOf(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url);
  const rest = scheme ? url.slice(scheme[0].length) : url;
  const end = rest.search(/[?#]/);
  return end >= 0 ? rest.slice(0, end) : rest;
}

/** Whether every percent-escape of a path decodes (as UTF-8). */
export function wellFormedPath(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The refusal for a request, or null when it may go on. */
export function checkRequest(req: GateRequest, policy: GatePolicy): GateRefusal | null {
  const host = req.headers.get('host') ?? '';
  if (!hostAllowed(host, policy.allowedHosts)) {
    return {
      status: 421,
      code: 'MISDIRECTED_REQUEST',
      message: `this server does not answer to the host ${JSON.stringify(host.slice(0, 100))}; allowed hosts are set by TOOLSMITH_ALLOWED_HOSTS`,
    };
  }
  if (!wellFormedPath(pathOf(req.url))) {
    return { status: 400, code: 'BAD_REQUEST', message: 'the URL path has a malformed percent-escape' };
  }
  const method = req.method.toUpperCase();
  if (!STATE_CHANGING.has(method)) return null;

  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (SIMPLE_BODIES.includes(type)) {
    return {
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: `${method} bodies of type ${type} are not accepted; send application/json`,
    };
  }

  const origin = req.headers.get('origin');
  const referer = req.headers.get('referer');
  const source = origin ?? referer;
  if (source === null || source === '') {
    const bearer = /^bearer\s+\S/i.test(req.headers.get('authorization') ?? '');
    if (!(bearer && !req.headers.get('cookie'))) {
      return {
        status: 403,
        code: 'FORBIDDEN',
        message: `a ${method} request must carry an Origin (or Referer) header naming this server, or authenticate with Authorization: Bearer and no cookie`,
      };
    }
  } else {
    if (!originAllowed(source, host, policy.allowedHosts)) {
      return {
        status: 403,
        code: 'FORBIDDEN',
        message: `cross-origin ${method} refused: ${origin !== null ? 'Origin' : 'Referer'} ${JSON.stringify(source.slice(0, 200))} is not this server (${JSON.stringify(host.slice(0, 100))})`,
      };
    }
  }

  const length = req.headers.get('content-length');
  if (length !== null && /^\d+$/.test(length.trim()) && Number(length) > policy.maxBodyBytes) {
    return tooLarge(policy.maxBodyBytes);
  }
  return null;
}

export function tooLarge(limit: number): GateRefusal {
  return {
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    message: `the request body is over the limit of ${limit} bytes (TOOLSMITH_MAX_BODY_BYTES)`,
  };
}

/** The JSON body of a refusal, in the shape of a tRPC error so the tRPC client shows its message. */
export function refusalBody(r: GateRefusal): string {
  return JSON.stringify({ error: { message: r.message, code: -32600, data: { code: r.code, httpStatus: r.status } } });
}

/**
 * Headers on every response. Scripts run only with this response's nonce ('strict-dynamic' lets the scripts it
 * admits load Next's chunks): proxy.ts draws one per request and hands it to Next in the request's own CSP header,
 * and Next puts it on its bootstrap scripts (`self.__next_f.push`), so every page renders per request
 * (app/layout.tsx). Styles keep 'unsafe-inline': the charts and xterm set inline styles, and a style cannot run
 * code. Everything else is same-origin only, and no page may be framed. Without a nonce (a refusal, which has no
 * page) no script runs at all.
 */
export function securityHeaders(opts: { dev?: boolean; nonce?: string } = {}): Record<string, string> {
  const scripts = opts.nonce ? `'nonce-${opts.nonce}' 'strict-dynamic'` : "'none'";
  const csp = [
    "default-src 'self'",
    `script-src ${scripts}${opts.dev ? " 'unsafe-eval'" : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
    'X-Frame-Options': 'DENY',
  };
}
