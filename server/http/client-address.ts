/**
 * The client's address, decided once per request by the web server (scripts/web-server.mjs) and handed to the app in
 * one private header that only that server sets (any copy a client sends is dropped first). The address is the TCP
 * peer's, unless the peer is one of TOOLSMITH_TRUSTED_PROXIES: then X-Forwarded-For is read from the right, skipping
 * trusted proxies, and the first address no trusted proxy vouches for is the client (everything left of it was
 * written by the client and is ignored). Sign-in rate limits and the audit log read only this header.
 * Pure functions (node:net's parser and BlockList, no I/O): tests/unit/client-address.test.ts.
 */
import net from 'node:net';

/** Set by the web server on every request; never believed from a client. */
export const CLIENT_ADDRESS_HEADER = 'x-toolsmith-client-address';

export interface TrustedProxies {
  /** The entries as given (for messages). */
  entries: string[];
  list: net.BlockList;
}

const DIGITS = /^\d{1,3}$/;

/** A bare IPv4 or IPv6 address, IPv4-mapped IPv6 (`::ffff:10.0.0.1`) as its IPv4 form; null when it is not one. */
export function normalizeAddress(value: string): string | null {
  let v = value.trim();
  if (v.startsWith('[') && v.endsWith(']')) v = v.slice(1, -1);
  v = v.replace(/%[^%]*$/, ''); // an IPv6 zone (fe80::1%eth0) names the interface, not the client
  const kind = net.isIP(v);
  if (kind === 0) return null;
  if (kind === 4) return v;
  const g = ipv6Groups(v);
  // IPv4-mapped (::ffff:a.b.c.d, however spelled): the IPv4 peer it is, so one client has one spelling.
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff)
    return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  return v.toLowerCase();
}

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted IPv4 part counts as two). */
function ipv6Groups(v: string): number[] {
  let s = v.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? (s.split('::') as [string, string]) : [s, null];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === null ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((x) => parseInt(x, 16));
}

/**
 * TOOLSMITH_TRUSTED_PROXIES: comma-separated IP addresses or CIDR ranges (`127.0.0.1`, `10.0.0.0/8`, `::1`,
 * `fd00::/8`). Unset or empty: no proxy is trusted and X-Forwarded-For is never read. Throws naming the variable,
 * the entry and what is wrong with it.
 */
export function parseTrustedProxies(raw: string | undefined, name = 'TOOLSMITH_TRUSTED_PROXIES'): TrustedProxies {
  const list = new net.BlockList();
  const entries = (raw ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const addrPart = slash < 0 ? entry : entry.slice(0, slash);
    const address = normalizeAddress(addrPart);
    if (address === null) {
      throw new Error(
        `${name}: ${JSON.stringify(entry)} is not an IP address or CIDR range — give e.g. 127.0.0.1,10.0.0.0/8,::1 (host names are not accepted)`,
      );
    }
    const family = net.isIPv4(address) ? 'ipv4' : 'ipv6';
    if (slash < 0) {
      list.addAddress(address, family);
      continue;
    }
    const written = net.isIPv4(addrPart) ? 'IPv4' : 'IPv6';
    const maxBits = written === 'IPv4' ? 32 : 128;
    const prefixText = entry.slice(slash + 1);
    const prefix = Number(prefixText);
    if (!DIGITS.test(prefixText) || prefix > maxBits) {
      throw new Error(
        `${name}: ${JSON.stringify(entry)} has prefix length ${JSON.stringify(prefixText)}; an ${written} range takes 0 to ${maxBits}`,
      );
    }
    // An IPv4-mapped range such as ::ffff:10.0.0.0/104 names IPv4 peers (peers are compared in their IPv4 form).
    const bits = family === 'ipv4' && written === 'IPv6' ? prefix - 96 : prefix;
    if (bits < 0)
      throw new Error(
        `${name}: ${JSON.stringify(entry)} is wider than the IPv4-mapped range it names; list IPv4 and IPv6 ranges separately`,
      );
    list.addSubnet(address, bits, family);
  }
  return { entries, list };
}

export function isTrusted(address: string, trusted: TrustedProxies): boolean {
  if (trusted.entries.length === 0) return false;
  const a = normalizeAddress(address);
  if (a === null) return false;
  return trusted.list.check(a, net.isIPv4(a) ? 'ipv4' : 'ipv6');
}

/** One X-Forwarded-For element: an address, optionally `[v6]`, `[v6]:port` or `v4:port` (some proxies add ports). */
function forwardedAddress(element: string): string | null {
  const e = element.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(e);
  if (bracketed) return normalizeAddress(bracketed[1]!);
  const v4port = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(e);
  return normalizeAddress(v4port ? v4port[1]! : e);
}

/**
 * The client's address for a request whose TCP peer is `peer`. Only a trusted peer's X-Forwarded-For counts, read
 * right to left past trusted proxies. An element that is not an address where one must be (only a trusted proxy
 * writes those positions) makes the nearest trusted hop the answer rather than anything the client wrote.
 */
export function clientAddress(
  peer: string | undefined | null,
  forwardedFor: string | string[] | undefined | null,
  trusted: TrustedProxies,
): string {
  const socket = (peer && normalizeAddress(peer)) || 'unknown';
  if (socket === 'unknown' || !isTrusted(socket, trusted) || !forwardedFor) return socket;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  let nearest = socket;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = forwardedAddress(hops[i]!);
    if (hop === null) return nearest;
    if (!isTrusted(hop, trusted)) return hop;
    nearest = hop;
  }
  // Every hop was a trusted proxy: the left-most is as close to the client as anything says.
  return nearest;
}

/**
 * The rate-limit bucket of an address: IPv4 as it is, IPv6 by its /64 (one subscriber's whole prefix, which is what
 * one client can rotate through; Better Auth buckets its own limits the same way).
 */
export function addressBucket(address: string): string {
  const a = normalizeAddress(address);
  if (a === null || net.isIPv4(a)) return a ?? address;
  return `${ipv6Groups(a)
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The client's address as the web server recorded it; null when the request did not come through it. */
export function requestAddress(headers: { get(name: string): string | null }): string | null {
  const v = headers.get(CLIENT_ADDRESS_HEADER)?.trim();
  return v ? v.slice(0, 100) : null;
}
