/**
 * A small pool of worker_threads for the checks that run uninterruptible JS (compute-engine). Each check gets its
 * own time limit counted from when a worker takes it; a worker that runs past it is terminated and replaced, so a
 * pathological expression never blocks the event loop and concurrent checks are each bounded.
 */
import { Worker } from 'node:worker_threads';
import type { SymReply, SymTask } from './symbolic-worker.ts';

export type SymResult = Omit<SymReply, 'id'> | { equal: null; method: 'symbolic'; reason: string; timeout: true };

interface Job {
  task: Omit<SymTask, 'id'>;
  timeoutMs: number;
  enqueued: number;
  resolve: (r: SymResult) => void;
}
interface Slot {
  worker: Worker;
  ready: boolean;
  job: (Job & { id: number }) | null;
  timer?: NodeJS.Timeout;
}

export interface SymPoolOptions {
  size?: number;
  queueTimeoutMs?: number;
}

export class SymbolicPool {
  private slots: Slot[] = [];
  private queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  readonly size: number;
  private queueTimeoutMs: number;
  /** Workers terminated for running past their limit (for tests and metrics). */
  terminated = 0;
  private bootFailures = 0;
  private broken: string | null = null;

  constructor(opts: SymPoolOptions = {}) {
    this.size = Math.max(1, opts.size ?? 2);
    this.queueTimeoutMs = opts.queueTimeoutMs ?? 60_000;
  }

  private spawn(): Slot {
    const worker = new Worker(new URL('./symbolic-worker-boot.mjs', import.meta.url));
    worker.unref();
    const slot: Slot = { worker, ready: false, job: null };
    worker.on('message', (m: SymReply | { ready: true }) => {
      if ('ready' in m) {
        slot.ready = true;
        this.pump();
        return;
      }
      const job = slot.job;
      if (!job || job.id !== m.id) return;
      clearTimeout(slot.timer);
      slot.job = null;
      job.resolve({ equal: m.equal, method: m.method, reason: m.reason });
      this.pump();
    });
    const onDeath = (why: string) => {
      const i = this.slots.indexOf(slot);
      if (i === -1) return;
      clearTimeout(slot.timer);
      const job = slot.job;
      slot.job = null;
      this.slots.splice(i, 1);
      if (job) job.resolve({ equal: null, method: 'symbolic', reason: `symbolic worker died: ${why}` });
      if (!slot.ready && ++this.bootFailures >= 3) {
        // The workers cannot start (e.g. the module will not load): answer everything inconclusive, stop trying.
        this.broken = `symbolic workers cannot start: ${why}`;
        for (const j of this.queue.splice(0)) j.resolve({ equal: null, method: 'symbolic', reason: this.broken });
        return;
      }
      if (slot.ready) this.bootFailures = 0;
      if (!this.closed) {
        this.slots.push(this.spawn());
      }
    };
    worker.on('error', (e) => onDeath(e.message));
    worker.on('exit', (code) => onDeath(`exit ${code}`));
    return slot;
  }

  private ensure() {
    while (!this.closed && !this.broken && this.slots.length < this.size) this.slots.push(this.spawn());
  }

  /** Start the workers now (they take a moment to load compute-engine). */
  warm(): Promise<void> {
    this.ensure();
    return new Promise((resolve) => {
      const poll = () => (this.closed || this.slots.every((s) => s.ready) ? resolve() : setTimeout(poll, 20).unref());
      poll();
    });
  }

  run(task: Omit<SymTask, 'id'>, timeoutMs: number): Promise<SymResult> {
    if (this.closed) return Promise.resolve({ equal: null, method: 'symbolic', reason: 'verifier closed' });
    if (this.broken) return Promise.resolve({ equal: null, method: 'symbolic', reason: this.broken });
    this.ensure();
    return new Promise((resolve) => {
      this.queue.push({ task, timeoutMs, enqueued: Date.now(), resolve });
      this.pump();
    });
  }

  private pump() {
    const now = Date.now();
    this.queue = this.queue.filter((j) => {
      if (now - j.enqueued <= this.queueTimeoutMs) return true;
      j.resolve({ equal: null, method: 'symbolic', reason: 'waited too long for a symbolic worker', timeout: true });
      return false;
    });
    for (const slot of this.slots) {
      if (!slot.ready || slot.job || this.queue.length === 0) continue;
      const j = this.queue.shift()!;
      const id = this.nextId++;
      slot.job = { ...j, id };
      slot.timer = setTimeout(() => {
        if (slot.job?.id !== id) return;
        const job = slot.job;
        slot.job = null;
        this.terminated++;
        const i = this.slots.indexOf(slot);
        if (i !== -1) this.slots.splice(i, 1);
        void slot.worker.terminate();
        job.resolve({
          equal: null,
          method: 'symbolic',
          reason: `symbolic check ran past ${job.timeoutMs} ms`,
          timeout: true,
        });
        this.ensure();
      }, j.timeoutMs);
      slot.worker.postMessage({ id, ...j.task });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const j of this.queue) j.resolve({ equal: null, method: 'symbolic', reason: 'verifier closed' });
    this.queue = [];
    const slots = this.slots;
    this.slots = [];
    await Promise.all(
      slots.map(async (s) => {
        clearTimeout(s.timer);
        s.job?.resolve({ equal: null, method: 'symbolic', reason: 'verifier closed' });
        await s.worker.terminate();
      }),
    );
  }
}
