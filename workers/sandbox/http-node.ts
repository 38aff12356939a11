import http from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { checkServiceRequest, LOOPBACK_HOSTS } from '../../contracts/hosts.ts';
import { NodeSessions, sessionIdSchema, sessionOpenSchema } from './node-sessions.ts';
import type { Sandbox, SandboxCall, SandboxResult } from './types.ts';

/**
 * A sandbox node: an HTTP server that runs calls on a local Sandbox (normally a SandboxPool) for other machines.
 *
 *   POST /run          body: a SandboxCall                → a SandboxResult
 *   POST /run/batch    body: { calls: SandboxCall[] }     → { results: SandboxResult[] } (same order)
 *   POST /session/open   body: { timeS?, idleS? }         → { id }: a session (its calls share one interpreter)
 *   POST /session/run    body: { id, call: SandboxCall }  → a SandboxResult; 404 naming `id` once it has ended
 *   POST /session/close  body: { id }                     → { closed } (node-sessions.ts)
 *   GET  /health       → 200 { ok: true, ...pool status } while it can run calls; 503 while draining or with no live interpreter
 *   GET  /metrics      → Prometheus text format
 *
 * Every route, /health included, needs `Authorization: Bearer <token>` (compared in constant time): the node runs
 * arbitrary code, and even its status is nobody else's business. A wrong or missing token is 401.
 * Bodies are JSON, at most `maxBodyBytes` (413 past it); a body that does not validate is 400 with
 * `{ error, field }` naming the first bad field and why. An optional `x-sandbox-budget-ms` header bounds the
 * time (queue + run) each call of the request may take on this node; the client's own deadline travels that way.
 * While the node shuts down it answers 503, so clients retry elsewhere.
 *
 * The node's operator bounds what a client may ask for: a call's memoryMb, timeoutS and maxOutputBytes over the
 * node's `limits` are refused (400 naming the field, the figure and the limit), never clamped, so a recipe that
 * asks for more than a node gives fails loudly instead of running under other limits than it records.
 * Host must be one of `allowedHosts` (421) and a browser Origin, when sent, one of them too (403). A client gets
 * `headersTimeoutMs` to send its headers and `requestTimeoutMs` to send its whole request (then 408 and the
 * connection is closed); a call may still take as long as its own limits allow to answer.
 */
export interface NodeLimits {
  /** Largest memoryMb one call may ask for (default 4096). */
  memoryMb: number;
  /** Largest timeoutS (default 600, the recipe schema's largest). */
  timeoutS: number;
  /** Largest maxOutputBytes (default 64 MiB). */
  maxOutputBytes: number;
}

export const DEFAULT_NODE_LIMITS: NodeLimits = { memoryMb: 4096, timeoutS: 600, maxOutputBytes: 64 * 1024 * 1024 };

export interface SandboxNodeOptions {
  sandbox: Sandbox & { status?: () => Record<string, unknown> };
  token: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Largest accepted request body, bytes (default 16 MiB). */
  maxBodyBytes?: number;
  /** Most calls in one /run/batch (default 1024). */
  maxBatch?: number;
  /** Sessions open at once (default 1024; a session waits for an interpreter at its first call, as in the pool). */
  maxSessions?: number;
  /** The most a call may ask for (DEFAULT_NODE_LIMITS where unset). */
  limits?: Partial<NodeLimits>;
  /** Host values it answers to (default: the loopback names and `host`); cli/listen.ts serviceAllowedHosts. */
  allowedHosts?: string[];
  /** Time a client has to send its request headers (default 20 s) and its whole request body (default 120 s). */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  log?: (line: string) => void;
}

export const sandboxCallSchema = z.strictObject({
  code: z.string(),
  input: z.string().optional(),
  timeoutS: z.number().positive().max(3600).optional(),
  memoryMb: z
    .number()
    .int()
    .positive()
    .max(1024 * 1024)
    .optional(),
  maxOutputBytes: z
    .number()
    .int()
    .positive()
    .max(1024 * 1024 * 1024)
    .optional(),
  history: z.array(z.string()).optional(),
  // A seeded call (the recipe's tool.seedCalls) gives the same numbers on a node as on the local pool.
  seed: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
});

const MAX_BUDGET_MS = 24 * 3600 * 1000;

class HttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export class SandboxNode {
  private server: http.Server;
  private draining = false;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private tokenHash: Buffer;
  private readonly maxBodyBytes: number;
  private readonly maxBatch: number;
  readonly limits: NodeLimits;
  private readonly allowedHosts: string[];
  private readonly log: (line: string) => void;
  readonly sessions: NodeSessions;
  readonly metrics = {
    calls: {} as Record<string, number>,
    latencySumS: 0,
    latencyCount: 0,
    requests: {} as Record<string, number>,
  };

