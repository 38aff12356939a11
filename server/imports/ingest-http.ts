/**
 * The ingest API's HTTP edge (app/api/ingest/): who is asking (an API token or a session; researcher or above, as
 * every write), a rate limit per token (ingest-rate.ts: 429 with Retry-After), the body read within
 * TOOLSMITH_MAX_BODY_BYTES and parsed as JSON, each call audited, and errors as JSON with a status: 400 naming the
 * field, 401, 403, 404, 409, 413, 415, 429.
 */
import { UserError } from '../../contracts/errors.ts';
import { type Principal, roleRank, SCOPE_ROLE } from '../../contracts/access.ts';
import { audit } from '../auth/audit.ts';
import { clientIp, resolvePrincipal } from '../auth/principal.ts';
import { config } from '../config.ts';
import type { Database } from '../db/client.ts';
import { getDb } from '../db/shared.ts';
import { readCapped } from '../http/limits.ts';
import { type IngestLimiter, processIngestLimiter, takeIngestCall } from './ingest-rate.ts';
import { IngestDenied } from './ingest.ts';

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  });
const error = (status: number, message: string, field?: string) =>
  json(status, { error: { message, ...(field ? { field } : {}) } });

export async function handleIngest(
  req: Request,
  action: string,
  target: string | null,
  fn: (db: Database, p: Principal, body: unknown) => Promise<unknown>,
  limiter: IngestLimiter = processIngestLimiter(config()),
): Promise<Response> {
  const db = await getDb();
  const p = await resolvePrincipal(db, req.headers);
  if (!p) return error(401, 'sign in, or send an API token as Authorization: Bearer <token>');
  if (roleRank(p.role) < roleRank('researcher'))
    return error(
      403,
      p.scope && roleRank(SCOPE_ROLE[p.scope]) < roleRank('researcher')
        ? `pushing runs needs a write token; this one's scope is ${p.scope} (create one with --scope write)`
        : `pushing runs needs the researcher role; ${p.email} is a ${p.role}`,
    );
  // Before the body is read or anything stored; not audited, so a runaway script cannot grow the audit log either.
  const limited = takeIngestCall(limiter, p);
  if (limited) return json(429, limited.body, { 'retry-after': String(limited.retryAfterS) });
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return error(415, `the body must be application/json, not ${type || 'untyped'}`);
  const limit = config().maxBodyBytes;
  const length = req.headers.get('content-length');
  const bytes = length !== null && Number(length) > limit ? null : await readCapped(req.body, limit);
  if (bytes === null)
    return error(413, `the body is over the limit of ${limit} bytes (TOOLSMITH_MAX_BODY_BYTES): send smaller batches`);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    return error(400, `the body is not JSON: ${(e as Error).message}`);
  }
  const who = { userId: p.userId, email: p.email, via: p.via, action, target, ip: clientIp(req.headers) };
  try {
    const result = await fn(db, p, body);
    await audit(db, { ...who, ok: true, userAgent: req.headers.get('user-agent') });
    return json(200, result);
  } catch (e) {
    await audit(db, { ...who, ok: false, detail: (e as Error).message, userAgent: req.headers.get('user-agent') });
    if (e instanceof UserError) return error(400, e.message, e.field);
    if (e instanceof IngestDenied) return error(e.status, e.message);
    console.error(`ingest ${action}: ${(e as Error).stack ?? e}`);
    return error(500, 'the server could not store this batch; nothing of it was lost on your side: send it again');
  }
}
