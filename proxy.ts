import { NextResponse, type NextRequest } from 'next/server';
import { config as readConfig } from '@/server/config.ts';
import { checkRequest, refusalBody, securityHeaders } from '@/server/http/gate.ts';

/**
 * Next 16's request gate (the file once called middleware.ts; always the Node.js runtime): every request, pages,
 * API and static files alike, is checked by server/http/gate.ts and every response gets the security headers.
 */
export function proxy(request: NextRequest) {
  const cfg = readConfig();
  const headers = securityHeaders({ dev: process.env.NODE_ENV === 'development' });
  const refusal = checkRequest({ method: request.method, url: request.url, headers: request.headers }, cfg);
  if (refusal) {
    return new NextResponse(refusalBody(refusal), {
      status: refusal.status,
      headers: { ...headers, 'content-type': 'application/json', 'cache-control': 'no-store' },
    });
  }
  const response = NextResponse.next();
  for (const [k, v] of Object.entries(headers)) response.headers.set(k, v);
  return response;
}
