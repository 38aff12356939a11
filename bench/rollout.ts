/**
 * bench:rollout — rollout scheduling (docs/method.md §6) and the verifier, in one run.
 *
 *   npx tsx bench/rollout.ts [--quick] [--trajectories N] [--batch B]
 *
 * Same SFT'd embedded model (tests/helpers/embedded-sft.ts, trained on first use and cached), same held-out
 * problems and seeds, real sandbox pool with isolation on, real tool calls, on two workloads: "mixed" (every family,
 * as training sees them; most calls take a few ms) and "slow tools" (the brute-force counting family at difficulty 3,
 * whose calls loop over 1–3 million numbers: 100–400 ms each, the regime of the report's code environment).
 * The engine runs on one thread and the sandbox pool has one interpreter, so generation and tool calls each have a
 * core of this 2-core machine, as in the report generation has GPUs and tools have CPU nodes. Schedules:
 *   (i)  turn-synchronous: every live trajectory generates turn k, then all their calls run, and turn k+1 starts
 *        when the slowest call of turn k is back (the static baseline the report replaced);
 *   (ii) async: each call goes to the sandbox the moment it is generated; the trajectory rejoins the engine's
 *        continuous batch when its result is back.
 * Seeded sampling is batch-invariant, so both produce the same trajectories (checked): only the schedule differs.
 * Each schedule runs on two engines over the same SFT checkpoint, side by side: the previous engine (the
 * baseline: every row's cache copied into a padded past at each decode step, every turn prefilled from scratch;
 * bench/baseline/onnx-engine-v1.ts on export_onnx.py --graph legacy) and the current one (slot cache read in place,
 * a trajectory's next turn starts from its parked cache).
 * Per schedule and engine: trajectories/s, engine busy fraction (time inside the model / wall time), mean decode
 * batch, the share of prompt tokens reused from a cache. Then (ii) again with the live board observing every event.
 * Then decode throughput: 16 requests with held-out prompts decoding 256 tokens each at once, tokens/s per engine.
 * Then the verifier: pairs/s over the 242-pair corpus (tests/fixtures/verifier-corpus.jsonl), sympy step off.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { OnnxEngine } from '../workers/engines/onnx-engine.ts';
import { LegacyOnnxEngine } from './baseline/onnx-engine-v1.ts';
import type { PolicyEngine } from '../workers/engines/types.ts';
import { Verifier } from '../workers/reward/verifier.ts';
import { runRollouts, type Schedule } from '../workers/rollout/agent.ts';
import { LiveBoard } from '../workers/rollout/live.ts';
import { EMBEDDED_TEMPLATE_SETTINGS, buildPrompt } from '../workers/rollout/template.ts';
import { responseText, toolStats } from '../workers/rollout/trajectory.ts';
import type { Trajectory } from '../contracts/trajectory.ts';
import { SandboxPool } from '../workers/sandbox/pool.ts';
import { generate } from '../workers/tasks/arith.ts';
import {
  DEFAULT_EMBEDDED_SFT,
  ensureEmbeddedSftModel,
  exportCheckpoint,
  exportKey,
  sftCacheKey,
  sftCheckpointDir,
} from '../tests/helpers/embedded-sft.ts';
import { cacheEntry } from '../scripts/build-cache.mjs';
import { benchFlags } from './flags.ts';

const flags = benchFlags('bench:rollout', 'npx tsx bench/rollout.ts [--quick] [--trajectories N] [--batch B]', {
  quick: 'boolean',
  trajectories: 'number',
  batch: 'number',
});
const N = (flags.trajectories as number | undefined) ?? (flags.quick ? 32 : 128);
const BATCH = (flags.batch as number | undefined) ?? 16;
const SAMPLES = 4;

const log = (m: string) => console.log(m);
const dir = await ensureEmbeddedSftModel({ log: (m) => log(`[sft] ${m}`) });
// The legacy graph, exported from the same checkpoint into an entry of its own.
const legacy = cacheEntry('sft-export-legacy', `${sftCacheKey(DEFAULT_EMBEDDED_SFT)}:${exportKey()}`);
if (!legacy) throw new Error('this benchmark needs the build cache');
if (!legacy.ready()) {
  legacy.begin();
  exportCheckpoint(sftCheckpointDir(), legacy.dir, 'legacy');
  legacy.seal();
}
const legacyDir = legacy.dir;
type Bench = PolicyEngine & {
  steps: number;
  stepRows: number;
  reusedTokens?: number;
  prefillTokens?: number;
  close(): Promise<void>;
};
const engines: { name: string; engine: Bench }[] = [
  { name: 'previous', engine: await LegacyOnnxEngine.load(legacyDir, { maxBatch: BATCH, threads: 1 }) },
  { name: 'current', engine: await OnnxEngine.load(dir, { maxBatch: BATCH, threads: 1 }) },
];
const sandbox = await SandboxPool.start({ size: 1, log: () => {} });
const workloads = {
  mixed: generate({ split: 'test', n: Math.ceil(N / SAMPLES), seed: 21 }),
  'slow tools': generate({ split: 'test', n: Math.ceil(N / SAMPLES), seed: 22, families: ['count'], difficulty: 3 }),
};
let requests: { id: string; problem: string; seed: number }[] = [];

interface Cell {
  name: string;
  seconds: number;
  perSecond: number;
  busy: number;
  toolBusy: number;
  meanBatch: number;
  reuse: number | null;
  trajectories: Trajectory[];
}

async function measure(engine: Bench, name: string, schedule: Schedule, observe = false): Promise<Cell> {
  const board = new LiveBoard();
  let drained = 0;
  const timer = observe
    ? setInterval(() => {
        drained += board.drain().length;
      }, 1000)
    : null;
  const s0 = engine.steps,
    r0 = engine.stepRows,
    c0 = engine.computeMs,
    u0 = engine.reusedTokens ?? 0,
    p0 = engine.prefillTokens ?? 0;
  const t0 = performance.now();
  const trajectories = await runRollouts(requests, {
    engine,
    sandbox,
    template: EMBEDDED_TEMPLATE_SETTINGS,
    limits: { maxResponseTokens: 420, maxTurns: 6 },
    temperature: 1,
    schedule,
    onEvent: observe ? board.onEvent : undefined,
  });
  const seconds = (performance.now() - t0) / 1000;
  if (timer) {
    clearInterval(timer);
    drained += board.drain().length;
    if (drained < N) throw new Error(`live board saw ${drained} updates for ${N} trajectories`);
  }
  const steps = engine.steps - s0;
  const reused = (engine.reusedTokens ?? 0) - u0,
    prefilled = (engine.prefillTokens ?? 0) - p0;
  // The one sandbox interpreter's share of the wall time spent running calls: near 100%, the tools are the bound.
  const toolMs = trajectories.reduce((s, t) => s + t.turns.reduce((a, x) => a + (x.tool?.durationMs ?? 0), 0), 0);
  return {
    name,
    seconds,
    perSecond: N / seconds,
    busy: (engine.computeMs - c0) / 1000 / seconds,
    toolBusy: toolMs / 1000 / seconds,
    meanBatch: steps ? (engine.stepRows - r0) / steps : 0,
    reuse: engine.reusedTokens === undefined ? null : reused / Math.max(1, reused + prefilled),
    trajectories,
  };
}

log(
  `bench:rollout — ${N} trajectories per workload (${Math.ceil(N / SAMPLES)} held-out problems × ${SAMPLES}), temperature 1, engine batch ≤ ${BATCH} on 1 thread, sandbox pool of 1`,
);
const ratios: string[] = [];
const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
for (const [name, problems] of Object.entries(workloads)) {
  requests = Array.from({ length: N }, (_, i) => ({
    id: `t${i}`,
    problem: problems[Math.floor(i / SAMPLES)]!.problem,
    seed: 1000 + i,
  }));
  const rows: (Cell & { engine: string })[] = [];
  const byEngine: Record<string, { sync: Cell; async: Cell; observed: Cell }> = {};
  for (const { name: en, engine } of engines) {
    await measure(engine, 'warm-up', 'async');
    const sync = await measure(engine, '(i) turn-synchronous', 'turn_sync');
    const asyncCell = await measure(engine, '(ii) async dispatch + continuous batching', 'async');
    const observed = await measure(engine, '(ii) with the live board observing', 'async', true);
    const same = sync.trajectories.every((t, i) => responseText(t) === responseText(asyncCell.trajectories[i]!));
    if (!same)
      throw new Error(
        `${en} engine: the two schedules produced different trajectories: seeded sampling is not batch-invariant`,
      );
    byEngine[en] = { sync, async: asyncCell, observed };
    rows.push({ ...sync, engine: en }, { ...asyncCell, engine: en }, { ...observed, engine: en });
  }
  const cur = byEngine.current!.async,
    prev = byEngine.previous!.async;
  const calls = cur.trajectories.reduce((s, t) => s + toolStats(t).calls, 0);
  const durations = cur.trajectories
    .flatMap((t) => t.turns.map((x) => x.tool?.durationMs ?? null))
    .filter((x): x is number => x !== null)
    .sort((a, b) => a - b);
  const turns = cur.trajectories.reduce((s, t) => s + t.turns.length, 0);
  const agree = cur.trajectories.filter((t, i) => responseText(t) === responseText(prev.trajectories[i]!)).length;
  const w = Math.max(...rows.map((r) => r.name.length));
  log(
    `\nworkload "${name}": ${turns} turns, ${calls} tool calls (run time median ${(durations[Math.floor(durations.length / 2)] ?? 0).toFixed(0)} ms, p90 ${(durations[Math.floor(durations.length * 0.9)] ?? 0).toFixed(0)} ms); both schedules identical on each engine; the two engines agree on ${agree}/${N} trajectories (float rounding differs)`,
  );
  log(
    `${'engine'.padEnd(8)}  ${'schedule'.padEnd(w)}  seconds  traj/s  engine busy  sandbox busy  mean batch  prompt reused`,
  );
  for (const r of rows)
    log(
      `${r.engine.padEnd(8)}  ${r.name.padEnd(w)}  ${r.seconds.toFixed(1).padStart(7)}  ${r.perSecond.toFixed(2).padStart(6)}  ${pct(r.busy).padStart(11)}  ${pct(r.toolBusy).padStart(12)}  ${r.meanBatch.toFixed(1).padStart(10)}  ${(r.reuse === null ? '—' : pct(r.reuse)).padStart(13)}`,
    );
  for (const en of ['previous', 'current']) {
    const e = byEngine[en]!;
    ratios.push(
      `"${name}", ${en} engine: async / turn-synchronous ${(e.async.perSecond / e.sync.perSecond).toFixed(2)}×, async engine busy ${pct(e.async.busy)} (turn-synchronous ${pct(e.sync.busy)}), async sandbox busy ${pct(e.async.toolBusy)}, live board ${(e.observed.perSecond / e.async.perSecond).toFixed(2)}× of unobserved`,
    );
  }
  ratios.push(
    `"${name}": current / previous engine, async trajectories/s ${(cur.perSecond / prev.perSecond).toFixed(2)}×, turn-synchronous ${(byEngine.current!.sync.perSecond / byEngine.previous!.sync.perSecond).toFixed(2)}×`,
  );
}

// Decode throughput at batch 16: the same 16 prompts, 256 tokens each, no stop; runs alternate between engines.
const decodePrompts = workloads.mixed
  .slice(0, 16)
  .map((p, i) => ({ prompt: buildPrompt(p.problem, EMBEDDED_TEMPLATE_SETTINGS), seed: 7 + i }));
const tps: Record<string, number[]> = { previous: [], current: [] };
for (let rep = 0; rep < (flags.quick ? 1 : 3); rep++) {
  for (const { name: en, engine } of engines) {
    const t0 = performance.now();
    const rs = await Promise.all(
      decodePrompts.map((p) =>
        engine.generate({ prompt: p.prompt, maxTokens: 256, temperature: 1, topP: 1, stop: [], seed: p.seed }),
      ),
    );
    tps[en]!.push(rs.reduce((s, r) => s + r.tokenIds.length, 0) / ((performance.now() - t0) / 1000));
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
log(
  `\ndecode at batch 16 (16 prompts × 256 tokens, median of ${tps.current!.length}): previous ${med(tps.previous!).toFixed(0)} tokens/s, current ${med(tps.current!).toFixed(0)} tokens/s`,
);
ratios.push(`decode tokens/s at batch 16: current / previous ${(med(tps.current!) / med(tps.previous!)).toFixed(2)}×`);

log('');
for (const r of ratios) log(r);
log(
  'targets (current engine): async ≥ 1.5× turn-synchronous on "slow tools" and ≥ 1.0× on "mixed", async engine busy ≥ 90%, decode tokens/s at batch 16 ≥ 2× the previous engine',
);

for (const { engine } of engines) await engine.close();
await sandbox.close();

// ——— verifier ———
const corpus = fs
  .readFileSync(path.join(import.meta.dirname, '../tests/fixtures/verifier-corpus.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { gold: string; pred: string });
const verifier = new Verifier({ steps: ['symbolic'] });
await Promise.all(corpus.map((c) => verifier.verify(c.gold, c.pred)));
const reps = flags.quick ? 2 : 5;
const v0 = performance.now();
for (let r = 0; r < reps; r++) await Promise.all(corpus.map((c) => verifier.verify(c.gold, c.pred)));
const vs = (performance.now() - v0) / 1000;
log(
  `\nverifier: ${((reps * corpus.length) / vs).toFixed(0)} pairs/s over the ${corpus.length}-pair corpus (all methods but sympy; ${reps} passes, concurrent)`,
);
log(`by method: ${JSON.stringify(verifier.counts)}`);
await verifier.close();
