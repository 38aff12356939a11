import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { config } from '../../server/config.ts';
import { UserError } from '../../contracts/errors.ts';
import { bwrapCommand, ZYGOTE_BOOT } from './bwrap.ts';
import { cgroupDirs, enterCgroup, PoolCgroups } from './cgroup.ts';
import { ALLOWED_SYSCALLS, ZYGOTE_SYSCALLS } from './syscall-allow.ts';
import { REFUSED_SYSCALLS } from './syscall-filter.ts';
import {
  internalResult,
  type RunOptions,
  type Sandbox,
  type SandboxCall,
  type SandboxResult,
  type SandboxSession,
  type SessionOptions,
} from './types.ts';
import { replyToResult, ZygoteProcess, type ZygoteReply } from './zygote-process.ts';
import { type Lease, PoolSession, SESSION_IDLE_S, SESSION_TIME_S, SESSIONS_PER_CORE } from './sessions.ts';
import { HEAVY_PRELOAD, STDLIB_PRELOAD, zygoteKind } from './route.ts';
import { checkBubblewrap, interpreterRoot, type Root } from './host-root.ts';
import { withTimeout } from './with-timeout.ts';
import { whereProcessesAre } from './process-report.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ZYGOTE_SCRIPT = path.join(HERE, 'zygote.py');
/** The zygote's Python modules, one per isolation concern, in dependency order (each imports only those before it);
 *  the boot line carries them all (bwrap.ts ZYGOTE_BOOT) and the last, zygote.py, is the main one. */
/**
 * The longest a zygote waits before a call for an earlier call's shared memory to be released by the kernel
 * (zygote_cgroup.settle_memory); past it the zygote reports itself unclean and is replaced.
 */
export const MEMORY_SETTLE_S = 30;
export const ZYGOTE_MODULES = [
  'zygote_os',
  'zygote_signals',
  'zygote_namespaces',
  'zygote_cgroup',
  'zygote_reserve',
  'zygote_mounts',
  'zygote_seccomp',
  'zygote_limits',
  'zygote_capture',
  'zygote_classify',
  'zygote_child',
  'zygote_supervise',
  'zygote_session',
  'zygote_preload',
  'zygote_bench',
  'zygote',
];
let poolsStarted = 0;

export interface PoolOptions {
  /** Number of warm interpreters (default: the core count). */
  size?: number;
  /** Calls that may wait for an interpreter; past that, run() waits for room (backpressure). */
  maxQueue?: number;
  /** How long a call may wait in the queue before it is answered `timeout` (QueueTimeout), ms. */
  queueTimeoutMs?: number;
  timeoutS?: number;
  memoryMb?: number;
  maxOutputBytes?: number;
  maxProcesses?: number;
  maxFileMb?: number;
  tmpMb?: number;
  python?: string;
  /** Modules the heavy zygotes import up front besides the standard library (default numpy, sympy, scipy,
   *  scipy.special; more makes forks dearer). */
  preload?: string[];
  /** Keep a light (standard-library-only) zygote beside each heavy one for calls that import nothing else
   *  (default on; TOOLSMITH_SANDBOX_LIGHT=0 turns it off). See route.ts. */
  light?: boolean;
  /** Run without bubblewrap. Only for machines where it cannot run; every start says so loudly. */
  unsafe?: boolean;
  healthIntervalMs?: number;
  /** Sessions open at once (openSession), each on a zygote of its own started when first needed and kept for the
   *  next session; a session beyond them waits for one to end (default 4 per core). */
  maxSessions?: number;
  log?: (line: string) => void;
  /** bench:sandbox only: lets measureIsolation ask a zygote to time each isolation measure. */
  bench?: boolean;
}

interface Pending {
  call: SandboxCall;
  kind: ZygoteKind;
  enqueuedAt: number;
  deadline: number;
  retried: boolean;
  resolve: (r: SandboxResult) => void;
  timer?: NodeJS.Timeout;
}

type ZygoteKind = 'light' | 'heavy';
/** `inflight`: requests sent to the zygote and not answered yet (at most 2: one running, one queued behind it);
 *  `busyUntil`: when the zygote will be done with them at the latest (their timeouts added up). */
