import { RemoteSession, type SessionRemote } from './remote-session.ts';
import {
  internalResult,
  type RunOptions,
  type Sandbox,
  type SandboxCall,
  type SandboxResult,
  type SessionOptions,
} from './types.ts';

/**
 * The Sandbox interface over several sandbox nodes (`npx toolsmith sandbox serve`).
 *
 * - Micro-batching: concurrent run() calls are gathered for `flushMs` (or until `maxBatch`) and sent as one
 *   POST /run/batch; a flush larger than one batch is split across the healthy nodes.
 * - Load balancing: each batch goes to the healthy node with the fewest calls in flight.
 * - Retries: a batch that meets a connection error, a request timeout or a 5xx is retried, after exponential backoff
 *   with full jitter, preferably on a node it has not tried yet; it keeps going until each call's deadline.
 *   A 4xx (bad token, bad input) is not transient: its calls are answered `internal` with the node's message.
 * - Health: `unhealthyAfter` consecutive failures mark a node unhealthy; it then gets no batches, and /health is
 *   probed every `probeIntervalMs` until it answers 200, which marks it healthy again. Healthy nodes are probed every
 *   `healthIntervalMs` too (a node whose interpreters all died answers 503).
 * - Exactly once: every call resolves once, with the first of: its result, its deadline (status `internal`, saying no
 *   node answered and the last error), the caller's abort signal, or close().
 * - Sessions (openSession): a session lives on one node (remote-session.ts); one lost with its node goes on as a new
 *   session on another.
 */
export interface RemoteOptions {
  urls: string[];
  token: string;
  maxBatch?: number;
  flushMs?: number;
  /** Default call timeout (s) used to derive a deadline when the caller gives none (matches the pool's default). */
  defaultTimeoutS?: number;
  /** Extra time over the call's own timeout when the caller gives no deadline, ms (matches the pool's queue timeout). */
  defaultQueueMs?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  unhealthyAfter?: number;
  probeIntervalMs?: number;
  healthIntervalMs?: number;
  log?: (line: string) => void;
}

interface Pending {
  call: SandboxCall;
  deadline: number;
  done: boolean;
  resolve: (r: SandboxResult) => void;
  timer?: NodeJS.Timeout;
  enqueuedAt: number;
  lastError?: string;
  cleanup?: () => void;
}

export interface NodeState {
  url: string;
  healthy: boolean;
  inFlight: number;
  failures: number;
  lastError: string | null;
  lastProbe: number;
  probing: boolean;
  served: number;
}

/** A node's answer that trying again elsewhere would not change (a 4xx). */
class Permanent extends Error {}

const freshNode = (u: string): NodeState => ({
  url: u.replace(/\/+$/, ''),
  healthy: true,
  inFlight: 0,
  failures: 0,
  lastError: null,
  lastProbe: 0,
  probing: false,
  served: 0,
});

/** Past its deadline, a call waits this long more for an answer from a node that is running it. */
const ANSWER_GRACE_MS = 3000;

export class RemoteSandbox implements Sandbox {
  readonly nodes: NodeState[];
  private buffer: Pending[] = [];
  private flushTimer?: NodeJS.Timeout;
  private probeTimer: NodeJS.Timeout;
  private closed = false;
  private controllers = new Set<AbortController>();
  private sessions = new Set<RemoteSession<NodeState>>();
  private rr = 0;
  private readonly o: Required<Omit<RemoteOptions, 'urls' | 'token'>>;
  readonly stats = { calls: 0, batches: 0, retries: 0, byStatus: {} as Record<string, number> };

  constructor(private options: RemoteOptions) {
    if (options.urls.length === 0) throw new Error('RemoteSandbox needs at least one node URL');
    this.o = {
      maxBatch: options.maxBatch ?? 64,
      flushMs: options.flushMs ?? 2,
      defaultTimeoutS: options.defaultTimeoutS ?? 4,
      defaultQueueMs: options.defaultQueueMs ?? 120000,
      backoffBaseMs: options.backoffBaseMs ?? 50,
      backoffMaxMs: options.backoffMaxMs ?? 2000,
      unhealthyAfter: options.unhealthyAfter ?? 2,
      probeIntervalMs: options.probeIntervalMs ?? 500,
      healthIntervalMs: options.healthIntervalMs ?? 5000,
      log: options.log ?? ((line) => console.error(`[sandbox-remote] ${line}`)),
    };
    this.nodes = options.urls.map(freshNode);
    this.probeTimer = setInterval(() => this.probeDue(), this.o.probeIntervalMs);
    this.probeTimer.unref();
  }

