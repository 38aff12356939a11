import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Sandbox, SandboxSession } from './types.ts';

/**
 * A sandbox node's open sessions (the recipe's `tool.session: "trajectory"` over sandbox nodes): each a session of
 * the node's own sandbox, named by an unguessable id that only the client that opened it holds. A session sits here
 * until the client closes it, it has had no call for its idle time (its interpreter ended then anyway), or the node
 * stops; at most `max` at once, so a client cannot grow the table without bound.
 */
export const SESSION_ID = /^[0-9a-f]{32}$/;

export const sessionOpenSchema = z.strictObject({
  /** The session's time: its calls' wall-clock time added up, seconds (the pool's default where absent). */
  timeS: z.number().positive().max(3600).optional(),
  /** Ended after this long without a call, seconds. */
  idleS: z.number().positive().max(3600).optional(),
});

export const sessionIdSchema = z.string().regex(SESSION_ID, 'a session id is 32 hex digits');

/** How long a session with no idle time of its own may sit here without a call (the pool's SESSION_IDLE_S). */
const DEFAULT_IDLE_S = 300;

interface Entry {
  session: SandboxSession;
  idleMs: number;
  lastUse: number;
  /** Calls of this session in flight: never swept under them. */
  busy: number;
}

export class NodeSessions {
  private readonly open = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly sandbox: Sandbox,
    readonly max: number,
    sweepMs = 1000,
  ) {
    this.sweeper = setInterval(() => this.sweep(), sweepMs);
    this.sweeper.unref();
  }

  get size(): number {
    return this.open.size;
  }

  /** Whether the node's sandbox has sessions at all. */
  get supported(): boolean {
    return typeof this.sandbox.openSession === 'function';
  }

  /** A new session's id, or null when `max` are open. */
  openOne(opts: z.infer<typeof sessionOpenSchema>): string | null {
    if (!this.sandbox.openSession) throw new Error("this node's sandbox has no sessions");
    if (this.open.size >= this.max) return null;
    const id = randomBytes(16).toString('hex');
    const idleS = opts.idleS ?? DEFAULT_IDLE_S;
    const session = this.sandbox.openSession({ timeS: opts.timeS, idleS });
    this.open.set(id, { session, idleMs: idleS * 1000, lastUse: Date.now(), busy: 0 });
    return id;
  }

  /** Run `fn` on the session `id` (undefined when there is none: closed, idle past its time, or never opened). */
  async use<T>(id: string, fn: (s: SandboxSession) => Promise<T>): Promise<T | undefined> {
    const e = this.open.get(id);
    if (!e) return undefined;
    e.busy++;
    try {
      return await fn(e.session);
    } finally {
      e.busy--;
      e.lastUse = Date.now();
    }
  }

  /** End the session `id`; false when there was none. */
  async closeOne(id: string): Promise<boolean> {
    const e = this.open.get(id);
    if (!e) return false;
    this.open.delete(id);
    await e.session.close();
    return true;
  }

  /** End every session (the node is stopping). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.open.keys()].map((id) => this.closeOne(id)));
  }

  private sweep() {
    const now = Date.now();
    for (const [id, e] of this.open) if (e.busy === 0 && now - e.lastUse > e.idleMs) void this.closeOne(id);
  }
}