interface Slot {
  index: number;
  kind: ZygoteKind;
  uid: number;
  zygote: ZygoteProcess | null;
  inflight: number;
  busyUntil: number;
  starting: boolean;
  respawning: boolean;
  failures: number;
}

/**
 * A pool of warm zygotes. Each call goes to an idle zygote, which forks a fresh child for it; a zygote that dies
 * is replaced, and the call it was running is retried once, then answered `internal`. Every call resolves
 * exactly once: with its result, a queue timeout, or `internal` when the pool closes.
 */
export class SandboxPool implements Sandbox {
  private slots: Slot[] = [];
  /** Zygotes for sessions, started when first needed; `leased`: those a session holds now. */
  private sessionSlots: Slot[] = [];
  private leased = new Set<Slot>();
  private leaseWaiters: ((slot: Slot | null) => void)[] = [];
  private uidBase = 0;
  private queue: Pending[] = [];
  private spaceWaiters: (() => void)[] = [];
  private closed = false;
  private health?: NodeJS.Timeout;
  readonly opts: Required<Omit<PoolOptions, 'log'>> & { log: (line: string) => void };
  /** Set at start (isolated mode): the read-only root, the boot line, the call cgroups (null: none could be made). */
  private root: Root = { roots: [], links: [], files: [] };
  private boot = '';
  private cgroups: PoolCgroups | null = null;
  readonly stats = { calls: 0, retries: 0, restarts: 0, byStatus: {} as Record<string, number> };

  private constructor(opts: PoolOptions) {
    const cfg = config();
    this.opts = {
      size: opts.size ?? os.availableParallelism(),
      maxQueue: opts.maxQueue ?? 4096,
      queueTimeoutMs: opts.queueTimeoutMs ?? 120000,
      timeoutS: opts.timeoutS ?? 4,
      memoryMb: opts.memoryMb ?? 1024,
      maxOutputBytes: opts.maxOutputBytes ?? 1024 * 1024,
      maxProcesses: opts.maxProcesses ?? 32,
      maxFileMb: opts.maxFileMb ?? 64,
      tmpMb: opts.tmpMb ?? 256,
      python: opts.python ?? cfg.python,
      preload: opts.preload ?? (cfg.sandboxPreload ?? HEAVY_PRELOAD.join(',')).split(',').filter(Boolean),
      light: opts.light ?? cfg.sandboxLight,
      unsafe: opts.unsafe ?? cfg.sandboxUnsafe,
      healthIntervalMs: opts.healthIntervalMs ?? 5000,
      maxSessions: opts.maxSessions ?? SESSIONS_PER_CORE * (opts.size ?? os.availableParallelism()),
      bench: opts.bench ?? false,
      log: opts.log ?? ((line) => console.error(`[sandbox] ${line}`)),
    };
  }