  run(call: SandboxCall, opts: RunOptions = {}): Promise<SandboxResult> {
    const now = Date.now();
    const deadline = opts.deadline ?? now + this.o.defaultQueueMs + (call.timeoutS ?? this.o.defaultTimeoutS) * 1000;
    return new Promise<SandboxResult>((resolve) => {
      if (this.closed) return resolve(internalResult('the remote sandbox client is closed'));
      const p: Pending = { call, deadline, done: false, resolve, enqueuedAt: now };
      // Safety net: a call still unanswered a little past its deadline is answered `internal`.
      p.timer = setTimeout(() => this.settle(p, this.deadlineResult(p)), Math.max(0, deadline - now) + ANSWER_GRACE_MS);
      if (opts.signal) {
        const signal = opts.signal;
        if (signal.aborted) return this.settle(p, cancelled(p));
        const onAbort = () => this.settle(p, cancelled(p));
        signal.addEventListener('abort', onAbort, { once: true });
        p.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      this.buffer.push(p);
      if (this.buffer.length >= this.o.maxBatch) this.flush();
      else this.flushTimer ??= setTimeout(() => this.flush(), this.o.flushMs);
    });
  }

  runBatch(calls: SandboxCall[], opts: RunOptions = {}): Promise<SandboxResult[]> {
    return Promise.all(calls.map((c) => this.run(c, opts)));
  }

  openSession(opts: SessionOptions = {}): RemoteSession<NodeState> {
    const remote: SessionRemote<NodeState> = {
      defaults: { timeoutS: this.o.defaultTimeoutS, queueMs: this.o.defaultQueueMs },
      backoffMs: (attempt) => this.backoffMs(attempt),
      pick: (tried) => this.pick(tried),
      post: (node, path, body, budgetMs, signal) => this.post(node, path, body, budgetMs, signal),
      fail: (node, msg) => this.fail(node, msg),
      closed: () => this.closed,
      forget: (s) => this.sessions.delete(s),
    };
    const s = new RemoteSession(remote, opts);
    if (this.closed) void s.close();
    else this.sessions.add(s);
    return s;
  }

  /** Node states, for logs and diagnostics. */
  status() {
    return {
      nodes: this.nodes.map((n) => ({
        url: n.url,
        healthy: n.healthy,
        inFlight: n.inFlight,
        failures: n.failures,
        lastError: n.lastError,
        served: n.served,
      })),
      ...this.stats,
    };
  }

  /**
   * The nodes to use from now on (a cluster restarted one on a new address, or placed more): nodes still listed keep
   * their state, new ones start healthy, dropped ones get no new batch (a batch in flight there finishes, or fails
   * and is retried elsewhere as usual). An empty list is ignored: calls wait in their retries for a node to return.
   */
  setNodes(urls: string[]) {
    if (urls.length === 0) return;
    const want = urls.map((u) => u.replace(/\/+$/, ''));
    const kept = this.nodes.filter((n) => want.includes(n.url));
    const added = want.filter((u) => !kept.some((n) => n.url === u)).map(freshNode);
    this.nodes.splice(0, this.nodes.length, ...kept, ...added);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.flushTimer);
    clearInterval(this.probeTimer);
    for (const p of this.buffer.splice(0)) this.settle(p, internalResult('the remote sandbox client is closed'));
    for (const c of this.controllers) c.abort(new Error('the remote sandbox client is closed'));
    // Sessions' calls were just cut short; their nodes are told to end them (or end them when idle).
    const ending = Promise.allSettled([...this.sessions].map((s) => s.close()));
    await Promise.race([ending, new Promise((r) => setTimeout(r, 5000).unref())]);
  }

  private settle(p: Pending, r: SandboxResult) {
    if (p.done) return;
    p.done = true;
    clearTimeout(p.timer);
    p.cleanup?.();
    this.stats.calls++;
    this.stats.byStatus[r.status] = (this.stats.byStatus[r.status] ?? 0) + 1;
    p.resolve(r);
  }

