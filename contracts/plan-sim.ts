/**
 * A discrete-event simulation of one RL step's rollout phase at scale (docs/method.md §6), driven by the
 * planner's constants. Pure and seeded: the same inputs give the same step.
 *
 * - Engines: each a processor-sharing server of `tokensPerS` decode throughput split among its running requests
 *   (at most `maxBatch`; one request never decodes faster than `perRequestTokensPerS`). A trajectory is admitted to
 *   the engine with the most free KV budget when its reservation (prompt + response budget) fits (§6), and holds it
 *   until it ends.
 * - Trajectories: a number of turns drawn around the mean calls per trajectory (capped by the turn limit), each turn
 *   generating its share of a response length drawn around the mean; a tool call after every turn but the last.
 * - The code service: calls go through a dispatcher that sends batches of up to `batchSize` calls every
 *   `dispatchIntervalS` per sender (the report: 32 senders, ≤ 64 calls), to `executors` workers (FIFO); a call takes
 *   an exponential CPU time of mean `cpuPerCallS`.
 * - Dispatch: `async` (a call leaves the moment its turn ends, and its trajectory rejoins its engine when the result
 *   is back) or `turn_sync` (the static baseline: every trajectory's turn k must end, calls included, before any
 *   turn k + 1 starts).
 * Reports the rollout phase's length, the engines' idle share, the calls (conserved: every turn but the last makes
 * one) and their mean latency from the end of the turn to the result.
 */
import { mulberry32 as rng } from './random.ts';

export interface SimInput {
  trajectories: number;
  engines: number;
  /** Decode tokens per second of one engine at full batch. */
  tokensPerS: number;
  perRequestTokensPerS: number;
  maxBatch: number;
  /** KV budget of one engine in tokens. */
  kvTokens: number;
  promptTokens: number;
  maxResponseTokens: number;
  meanResponseTokens: number;
  maxTurns: number;
  meanCalls: number;
  executors: number;
  cpuPerCallS: number;
  senders: number;
  batchSize: number;
  dispatchIntervalS: number;
  dispatch: 'async' | 'turn_sync';
  /** Lengths and call counts drawn from exponentials around their means, or all equal to them. */
  lengths?: 'exponential' | 'fixed';
  seed: number;
}

export interface SimResult {
  stepS: number;
  engineIdleShare: number;
  toolCalls: number;
  meanToolLatencyS: number;
  turns: number;
}

interface Traj {
  turnsLeft: number;
  tokensPerTurn: number;
  engine: number;
  callsMade: number;
  id: number;
}

interface Running {
  traj: number;
  left: number;
}