  /** Start the pool; refuses (with the reason and the fix) when bubblewrap cannot isolate, unless unsafe. */
  static async start(opts: PoolOptions = {}): Promise<SandboxPool> {
    const pool = new SandboxPool(opts);
    if (pool.opts.unsafe) {
      pool.opts.log(
        '!!! UNSAFE MODE: model code runs WITHOUT isolation (no bubblewrap): it can read your files and reach the network. Never use this with untrusted models. !!!',
      );
    } else {
      await checkBubblewrap(pool.opts.python);
      pool.root = await interpreterRoot(pool.opts.python, pool.opts.preload);
      pool.cgroups = PoolCgroups.create(`${process.pid}-${++poolsStarted}`, pool.opts.log);
      if (config().sandboxSeccompLog)
        pool.opts.log(
          '!!! MEASURING (TOOLSMITH_SANDBOX_SECCOMP_LOG=1): system calls outside the allow list run and are logged instead of refused. Only for scripts/measure-syscalls.py. !!!',
        );
    }
    const modules = ZYGOTE_MODULES.map((name) => [name, fs.readFileSync(path.join(HERE, `${name}.py`), 'utf8')]);
    pool.boot = JSON.stringify({
      modules,
      main: 'zygote',
      allowed: pool.opts.unsafe || config().sandboxSeccompLog === 'all' ? [] : ALLOWED_SYSCALLS,
      zygote_needs: pool.opts.unsafe ? [] : ZYGOTE_SYSCALLS,
      refused: pool.opts.unsafe ? [] : REFUSED_SYSCALLS,
      log_unlisted: !pool.opts.unsafe && Boolean(config().sandboxSeccompLog),
      bench: pool.opts.bench,
      settle_s: MEMORY_SETTLE_S,
    });
    const base = 100000 + (process.pid % 20000) * 64;
    pool.uidBase = base;
    const kinds: ZygoteKind[] = pool.opts.light ? ['heavy', 'light'] : ['heavy'];
    pool.slots = kinds.flatMap((kind, k) =>
      Array.from({ length: pool.opts.size }, (_, i) => newSlot(k * pool.opts.size + i, kind, base)),
    );
    // Each pool's uids are 64 of their own (base): its sessions' zygotes take those its call zygotes leave.
    pool.opts.maxSessions = Math.max(0, Math.min(pool.opts.maxSessions, 64 - pool.slots.length));
    await Promise.all(pool.slots.map((s) => pool.spawn(s)));
    const up = pool.slots.filter((s) => s.zygote?.alive).length;
    if (up === 0) {
      await pool.close();
      throw new UserError('no sandbox interpreter could start', {
        fix: 'run `npx toolsmith diagnostics` to see which part is missing',
      });
    }
    pool.health = setInterval(() => void pool.checkHealth(), pool.opts.healthIntervalMs);
    pool.health.unref();
    return pool;
  }

  private command(slot: Slot) {
    const preload = [...STDLIB_PRELOAD, ...(slot.kind === 'heavy' ? this.opts.preload : [])].join(',');
    if (this.opts.unsafe) return { file: this.opts.python, args: ['-I', '-c', ZYGOTE_BOOT, preload] };
    const cgroup = this.cgroups?.forZygote(slot.index, slot.uid);
    const cmd = bwrapCommand({
      python: this.opts.python,
      ...this.root,
      uid: slot.uid,
      asRoot: process.getuid?.() === 0,
      tmpBytes: this.opts.tmpMb * 1024 * 1024,
      preload,
      cgroup,
    });
    return cgroup ? enterCgroup(cgroupDirs(cgroup), cmd) : cmd;
  }

  private async spawn(slot: Slot): Promise<void> {
    if (this.closed) return;
    slot.starting = true;
    const { file, args } = this.command(slot);
    const z = new ZygoteProcess(file, args, this.boot);
    slot.zygote = z;
    z.on('exit', () => {
      if (slot.zygote !== z || this.closed) return;
      // Its last words say why (a zygote that finds an earlier call's leftovers exits to be replaced).
      const why = z.lastError.trim().split('\n').pop();
      this.opts.log(`interpreter ${slot.index} exited: ${why || 'no output'}`);
      slot.zygote = null;
      if (slot.inflight === 0) this.respawnLater(slot);
    });
    try {
      await withTimeout(z.ready, 60000, 'the sandbox interpreter did not start within 60 s');
      slot.failures = 0;
    } catch (e) {
      slot.failures++;
      this.opts.log(`interpreter ${slot.index} failed to start: ${(e as Error).message}`);
      z.kill();
      if (slot.zygote === z) slot.zygote = null;
    } finally {
      slot.starting = false;
    }
    if (slot.zygote) this.pump();
    else this.respawnLater(slot);
  }

  private respawnLater(slot: Slot) {
    // Several calls may notice the same death: one respawn is enough.
    if (this.closed || slot.starting || slot.respawning || slot.zygote?.alive) return;
    slot.respawning = true;
    this.stats.restarts++;
    // Back off when starting keeps failing, so a broken environment does not spin.
    const delay = Math.min(30000, slot.failures === 0 ? 0 : 250 * 2 ** slot.failures);
    setTimeout(() => {
      slot.respawning = false;
      void this.spawn(slot);
    }, delay).unref();
  }