  private flush() {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const all = this.buffer.splice(0).filter((p) => !p.done);
    if (all.length === 0) return;
    // Spread a large flush over the healthy nodes, in batches of at most maxBatch.
    const healthy = Math.max(1, this.nodes.filter((n) => n.healthy).length);
    const size = Math.min(this.o.maxBatch, Math.ceil(all.length / healthy));
    for (let i = 0; i < all.length; i += size) void this.dispatch(all.slice(i, i + size));
  }

  /** Send one batch, retrying transient failures on other nodes until every call in it is answered. */
  private async dispatch(batch: Pending[]) {
    this.stats.batches++;
    const tried = new Set<NodeState>();
    for (let attempt = 0; ; attempt++) {
      const live = batch.filter((p) => !p.done);
      if (live.length === 0 || this.closed) return;
      const deadline = Math.max(...live.map((p) => p.deadline));
      if (attempt > 0) {
        this.stats.retries++;
        await sleep(Math.min(this.backoffMs(attempt), Math.max(0, deadline - Date.now())));
        if (this.closed) return;
      }
      // Calls whose deadline passed while no node had them are answered now, with the last error.
      const now = Date.now();
      for (const p of live) if (now >= p.deadline) this.settle(p, this.deadlineResult(p));
      if (now >= deadline) return;
      const sending = live.filter((p) => !p.done);
      const node = this.pick(tried);
      tried.add(node);
      try {
        const results = await this.send(node, sending, deadline);
        sending.forEach((p, i) => this.settle(p, results[i]));
        return;
      } catch (e) {
        const msg = `${node.url}: ${(e as Error).message}`;
        for (const p of sending) p.lastError = msg;
        if (e instanceof Permanent) {
          for (const p of sending)
            this.settle(p, internalResult(`sandbox node refused the call: ${msg}`, Date.now() - p.enqueuedAt));
          return;
        }
        this.fail(node, msg);
      }
    }
  }

  /** Exponential backoff with full jitter before the n-th try (n ≥ 1), ms. */
  private backoffMs(attempt: number): number {
    return Math.random() * Math.min(this.o.backoffMaxMs, this.o.backoffBaseMs * 2 ** (attempt - 1));
  }

  /** The healthy node with the fewest calls in flight (ties rotate), preferring nodes this batch has not tried; with none healthy, any node in turn (the backoff paces these tries). */
  private pick(tried: ReadonlySet<NodeState>): NodeState {
    const healthy = this.nodes.filter((n) => n.healthy);
    const fresh = healthy.filter((n) => !tried.has(n));
    const pool = fresh.length ? fresh : healthy.length ? healthy : this.nodes;
    const start = this.rr++ % pool.length;
    let best = pool[start];
    for (let k = 1; k < pool.length; k++) {
      const n = pool[(start + k) % pool.length];
      if (n.inFlight < best.inFlight) best = n;
    }
    return best;
  }

  private async send(node: NodeState, live: Pending[], deadline: number): Promise<SandboxResult[]> {
    const budgetMs = Math.max(0, deadline - Date.now());
    node.inFlight += live.length;
    try {
      const res = await this.post(node, '/run/batch', { calls: live.map((p) => p.call) }, budgetMs);
      const results = res.body.results as SandboxResult[] | undefined;
      if (!Array.isArray(results) || results.length !== live.length) {
        throw new Error(
          `HTTP 200 with ${Array.isArray(results) ? results.length : 'no'} results for ${live.length} calls`,
        );
      }
      node.failures = 0;
      node.served += live.length;
      return results;
    } finally {
      node.inFlight -= live.length;
    }
  }