/** A binary heap of [time, seq, fn]: events in time order, ties in the order they were scheduled. */
class Events {
  private h: [number, number, () => void][] = [];
  private seq = 0;
  push(t: number, fn: () => void) {
    const h = this.h;
    h.push([t, this.seq++, fn]);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (less(h[i]!, h[p]!)) {
        [h[i], h[p]] = [h[p]!, h[i]!];
        i = p;
      } else break;
    }
  }
  pop(): [number, number, () => void] | undefined {
    const h = this.h;
    if (!h.length) return undefined;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && less(h[l]!, h[m]!)) m = l;
        if (r < h.length && less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
const less = (a: [number, number, unknown], b: [number, number, unknown]) =>
  a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

export function simulateStep(x: SimInput): SimResult {
  // One piece: the simulation's state (clock, engines, queues, code service) and the event handlers that close over
  // it and call one another (a turn's end sends a call, a call's return starts a turn); apart, each would take it all.
  const rand = rng(x.seed);
  const ev = new Events();
  let now = 0;
  // Trajectories: turns = 1 + calls (calls around the mean, capped), tokens split evenly over the turns.
  const draw = (mean: number) => (x.lengths === 'fixed' ? mean : -Math.log(1 - rand()) * mean);
  const trajs: Traj[] = Array.from({ length: x.trajectories }, (_, i) => {
    const calls = Math.min(x.maxTurns - 1, Math.max(0, Math.round(draw(x.meanCalls))));
    const response = Math.min(x.maxResponseTokens, Math.max(1, draw(x.meanResponseTokens)));
    return { turnsLeft: calls + 1, tokensPerTurn: response / (calls + 1), engine: -1, callsMade: 0, id: i };
  });
  // Each call's CPU time is fixed by its trajectory and index, so that the fleet's size changes when calls run,
  // never how long each takes.
  const serviceS = (t: number, k: number) =>
    x.lengths === 'fixed' ? x.cpuPerCallS : -Math.log(1 - rng(x.seed * 7919 + t * 131 + k)()) * x.cpuPerCallS;
  const reservation = Math.min(x.kvTokens, x.promptTokens + x.maxResponseTokens);
  // Engines: processor sharing over their running requests.
  const engines = Array.from({ length: x.engines }, () => ({
    free: x.kvTokens,
    running: [] as Running[],
    waiting: [] as number[], // trajectories admitted and waiting for a batch slot
    last: 0,
    busyS: 0,
    version: 0,
  }));
  const pending: number[] = trajs.map((_, i) => i); // not yet admitted
  let turnsDone = 0;
  let calls = 0;
  let latencySum = 0;
  let finished = 0;

  const rate = (e: (typeof engines)[number]) =>
    e.running.length ? Math.min(x.perRequestTokensPerS, x.tokensPerS / e.running.length) : 0;
  const advance = (e: (typeof engines)[number]) => {
    const dt = now - e.last;
    if (dt > 0 && e.running.length) {
      const r = rate(e);
      for (const q of e.running) q.left -= r * dt;
      e.busyS += dt;
    }
    e.last = now;
  };
  const reschedule = (ei: number) => {
    const e = engines[ei]!;
    e.version++;
    if (!e.running.length) return;
    const r = rate(e);
    const next = Math.min(...e.running.map((q) => q.left)) / r;
    const v = e.version;
    ev.push(now + Math.max(0, next), () => {
      if (e.version !== v) return;
      advance(e);
      const done = e.running.filter((q) => q.left <= 1e-6);
      e.running = e.running.filter((q) => q.left > 1e-6);
      for (const q of done) turnEnded(q.traj);
      fill(ei);
      reschedule(ei);
    });
  };
  const fill = (ei: number) => {
    const e = engines[ei]!;
    while (e.running.length < x.maxBatch && e.waiting.length) {
      const t = e.waiting.shift()!;
      e.running.push({ traj: t, left: trajs[t]!.tokensPerTurn });
    }
  };
  const startTurn = (t: number) => {
    const ei = trajs[t]!.engine;
    const e = engines[ei]!;
    advance(e);
    e.waiting.push(t);
    fill(ei);
    reschedule(ei);
  };
  const admit = () => {
    while (pending.length) {
      let best = -1;
      for (let i = 0; i < engines.length; i++)
        if (engines[i]!.free >= reservation && (best < 0 || engines[i]!.free > engines[best]!.free)) best = i;
      if (best < 0) return;
      const t = pending.shift()!;
      trajs[t]!.engine = best;
      engines[best]!.free -= reservation;
      if (x.dispatch === 'async') startTurn(t);
      else syncReady.push(t);
    }
  };
  // The code service: senders flush queued calls in batches; executors run them FIFO.
  const outbox: { t: number; at: number }[] = [];
  const execQueue: { t: number; at: number }[] = [];
  let idleExecutors = x.executors;
  const runCalls = () => {
    while (idleExecutors > 0 && execQueue.length) {
      const c = execQueue.shift()!;
      idleExecutors--;
      const s = serviceS(c.t, trajs[c.t]!.callsMade++);
      ev.push(now + s, () => {
        idleExecutors++;
        latencySum += now - c.at;
        callReturned(c.t);
        runCalls();
      });
    }
  };
  let flushing = false;
  const flush = () => {
    if (flushing || !outbox.length) return;
    flushing = true;
    ev.push(now + x.dispatchIntervalS, () => {
      flushing = false;
      execQueue.push(...outbox.splice(0, x.senders * x.batchSize));
      runCalls();
      flush();
    });
  };
  // turn_sync: a barrier per turn index over the admitted trajectories.
  const syncReady: number[] = [];
  let syncOutstanding = 0;
  const syncRound = () => {
    if (syncOutstanding > 0) return;
    const batch = syncReady.splice(0);
    syncOutstanding = batch.length;
    for (const t of batch) startTurn(t);
  };
  const endTrajectory = (t: number) => {
    finished++;
    engines[trajs[t]!.engine]!.free += reservation;
    admit();
  };
  function turnEnded(t: number) {
    turnsDone++;
    const tr = trajs[t]!;
    tr.turnsLeft--;
    if (tr.turnsLeft === 0) {
      endTrajectory(t);
      if (x.dispatch === 'turn_sync') syncDone();
      return;
    }
    calls++;
    outbox.push({ t, at: now });
    flush();
  }
  function callReturned(t: number) {
    if (x.dispatch === 'async') startTurn(t);
    else {
      syncReady.push(t);
      syncDone();
    }
  }
  function syncDone() {
    syncOutstanding--;
    if (syncOutstanding === 0) syncRound();
  }

  admit();
  if (x.dispatch === 'turn_sync') syncRound();
  for (let e = ev.pop(); e; e = ev.pop()) {
    now = e[0];
    e[2]();
  }
  for (const e of engines) advance(e);
  const stepS = now;
  const busy = engines.reduce((a, e) => a + e.busyS, 0);
  if (finished !== x.trajectories)
    throw new Error(`simulation ended with ${x.trajectories - finished} trajectories unfinished`);
  return {
    stepS,
    engineIdleShare: stepS > 0 ? 1 - busy / (stepS * x.engines) : 0,
    toolCalls: calls,
    meanToolLatencyS: calls ? latencySum / calls : 0,
    turns: turnsDone,
  };
}

/** What the simulation needs beyond the planner's constants: the engines' batching and the code service's shape. */
export interface SimSettings {
  /** Sandbox workers per CPU node (the report: 1,024). */
  executorsPerNode: number;
  /** The dispatcher: senders, calls per batch, and how often each sends (the report: 32 senders, ≤ 64 calls). */
  senders: number;
  batchSize: number;
  dispatchIntervalS: number;
  /** One request's decode speed on a GPU engine, and the most requests an engine batches. */
  perRequestTokensPerS: number;
  maxBatch: number;
  /** KV cache bytes per token (Qwen3-14B: 40 layers × 8 KV heads × 128 × 2 × 2 B = 160 KiB). */
  kvBytesPerToken: number;
}

export const REPORT_SIM: SimSettings = {
  executorsPerNode: 1024,
  senders: 32,
  batchSize: 64,
  dispatchIntervalS: 0.05,
  perRequestTokensPerS: 60,
  maxBatch: 256,
  kvBytesPerToken: 40 * 8 * 128 * 2 * 2,
};

/**
 * The simulation's input for one RL stage on a cluster, from the planner's constants (the same ones planRun uses):
 * one engine per engine GPU (or one on a CPU machine), its KV budget what the GPU's memory holds past the weights.
 */
export function simInputFor(
  stage: { promptsPerStep: number; rolloutsPerPrompt: number; maxResponseTokens: number; maxTurns: number },
  params: number,
  cluster: {
    nodes: number;
    gpusPerNode: number;
    gpu: { peakTflops: number; memoryGb: number } | null;
    cpuCoresPerNode: number;
    sandboxNodes: number;
    engineGpuShare: number;
  },
  c: {
    responseShare: { value: number };
    callsPerTrajectory: { value: number };
    promptTokens: { value: number };
    engineDecodeEfficiency: { value: number };
    engineTokensPerS: { value: number };
    cpuEngineFlops: { value: number };
    cpuPerCallS: { value: number };
  },
  settings: SimSettings,
  dispatch: SimInput['dispatch'],
  seed = 1,
): SimInput {
  const gpus = cluster.nodes * cluster.gpusPerNode;
  const onGpus = gpus > 0 && cluster.gpu !== null;
  const engines = onGpus ? Math.max(1, Math.round(gpus * cluster.engineGpuShare)) : 1;
  const tokensPerS = onGpus
    ? (c.engineDecodeEfficiency.value * cluster.gpu!.peakTflops * 1e12) / (2 * params)
    : Math.min(c.engineTokensPerS.value, c.cpuEngineFlops.value / (2 * params));
  const kvTokens = onGpus
    ? Math.max(1, (0.9 * cluster.gpu!.memoryGb * 1e9 - 2 * params) / settings.kvBytesPerToken)
    : 1e12;
  const cpuNodes = cluster.sandboxNodes > 0 ? cluster.sandboxNodes : cluster.nodes;
  return {
    trajectories: stage.promptsPerStep * stage.rolloutsPerPrompt,
    engines,
    tokensPerS,
    perRequestTokensPerS: onGpus ? settings.perRequestTokensPerS : tokensPerS,
    maxBatch: settings.maxBatch,
    kvTokens,
    promptTokens: c.promptTokens.value,
    maxResponseTokens: stage.maxResponseTokens,
    meanResponseTokens: c.responseShare.value * stage.maxResponseTokens,
    maxTurns: stage.maxTurns,
    meanCalls: c.callsPerTrajectory.value,
    executors: onGpus ? cpuNodes * settings.executorsPerNode : cluster.cpuCoresPerNode,
    cpuPerCallS: c.cpuPerCallS.value,
    senders: settings.senders,
    batchSize: settings.batchSize,
    dispatchIntervalS: settings.dispatchIntervalS,
    dispatch,
    seed,
  };
}