  run(call: SandboxCall, opts: RunOptions = {}): Promise<SandboxResult> {
    const enqueuedAt = Date.now();
    const deadline =
      opts.deadline ?? enqueuedAt + this.opts.queueTimeoutMs + (call.timeoutS ?? this.opts.timeoutS) * 1000;
    return new Promise<SandboxResult>((resolve) => {
      if (this.closed) return resolve(internalResult('the sandbox pool is closed'));
      const kind: ZygoteKind = this.opts.light ? zygoteKind(call.code, call.history) : 'heavy';
      let onAbort: (() => void) | undefined;
      const p: Pending = {
        call,
        kind,
        enqueuedAt,
        deadline,
        retried: false,
        resolve: (r) => {
          if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
          resolve(r);
        },
      };
      const admit = () => {
        if (this.closed) return resolve(internalResult('the sandbox pool is closed'));
        if (this.queue.length >= this.opts.maxQueue) {
          this.spaceWaiters.push(admit);
          return;
        }
        p.timer = setTimeout(() => this.expire(p), Math.max(0, deadline - Date.now()));
        this.queue.push(p);
        this.pump();
      };
      onAbort = () => this.expire(p, 'cancelled by the caller');
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      admit();
    });
  }

  runBatch(calls: SandboxCall[], opts: RunOptions = {}): Promise<SandboxResult[]> {
    return Promise.all(calls.map((c) => this.run(c, opts)));
  }

  /** A queued call whose deadline passed: answered here, never run. */
  private expire(p: Pending, why = 'the call waited in the queue past its deadline') {
    const i = this.queue.indexOf(p);
    if (i === -1) return;
    this.queue.splice(i, 1);
    this.finish(p, { ...internalResult(why, Date.now() - p.enqueuedAt), status: 'timeout', errorType: 'QueueTimeout' });
    this.freeSpace();
  }

  private freeSpace() {
    while (this.spaceWaiters.length && this.queue.length < this.opts.maxQueue) this.spaceWaiters.shift()!();
  }

  private finish(p: Pending, r: SandboxResult) {
    clearTimeout(p.timer);
    this.stats.calls++;
    this.stats.byStatus[r.status] = (this.stats.byStatus[r.status] ?? 0) + 1;
    p.resolve(r);
  }

  /** Zygotes working now: at most `size` (one per core), whichever kind. */
  private busySlots() {
    return this.slots.filter((s) => s.inflight > 0).length;
  }

  /**
   * Start queued calls, oldest first. A call goes to an idle zygote of its kind while fewer than `size` are
   * busy; when none may start, it is queued inside a busy zygote of its kind behind the call running there
   * (one deep), so the zygote starts it the moment it answers instead of idling through a round trip.
   */
  private pump() {
    const full = new Set<ZygoteKind>();
    for (let i = 0; i < this.queue.length && full.size < 2; ) {
      const kind = this.queue[i].kind;
      const slot = full.has(kind) ? undefined : this.slotFor(kind);
      if (!slot) {
        full.add(kind);
        i++;
        continue;
      }
      const [p] = this.queue.splice(i, 1);
      this.freeSpace();
      void this.execute(slot, p);
    }
  }

  private slotFor(kind: ZygoteKind): Slot | undefined {
    const up = (s: Slot) => !s.starting && !!s.zygote?.alive;
    let own = this.slots.filter((s) => s.kind === kind);
    // No light zygote up at all (say, it keeps failing to start): a heavy one runs the call just the same.
    if (kind === 'light' && !own.some((s) => s.zygote?.alive || s.starting))
      own = this.slots.filter((s) => s.kind === 'heavy');
    const idle = own.find((s) => up(s) && s.inflight === 0);
    if (idle && this.busySlots() < this.opts.size) return idle;
    return own.filter((s) => up(s) && s.inflight === 1).sort((a, b) => a.busyUntil - b.busyUntil)[0];
  }