  /**
   * POST a JSON body to a node with the calls' budget; its 200 answer. A node that hangs is given up on a little
   * after the budget (the calls then go elsewhere); a connection error, an unreadable body, a 5xx, 408 or 429 throws
   * an Error (transient), any other status a Permanent.
   */
  private async post(
    node: NodeState,
    path: string,
    payload: unknown,
    budgetMs: number,
    signal?: AbortSignal,
  ): Promise<{ body: Record<string, unknown> }> {
    const ac = new AbortController();
    this.controllers.add(ac);
    const timer = setTimeout(
      () => ac.abort(new Error(`no answer within ${Math.round((budgetMs + ANSWER_GRACE_MS) / 1000)} s`)),
      budgetMs + ANSWER_GRACE_MS,
    );
    const onAbort = () => ac.abort(new Error('cancelled by the caller'));
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let res: Response;
      try {
        res = await fetch(`${node.url}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${this.options.token}`,
            'x-sandbox-budget-ms': String(Math.round(budgetMs)),
          },
          body: JSON.stringify(payload),
          signal: ac.signal,
        });
      } catch (e) {
        throw new Error(connectionError(e, ac.signal));
      }
      let body: Record<string, unknown>;
      try {
        body = (await res.json()) as typeof body;
      } catch (e) {
        throw new Error(`HTTP ${res.status} with an unreadable body (${connectionError(e, ac.signal)})`);
      }
      const error = `HTTP ${res.status}: ${typeof body.error === 'string' ? body.error : 'no message'}`;
      // 501: the node has no such feature (no sessions): no other attempt would change that.
      if ((res.status >= 500 && res.status !== 501) || res.status === 429 || res.status === 408) throw new Error(error);
      if (res.status !== 200) throw new Permanent(error, { cause: { status: res.status, field: body.field } });
      return { body };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      this.controllers.delete(ac);
    }
  }

  private fail(node: NodeState, msg: string) {
    node.failures++;
    node.lastError = msg;
    if (node.healthy && node.failures >= this.o.unhealthyAfter) {
      node.healthy = false;
      this.o.log(
        `node ${node.url} marked unhealthy after ${node.failures} failures (${msg}); probing /health to bring it back`,
      );
    }
  }

  private probeDue() {
    const now = Date.now();
    for (const n of this.nodes) {
      if (n.probing) continue;
      if (!n.healthy || now - n.lastProbe >= this.o.healthIntervalMs) void this.probe(n);
    }
  }

  /** GET /health: 200 marks the node healthy; anything else counts as a failure. */
  private async probe(n: NodeState) {
    n.probing = true;
    n.lastProbe = Date.now();
    const ac = new AbortController();
    this.controllers.add(ac);
    const timer = setTimeout(() => ac.abort(new Error('/health did not answer within 5 s')), 5000);
    try {
      const res = await fetch(`${n.url}/health`, {
        headers: { authorization: `Bearer ${this.options.token}` },
        signal: ac.signal,
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status === 200) {
        if (!n.healthy) this.o.log(`node ${n.url} is healthy again`);
        n.healthy = true;
        n.failures = 0;
        n.lastError = null;
      } else {
        this.fail(n, `${n.url}: /health answered HTTP ${res.status}`);
      }
    } catch (e) {
      if (!this.closed) this.fail(n, `${n.url}: /health: ${connectionError(e, ac.signal)}`);
    } finally {
      clearTimeout(timer);
      this.controllers.delete(ac);
      n.probing = false;
    }
  }

  private deadlineResult(p: Pending): SandboxResult {
    return internalResult(
      `no sandbox node answered before the call's deadline${p.lastError ? ` (last error: ${p.lastError})` : ''}; nodes: ${this.describeNodes()}`,
      Date.now() - p.enqueuedAt,
    );
  }

  private describeNodes() {
    return this.nodes
      .map(
        (n) =>
          `${n.url} ${n.healthy ? 'healthy' : `unhealthy${n.lastError ? ` (${n.lastError.replace(`${n.url}: `, '')})` : ''}`}`,
      )
      .join(', ');
  }
}

function cancelled(p: Pending): SandboxResult {
  return {
    ...internalResult('cancelled by the caller', Date.now() - p.enqueuedAt),
    status: 'timeout',
    errorType: 'QueueTimeout',
  };
}

function connectionError(e: unknown, signal: AbortSignal): string {
  if (signal.aborted) return (signal.reason as Error)?.message ?? 'aborted';
  const err = e as Error & { cause?: { code?: string; message?: string } };
  return err.cause?.code ? `${err.cause.code}${err.cause.message ? ` (${err.cause.message})` : ''}` : err.message;
}

function sleep(ms: number) {
  return new Promise<void>((r) => setTimeout(r, ms));
}

/** Parse TOOLSMITH_SANDBOX_URLS-style lists: comma-separated, whitespace ignored, each must be http(s). */
export function parseNodeUrls(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      let u: URL;
      try {
        u = new URL(s);
      } catch {
        throw new Error(`"${s}" is not a URL`);
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`"${s}" is not an http(s) URL`);
      return s.replace(/\/+$/, '');
    });
}
