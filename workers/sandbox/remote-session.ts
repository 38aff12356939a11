import { internalResult, type RunOptions, type SandboxCall, type SandboxResult, type SandboxSession } from './types.ts';
import { SerialTurns } from './serial-turns.ts';

/** What a session sees of a node (remote.ts NodeState). */
export interface SessionNode {
  url: string;
  inFlight: number;
  failures: number;
  served: number;
}

/** What a session needs of its RemoteSandbox (remote.ts): its nodes, its requests and its defaults. */
export interface SessionRemote<NodeState extends SessionNode = SessionNode> {
  defaults: { timeoutS: number; queueMs: number };
  /** The wait before the n-th try (n ≥ 1), ms. */
  backoffMs(attempt: number): number;
  /** A node to open the session on, preferring one not in `tried`. */
  pick(tried: ReadonlySet<NodeState>): NodeState;
  post(
    node: NodeState,
    path: string,
    body: unknown,
    budgetMs: number,
    signal?: AbortSignal,
  ): Promise<{ body: Record<string, unknown> }>;
  fail(node: NodeState, msg: string): void;
  closed(): boolean;
  /** The session has ended: the client no longer closes it when it closes. */
  forget(s: RemoteSession<NodeState>): void;
}

/**
 * A session over sandbox nodes: opened on one node (POST /session/open) and kept there, its calls in order (POST
 * /session/run). Where the node no longer has it (closed for idleness, restarted) or cannot be reached, the call
 * goes on in a new session, on another node where there is one, until its deadline: the result then says
 * `sessionNew`, as any first call of a session does, so the model and the trace see that the state is gone.
 * A node's refusal (bad input, a limit, no sessions) answers the call `internal` with the node's message.
 */
export class RemoteSession<NodeState extends SessionNode = SessionNode> implements SandboxSession {
  private at: { node: NodeState; id: string } | null = null;
  private closed = false;
  private readonly turns = new SerialTurns();

  constructor(
    private readonly remote: SessionRemote<NodeState>,
    private readonly opts: { timeS?: number; idleS?: number },
  ) {}

  run(call: SandboxCall, o: RunOptions = {}): Promise<SandboxResult> {
    return this.turns.run(() => this.runNow(call, o));
  }

  private async runNow(call: SandboxCall, o: RunOptions): Promise<SandboxResult> {
    if (this.closed || this.remote.closed()) return internalResult('the sandbox session is closed');
    const enqueuedAt = Date.now();
    const timeoutS = call.timeoutS ?? this.remote.defaults.timeoutS;
    const deadline = o.deadline ?? enqueuedAt + this.remote.defaults.queueMs + timeoutS * 1000;
    const tried = new Set<NodeState>();
    let lastError = '';
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await sleep(Math.min(this.remote.backoffMs(attempt), Math.max(0, deadline - Date.now())));
      if (o.signal?.aborted || this.remote.closed())
        return {
          ...internalResult('cancelled by the caller', Date.now() - enqueuedAt),
          status: 'timeout',
          errorType: 'QueueTimeout',
        };
      if (Date.now() >= deadline)
        return {
          ...internalResult(
            `no sandbox node ran the session's call before its deadline (last error: ${lastError})`,
            Date.now() - enqueuedAt,
          ),
          sessionEnded: true,
        };
      const node = this.at?.node ?? this.remote.pick(tried);
      tried.add(node);
      const budgetMs = Math.max(0, deadline - Date.now());
      try {
        if (!this.at) {
          const { body } = await this.remote.post(node, '/session/open', this.opts, budgetMs, o.signal);
          this.at = { node, id: String(body.id) };
        }
        node.inFlight++;
        try {
          const { body } = await this.remote.post(node, '/session/run', { id: this.at.id, call }, budgetMs, o.signal);
          node.failures = 0;
          node.served++;
          return body as unknown as SandboxResult;
        } finally {
          node.inFlight--;
        }
      } catch (e) {
        const msg = `${node.url}: ${(e as Error).message}`;
        const cause = (e as Error).cause as { status?: number; field?: string } | undefined;
        lastError = msg;
        // The node no longer has the session: go on in a new one (on the same node, which is up).
        if (cause?.status === 404 && cause.field === 'id') {
          this.at = null;
          tried.delete(node);
          continue;
        }
        if (cause?.status !== undefined)
          return internalResult(`sandbox node refused the session's call: ${msg}`, Date.now() - enqueuedAt);
        this.remote.fail(node, msg);
        this.at = null; // unreachable or failing: its session is given up, a new one opens elsewhere
      }
    }
  }

  /** End the session on its node (best effort: a node that does not answer ends it when it has been idle). */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.remote.forget(this);
    return this.turns.run(async () => {
      const at = this.at;
      this.at = null;
      if (at) await this.remote.post(at.node, '/session/close', { id: at.id }, 5000).catch(() => {});
    });
  }
}

function sleep(ms: number) {
  return new Promise<void>((r) => setTimeout(r, ms));
}