  private async execute(slot: Slot, p: Pending) {
    const z = slot.zygote!;
    const startedAt = Date.now();
    const queueMs = startedAt - p.enqueuedAt;
    const remainingS = (p.deadline - startedAt) / 1000;
    const timeoutS = Math.max(0.05, Math.min(p.call.timeoutS ?? this.opts.timeoutS, remainingS));
    // Queued behind another call, this one starts when that one ends at the latest.
    const startsBy = Math.max(startedAt, slot.busyUntil);
    slot.busyUntil = startsBy + timeoutS * 1000;
    slot.inflight++;
    let reply: ZygoteReply | null = null;
    try {
      // The zygote enforces the timeout itself; this guard only catches a zygote that stopped answering. Before the
      // call starts the zygote may wait up to MEMORY_SETTLE_S for a dead call's memory to be released (seconds
      // when the kernel's workers are starved of CPU): that wait is not a hang.
      reply = await withTimeout(
        z.call({ ...p.call, timeoutS, deadlineMs: p.deadline }, this.opts),
        startsBy - startedAt + (MEMORY_SETTLE_S + timeoutS + 10) * 1000,
        'no answer',
      ).catch(() => null);
    } finally {
      slot.inflight--;
      if (slot.inflight === 0) slot.busyUntil = 0;
    }
    if (reply === null) {
      // The zygote died (or hung) during the call: replace it, and retry the call once on a fresh one.
      if (slot.zygote === z) {
        this.opts.log(
          `interpreter ${slot.index} did not answer a call in time; replacing it (its processes: ${whereProcessesAre(z.pid)})`,
        );
        z.kill();
        slot.zygote = null;
      }
      if (!slot.zygote) this.respawnLater(slot);
      if (!p.retried && Date.now() < p.deadline && !this.closed) {
        p.retried = true;
        this.stats.retries++;
        this.queue.unshift(p);
      } else {
        this.finish(
          p,
          internalResult('the sandbox interpreter died during the call (the call was retried once)', queueMs),
        );
      }
    } else {
      // Waiting counts from enqueue to the start of the run, including any wait behind a call in the zygote.
      this.finish(p, replyToResult(reply, Math.max(queueMs, Date.now() - p.enqueuedAt - reply.duration_ms)));
    }
    this.pump();
  }

  /** Ping idle zygotes; one that does not answer in 5 s, or cannot prove its state clean, is replaced. */
  private async checkHealth() {
    for (const slot of this.slots) {
      const z = slot.zygote;
      if (!z || slot.inflight > 0 || slot.starting || !z.alive) continue;
      slot.inflight++;
      const pong = await withTimeout(z.request({ ping: true }), 5000, 'ping timeout').catch(() => null);
      slot.inflight--;
      // It exited while the ping was out: its exit handler left the respawn to whoever held the slot (as execute
      // does for a call), else the slot would stay empty for good.
      if (!slot.zygote) this.respawnLater(slot);
      if ((!pong || pong.clean === false) && slot.zygote === z) {
        this.opts.log(
          `interpreter ${slot.index} ${pong ? 'cannot prove its state clean' : 'did not answer a health check'}; replacing it${pong ? '' : ` (its processes: ${whereProcessesAre(z.pid)})`}`,
        );
        z.kill();
      }
      this.pump();
    }
  }

  /** bench:sandbox: the per-call cost of each isolation measure, timed by an idle zygote of `kind` (n forks each,
   *  the code process running `code`). */
  async measureIsolation(n: number, code = '', kind: ZygoteKind = 'heavy'): Promise<{ measure: string; ms: number }[]> {
    const slot = this.slots.find((s) => s.kind === kind && s.zygote?.alive && s.inflight === 0);
    if (!slot || !this.opts.bench)
      throw new Error(`measureIsolation needs an idle ${kind} zygote of a pool started with bench: true`);
    slot.inflight++;
    try {
      const r = (await slot.zygote!.request({ measure: n, code })) as unknown as {
        measures?: { measure: string; ms: number }[];
      } | null;
      if (!r?.measures) throw new Error('the zygote did not answer the measurement');
      return r.measures;
    } finally {
      slot.inflight--;
      if (!slot.zygote) this.respawnLater(slot); // it exited meanwhile (checkHealth)
      this.pump();
    }
  }

  /** Pool state for /health and /metrics. */
  status() {
    return {
      size: this.opts.size,
      interpreters: this.slots.length,
      alive: this.slots.filter((s) => s.zygote?.alive && !s.starting).length,
      busy: this.busySlots(),
      queued: this.queue.length,
      unsafe: this.opts.unsafe,
      cgroup: this.cgroups?.layout.version ?? 'none',
      /** Sessions open now (each holds a zygote), and the zygotes started for sessions so far. */
      sessions: { open: this.leased.size, interpreters: this.sessionSlots.length, waiting: this.leaseWaiters.length },
      ...this.stats,
    };
  }