  constructor(private opts: SandboxNodeOptions) {
    if (!opts.token) throw new Error('a sandbox node needs a token');
    this.tokenHash = sha256(opts.token);
    this.maxBodyBytes = opts.maxBodyBytes ?? 16 * 1024 * 1024;
    this.maxBatch = opts.maxBatch ?? 1024;
    this.limits = {
      ...DEFAULT_NODE_LIMITS,
      ...Object.fromEntries(Object.entries(opts.limits ?? {}).filter(([, v]) => v !== undefined)),
    };
    this.sessions = new NodeSessions(opts.sandbox, opts.maxSessions ?? 1024);
    const host = opts.host ?? '127.0.0.1';
    this.allowedHosts = opts.allowedHosts ?? [
      ...LOOPBACK_HOSTS,
      host.includes(':') && !host.startsWith('[') ? `[${host}]` : host,
    ];
    this.log = opts.log ?? ((line) => console.error(`[sandbox-node] ${line}`));
    const headersTimeout = opts.headersTimeoutMs ?? 20_000;
    // These bound receiving the request only: a batch may take minutes to answer, which they do not limit.
    // Node checks them every connectionsCheckingInterval (30 s by default): check often enough to matter.
    const requestTimeout = Math.max(headersTimeout, opts.requestTimeoutMs ?? 120_000);
    this.server = http.createServer(
      { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1000, headersTimeout) },
      (req, res) => void this.handle(req, res),
    );
    this.server.keepAliveTimeout = 30000;
  }

  /** Listen; resolves with the bound address. */
  listen(): Promise<{ host: string; port: number; url: string }> {
    const host = this.opts.host ?? '127.0.0.1';
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port ?? 0, host, () => {
        this.server.off('error', reject);
        const a = this.server.address() as AddressInfo;
        const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
        resolve({ host: a.address, port: a.port, url: `http://${h}:${a.port}` });
      });
    });
  }

  /**
   * Stop: refuse new requests (503), wait up to `graceMs` for the ones in flight, then close the server.
   * The wrapped sandbox is the caller's to close (after this resolves).
   */
  async close(graceMs = 30000): Promise<void> {
    this.draining = true;
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    this.server.closeIdleConnections();
    if (this.inFlight > 0) {
      await Promise.race([
        new Promise<void>((r) => this.idleWaiters.push(r)),
        new Promise<void>((r) => setTimeout(r, graceMs).unref()),
      ]);
    }
    this.server.closeAllConnections();
    await closed;
    await this.sessions.closeAll();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://node');
    const route = `${req.method} ${url.pathname}`;
    let code = 500;
    this.inFlight++;
    try {
      const refusal = checkServiceRequest({ host: req.headers.host, origin: req.headers.origin }, this.allowedHosts);
      if (refusal) throw new HttpError(refusal.status, refusal.message);
      if (!this.authorized(req))
        throw new HttpError(401, 'missing or wrong bearer token (send Authorization: Bearer <token>)');
      if (route === 'GET /health') {
        const status = this.opts.sandbox.status?.() ?? {};
        const alive = typeof status.alive === 'number' ? status.alive : 1;
        code = this.draining || alive === 0 ? 503 : 200;
        return send(res, code, {
          ok: code === 200,
          draining: this.draining,
          ...status,
          openSessions: this.sessions.size,
        });
      }
      if (route === 'GET /metrics') {
        code = 200;
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        return res.end(this.prometheus());
      }
      if (!POSTS.includes(url.pathname)) {
        if (KNOWN.some((k) => k.endsWith(` ${url.pathname}`)))
          throw new HttpError(405, `${req.method} is not allowed on ${url.pathname}`);
        throw new HttpError(404, `no route ${url.pathname} (routes: ${KNOWN.map((k) => k.split(' ')[1]).join(', ')})`);
      }
      if (req.method !== 'POST') throw new HttpError(405, `${req.method} is not allowed on ${url.pathname}`);
      if (this.draining) throw new HttpError(503, 'this sandbox node is shutting down');
      const budgetMs = parseBudget(req.headers['x-sandbox-budget-ms']);
      const body = await readJson(req, this.maxBodyBytes);
      if (url.pathname.startsWith('/session/')) {
        const out = await this.session(url.pathname, body, budgetMs, hangUp(res));
        code = 200;
        return send(res, 200, out);
      }
      const calls =
        route === 'POST /run' ? [validate(sandboxCallSchema, body, '')] : validateBatch(body, this.maxBatch);
      calls.forEach((c, i) => withinLimits(c, this.limits, route === 'POST /run' ? '' : `calls.${i}.`));
      const signal = hangUp(res);
      const deadline = budgetMs === undefined ? undefined : Date.now() + budgetMs;
      const results = await Promise.all(calls.map((c) => this.runOne(c, deadline, signal)));
      // A pool closed under us answers `internal`; say 503 instead, so the client runs the calls elsewhere.
      if (this.draining && results.some((r) => r.status === 'internal'))
        throw new HttpError(503, 'this sandbox node is shutting down');
      code = 200;
      return send(res, 200, route === 'POST /run' ? results[0] : { results });
    } catch (e) {
      const err = e instanceof HttpError ? e : new HttpError(500, `sandbox node error: ${(e as Error).message}`);
      if (!(e instanceof HttpError)) this.log(`${route}: ${(e as Error).stack ?? e}`);
      code = err.code;
      send(
        res,
        err.code,
        { error: err.message, ...(err.field !== undefined ? { field: err.field } : {}) },
        err.code === 401 ? { 'www-authenticate': 'Bearer' } : {},
      );
    } finally {
      const key = `${url.pathname}|${code}`;
      this.metrics.requests[key] = (this.metrics.requests[key] ?? 0) + 1;
      this.inFlight--;
      if (this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** /session/open, /session/run, /session/close. */
  private async session(path: string, body: unknown, budgetMs: number | undefined, signal: AbortSignal) {
    if (!this.sessions.supported) throw new HttpError(501, "this sandbox node's sandbox has no sessions");
    if (path === '/session/open') {
      const o = validate(sessionOpenSchema, body, '');
      if (o.timeS !== undefined && o.timeS > this.limits.timeoutS)
        throw new HttpError(
          400,
          `timeS: ${o.timeS} s is over this node's limit of ${this.limits.timeoutS} s (sandbox serve --max-timeout-s)`,
          'timeS',
        );
      const id = this.sessions.openOne(o);
      if (id === null) throw new HttpError(429, `this sandbox node has its ${this.sessions.max} sessions open`);
      return { id };
    }
    if (path === '/session/close') {
      const { id } = validate(sessionCloseSchema, body, '');
      return { closed: await this.sessions.closeOne(id) };
    }
    const { id, call } = validate(sessionRunSchema, body, '');
    withinLimits(call, this.limits, 'call.');
    const deadline = budgetMs === undefined ? undefined : Date.now() + budgetMs;
    const r = await this.sessions.use(id, (s) => this.runOne(call, deadline, signal, s));
    if (r === undefined)
      throw new HttpError(
        404,
        `id: no open session ${id} on this node (closed, idle past its time, or the node restarted)`,
        'id',
      );
    if (this.draining && r.status === 'internal') throw new HttpError(503, 'this sandbox node is shutting down');
    return r;
  }

  private async runOne(
    call: SandboxCall,
    deadline: number | undefined,
    signal: AbortSignal,
    on: Pick<Sandbox, 'run'> = this.opts.sandbox,
  ): Promise<SandboxResult> {
    const t0 = process.hrtime.bigint();
    const r = await on.run(call, { deadline, signal });
    this.metrics.calls[r.status] = (this.metrics.calls[r.status] ?? 0) + 1;
    this.metrics.latencySumS += Number(process.hrtime.bigint() - t0) / 1e9;
    this.metrics.latencyCount++;
    return r;
  }

  private authorized(req: http.IncomingMessage): boolean {
    const h = req.headers.authorization ?? '';
    const m = /^Bearer (.+)$/i.exec(h.trim());
    // Compare fixed-length digests, so neither the content nor the length of the token leaks through timing.
    return timingSafeEqual(sha256(m ? m[1] : ''), this.tokenHash) && !!m;
  }

  private prometheus(): string {
    const s = this.opts.sandbox.status?.() ?? {};
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, samples: [string, number][]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      // `labels` is a label set `{k="v"}`, or a suffix such as `_sum` for a summary.
      for (const [labels, v] of samples) lines.push(`${name}${labels} ${v}`);
    };
    const statuses = ['ok', 'error', 'timeout', 'memory', 'output_limit', 'internal'];
    for (const k of Object.keys(this.metrics.calls)) if (!statuses.includes(k)) statuses.push(k);
    metric(
      'toolsmith_sandbox_calls_total',
      'counter',
      'Calls this node answered, by result status.',
      statuses.map((st) => [`{status="${st}"}`, this.metrics.calls[st] ?? 0]),
    );
    metric(
      'toolsmith_sandbox_call_latency_seconds',
      'summary',
      'Time from receiving a call to its result (queue + run), seconds.',
      [
        ['_sum', this.metrics.latencySumS],
        ['_count', this.metrics.latencyCount],
      ],
    );
    metric('toolsmith_sandbox_queue_depth', 'gauge', 'Calls waiting for a free interpreter.', [['', n(s.queued)]]);
    metric('toolsmith_sandbox_busy', 'gauge', 'Interpreters running a call now.', [['', n(s.busy)]]);
    metric('toolsmith_sandbox_interpreters', 'gauge', 'Interpreters in the pool.', [['', n(s.interpreters)]]);
    metric('toolsmith_sandbox_interpreters_alive', 'gauge', 'Interpreters alive and ready.', [['', n(s.alive)]]);
    metric('toolsmith_sandbox_restarts_total', 'counter', 'Interpreter restarts.', [['', n(s.restarts)]]);
    metric('toolsmith_sandbox_retries_total', 'counter', 'Calls retried after their interpreter died.', [
      ['', n(s.retries)],
    ]);
    metric('toolsmith_sandbox_requests_in_flight', 'gauge', 'HTTP requests being served.', [['', this.inFlight]]);
    metric(
      'toolsmith_sandbox_http_requests_total',
      'counter',
      'HTTP requests, by path and response code.',
      Object.entries(this.metrics.requests).map(([k, v]) => {
        const [p, c] = k.split('|');
        return [`{path="${p.replace(/["\\\n]/g, '_')}",code="${c}"}`, v];
      }),
    );
    return `${lines.join('\n')}\n`;
  }
}

/** Start a node around `sandbox`; resolves once it listens. */
export async function startSandboxNode(
  opts: SandboxNodeOptions,
): Promise<{ node: SandboxNode; url: string; port: number; host: string }> {
  const node = new SandboxNode(opts);
  const addr = await node.listen();
  return { node, ...addr };
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

function send(res: http.ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}) {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function parseBudget(h: string | string[] | undefined): number | undefined {
  if (h === undefined) return undefined;
  const v = Number(Array.isArray(h) ? h[0] : h);
  if (!Number.isFinite(v) || v < 0 || v > MAX_BUDGET_MS)
    throw new HttpError(
      400,
      `header x-sandbox-budget-ms: expected milliseconds between 0 and ${MAX_BUDGET_MS}`,
      'x-sandbox-budget-ms',
    );
  return v;
}

function readJson(req: http.IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      return reject(new HttpError(413, `request body of ${declared} bytes is over the limit of ${limit} bytes`));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(new HttpError(413, `request body is over the limit of ${limit} bytes`));
        return;
      }
      chunks.push(c);
    });
    req.on('error', (e) => {
      if (!failed) {
        failed = true;
        reject(e);
      }
    });
    req.on('end', () => {
      if (failed) return;
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(JSON.parse(text));
      } catch (e) {
        reject(new HttpError(400, `body: not valid JSON (${(e as Error).message})`, ''));
      }
    });
  });
}

