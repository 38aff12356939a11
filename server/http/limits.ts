import { refusalBody, tooLarge, type GateRefusal } from './gate.ts';

/**
 * Transport limits in front of the tRPC fetch handler: a batch may name at most `maxBatch` procedures, a body may
 * be at most `maxBodyBytes` (a declared Content-Length is refused before reading; a chunked body is read up to
 * the limit and refused there, so nothing larger is ever held), and a POST body must be JSON.
 */
export interface Limits {
  maxBodyBytes: number;
  maxBatch: number;
}

type Handler = (req: Request) => Promise<Response>;

/** How many procedure calls a tRPC URL names (`/api/trpc/a,b,c?batch=1` → 3). */
export function callCount(url: string, endpoint = '/api/trpc'): number {
  const { pathname } = new URL(url, 'http://x');
  const paths = pathname.startsWith(`${endpoint}/`) ? pathname.slice(endpoint.length + 1) : '';
  return paths === '' ? 0 : paths.split(',').length;
}

function refuse(r: GateRefusal): Response {
  return new Response(refusalBody(r), {
    status: r.status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  });
}

/** Read a body, giving up (null) once it passes `limit` bytes. */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<Uint8Array<ArrayBuffer> | null> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

export function withLimits(handler: Handler, limits: () => Limits): Handler {
  return async (req) => {
    const { maxBodyBytes, maxBatch } = limits();
    const calls = callCount(req.url);
    if (calls > maxBatch) {
      return refuse({
        status: 400,
        code: 'BAD_REQUEST',
        message: `a batch may carry at most ${maxBatch} calls (TOOLSMITH_MAX_BATCH); this one has ${calls}`,
      });
    }
    if (req.method !== 'POST') return handler(req);
    const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const length = req.headers.get('content-length');
    if (length !== null && Number(length) > maxBodyBytes) return refuse(tooLarge(maxBodyBytes));
    const body = await readCapped(req.body, maxBodyBytes);
    if (body === null) return refuse(tooLarge(maxBodyBytes));
    if (body.byteLength > 0 && type !== 'application/json') {
      return refuse({
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: `tRPC calls take application/json bodies, not ${type || 'an untyped body'}`,
      });
    }
    return handler(
      new Request(req.url, {
        method: req.method,
        headers: req.headers,
        body: body.byteLength > 0 ? body : null,
        signal: req.signal,
      }),
    );
  };
}