  /** A session (SandboxSession): its calls share one interpreter on a zygote lent to it alone until it ends. */
  openSession(o: SessionOptions = {}): SandboxSession {
    return new PoolSession(
      {
        lease: (deadline, signal) => this.lease(deadline, signal),
        release: (lease) => this.release((lease as Lease & { slot: Slot }).slot),
        request: (c, z, extra) => z.call(c, this.opts, extra),
        count: (r) => {
          this.stats.calls++;
          this.stats.byStatus[r.status] = (this.stats.byStatus[r.status] ?? 0) + 1;
        },
        defaults: { timeoutS: this.opts.timeoutS, queueTimeoutMs: this.opts.queueTimeoutMs },
        graceMs: (MEMORY_SETTLE_S + 10) * 1000,
      },
      { timeS: o.timeS ?? SESSION_TIME_S, idleS: o.idleS ?? SESSION_IDLE_S },
    );
  }

  /** A zygote for a session: a free one, a new one while there are fewer than maxSessions, or the next one given
   *  back; null past `deadline`, when aborted, or when the pool closes. */
  private async lease(deadline: number, signal?: AbortSignal): Promise<(Lease & { slot: Slot }) | null> {
    if (this.closed) return null;
    let slot = this.sessionSlots.find((s) => !this.leased.has(s) && !s.starting && s.zygote?.alive);
    if (!slot && this.sessionSlots.length < this.opts.maxSessions) {
      slot = newSlot(this.slots.length + this.sessionSlots.length, 'heavy', this.uidBase);
      this.sessionSlots.push(slot);
      this.leased.add(slot);
      await this.spawn(slot);
    } else if (!slot) {
      slot =
        (await new Promise<Slot | null>((resolve) => {
          const give = (s: Slot | null) => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', drop);
            resolve(s);
          };
          const drop = () => {
            this.leaseWaiters.splice(this.leaseWaiters.indexOf(give) >>> 0, 1);
            give(null);
          };
          const timer = setTimeout(drop, Math.max(0, deadline - Date.now()));
          signal?.addEventListener('abort', drop, { once: true });
          this.leaseWaiters.push(give);
        })) ?? undefined;
      if (!slot) return null;
    }
    this.leased.add(slot);
    const held = slot;
    return {
      slot: held,
      zygote: async (by) => {
        // A zygote that died is being replaced (its exit handler respawns it): wait for the new one.
        while (!(held.zygote?.alive && !held.starting)) {
          if (this.closed || Date.now() >= by) return null;
          await new Promise((r) => setTimeout(r, 50));
        }
        return held.zygote;
      },
      replace: (z) => {
        if (held.zygote !== z) return;
        this.opts.log(
          `session interpreter ${held.index} did not answer in time; replacing it (its processes: ${whereProcessesAre(z.pid)})`,
        );
        z.kill();
      },
    };
  }

  private release(slot: Slot) {
    const next = this.leaseWaiters.shift();
    if (next && !this.closed) next(slot);
    else this.leased.delete(slot);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.health);
    for (const p of this.queue.splice(0)) this.finish(p, internalResult('the sandbox pool is closed'));
    for (const w of this.spaceWaiters.splice(0)) w();
    for (const w of this.leaseWaiters.splice(0)) w(null);
    const exits = [...this.slots, ...this.sessionSlots]
      .map((s) => s.zygote)
      .filter((z): z is ZygoteProcess => !!z && z.alive)
      .map(
        (z) =>
          new Promise<void>((r) => {
            z.once('exit', () => r());
            z.kill();
          }),
      );
    await Promise.all(exits);
    await this.cgroups?.remove();
  }
}

function newSlot(index: number, kind: ZygoteKind, uidBase: number): Slot {
  return {
    index,
    kind,
    uid: uidBase + index,
    zygote: null,
    inflight: 0,
    busyUntil: 0,
    starting: false,
    respawning: false,
    failures: 0,
  };
}
