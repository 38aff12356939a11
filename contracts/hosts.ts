/**
 * Host and Origin checks shared by every HTTP server Toolsmith runs: the web app's gate (server/http/gate.ts) and the
 * API services a worker or a person starts (serve-model's OpenAI-compatible server, sandbox nodes). Pure functions
 * of header values, so they are tested without a server.
 *
 *  - Host must name this server (DNS rebinding: a foreign name that resolves to it) → 421.
 *  - An Origin that is not an allowed host (a web page anywhere, `null` from a sandboxed frame or file://) → 403:
 *    browsers send Origin on every cross-origin fetch and every POST, and no browser page has business with an
 *    API service, so any foreign one is refused whatever the method.
 */

/** `host` or `host:port` (IPv6 in brackets), lower-cased; null when the value is not one. */
export function parseHost(value: string): { name: string; port: string | null } | null {
  const v = value.trim().toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]/\s@]+)(?::(\d{1,5}))?$/.exec(v);
  return m ? { name: m[1]!, port: m[2] ?? null } : null;
}

/** An allowed entry without a port admits the name on any port; with one, only that port. */
export function hostAllowed(value: string, allowed: readonly string[]): boolean {
  const h = parseHost(value);
  if (!h) return false;
  return allowed.some((entry) => {
    const a = parseHost(entry);
    return a !== null && a.name === h.name && (a.port === null || a.port === h.port);
  });
}

/** The host[:port] of an Origin or Referer value; null for `null`, opaque or unparsable origins. */
export function hostOfUrl(value: string): string | null {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.host : null;
  } catch {
    return null;
  }
}

/**
 * Whether a browser page at `origin` (an Origin or Referer value) may send state-changing requests to a server
 * reached as `host`. The page must be this server: the same name and port as the Host header (the loopback names
 * count as one name, on the same port), or an allowed entry named exactly, port included, that is not a loopback
 * name (the public name behind a proxy). A portless loopback entry admits any port for Host, but a page on another
 * local port is another program (a dev server, a notebook), not this one.
 */
export function originAllowed(origin: string, host: string, allowed: readonly string[]): boolean {
  const fromHost = hostOfUrl(origin);
  const from = fromHost === null ? null : parseHost(fromHost);
  const to = parseHost(host);
  if (!from || !to) return false;
  const loopback = (name: string) => (LOOPBACK_HOSTS as readonly string[]).includes(name);
  if (from.port === to.port && (from.name === to.name || (loopback(from.name) && loopback(to.name)))) return true;
  return allowed.some((entry) => {
    const a = parseHost(entry);
    return a !== null && !loopback(a.name) && a.name === from.name && a.port === from.port;
  });
}

/** The loopback names a local client may use. */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'] as const;

/** Whether a listen address is reachable only from this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackAddress(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/**
 * Whether a service bound to `host` may start with the token it has: beyond loopback anyone on the network can
 * reach it, so a token is required there. Returns the refusal's message, or null.
 */
export function bindRefusal(
  host: string,
  hasToken: boolean,
  what: { service: string; tokenHow: string },
): string | null {
  if (hasToken || isLoopbackAddress(host)) return null;
  return `${what.service} listens on ${host}, reachable beyond this machine, but has no token: ${what.tokenHow}, or bind to 127.0.0.1`;
}

export interface ServiceRefusal {
  status: 421 | 403;
  message: string;
}

/** The Host/Origin refusal for a request to an API service, or null when it may go on (authentication is next). */
export function checkServiceRequest(
  headers: { host?: string; origin?: string },
  allowedHosts: readonly string[],
): ServiceRefusal | null {
  const host = headers.host ?? '';
  if (!hostAllowed(host, allowedHosts)) {
    return {
      status: 421,
      message: `this server does not answer to the host ${JSON.stringify(host.slice(0, 100))} (allowed: ${allowedHosts.join(', ')}; add names with --allowed-hosts)`,
    };
  }
  const origin = headers.origin;
  if (origin !== undefined) {
    if (!originAllowed(origin, host, allowedHosts)) {
      return {
        status: 403,
        message: `cross-origin request refused: Origin ${JSON.stringify(origin.slice(0, 200))} is not an allowed host`,
      };
    }
  }
  return null;
}

/** Parse a comma-separated host[:port] list (a flag's value); throws naming the bad entry. */
export function parseHostList(raw: string, field: string): string[] {
  return raw
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean)
    .map((e) => {
      if (!parseHost(e))
        throw new Error(
          `${field}: ${JSON.stringify(e)} is not a host[:port] — give names such as gpu-box,10.0.0.5:8000 (IPv6 in brackets: [::1])`,
        );
      return e;
    });
}
