import { randomBytes } from 'node:crypto';
import { NextResponse, type NextRequest } from 'next/server';
import { config as readConfig } from '@/server/config.ts';
import { checkRequest, refusalBody, securityHeaders } from '@/server/http/gate.ts';

/**
 * Next 16's request gate (the file once called middleware.ts; always the Node.js runtime): every request, pages,
 * API and static files alike, is checked by server/http/gate.ts and every response gets the security headers,
 * with a fresh script nonce. Next reads the nonce from the request's Content-Security-Policy header and puts it
 * on the scripts it renders.
 */
export function proxy(request: NextRequest) {
  const cfg = readConfig();
  const dev = process.env.NODE_ENV === 'development';
  const refusal = checkRequest({ method: request.method, url: request.url, headers: request.headers }, cfg);
  if (refusal) {
    return new NextResponse(refusalBody(refusal), {
      status: refusal.status,
      headers: { ...securityHeaders({ dev }), 'content-type': 'application/json', 'cache-control': 'no-store' },
    });
  }
  const headers = securityHeaders({ dev, nonce: randomBytes(16).toString('base64') });
  const forwarded = new Headers(request.headers);
  forwarded.set('content-security-policy', headers['Content-Security-Policy']!);
  const response = NextResponse.next({ request: { headers: forwarded } });
  for (const [k, v] of Object.entries(headers)) response.headers.set(k, v);
  return response;
}