function validate<T>(schema: z.ZodType<T>, body: unknown, prefix: string): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  let p = [prefix, ...issue.path.map(String)].filter((x) => x !== '').join('.');
  // An unknown key is reported on the object; name the key itself.
  if (issue.code === 'unrecognized_keys') p = [p, issue.keys[0]].filter(Boolean).join('.');
  throw new HttpError(400, `${p || 'body'}: ${issue.message}`, p || 'body');
}

/** Refuse a call that asks for more than the node gives (400 naming the field, the figure and the limit). */
function withinLimits(call: SandboxCall, limits: NodeLimits, prefix: string): void {
  const over = (field: keyof NodeLimits, value: number | undefined, unit: string, flag: string) => {
    if (value !== undefined && value > limits[field]) {
      throw new HttpError(
        400,
        `${prefix}${field}: ${value} ${unit} is over this node's limit of ${limits[field]} ${unit} (sandbox serve ${flag})`,
        `${prefix}${field}`,
      );
    }
  };
  over('memoryMb', call.memoryMb, 'MiB', '--max-memory-mb');
  over('timeoutS', call.timeoutS, 's', '--max-timeout-s');
  over('maxOutputBytes', call.maxOutputBytes, 'bytes', '--max-output-mb');
}

const batchSchema = z.strictObject({ calls: z.array(z.unknown()) });
const sessionRunSchema = z.strictObject({ id: sessionIdSchema, call: sandboxCallSchema });
const sessionCloseSchema = z.strictObject({ id: sessionIdSchema });

const POSTS = ['/run', '/run/batch', '/session/open', '/session/run', '/session/close'];
const KNOWN = ['GET /health', 'GET /metrics', ...POSTS.map((p) => `POST ${p}`)];

/** Aborted when the client hangs up before its answer: its calls still queued are cancelled. Any number of
 *  listeners (one per call of a batch). */
function hangUp(res: http.ServerResponse): AbortSignal {
  const abort = new AbortController();
  setMaxListeners(0, abort.signal);
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}

function validateBatch(body: unknown, maxBatch: number): SandboxCall[] {
  const b = validate(batchSchema, body, '');
  if (b.calls.length > maxBatch)
    throw new HttpError(400, `calls: ${b.calls.length} calls is over the limit of ${maxBatch} per batch`, 'calls');
  return b.calls.map((c, i) => validate(sandboxCallSchema, c, `calls.${i}`));
}
