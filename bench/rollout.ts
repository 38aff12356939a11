/**
 * bench:rollout — rollout scheduling (docs/method.md §6) and the verifier, in one run.
 *
 *   npx tsx bench/rollout.ts [--quick] [--trajectories N] [--batch B]
 *
 * Same SFT'd embedded model (workers/train/embedded-sft.ts, trained on first use and cached), same held-out
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
 * Per schedule: trajectories/s, engine busy fraction (time inside the model / wall time), mean decode batch.
 * Then (ii) again with the live board observing every event, to show that watching costs nothing measurable.
 * Then the verifier: pairs/s over the 242-pair corpus (tests/fixtures/verifier-corpus.jsonl), sympy step off.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { OnnxEngine } from '../workers/engines/onnx-engine.ts';
import { Verifier } from '../workers/reward/verifier.ts';
import { runRollouts, type Schedule } from '../workers/rollout/agent.ts';
import { LiveBoard } from '../workers/rollout/live.ts';
import { EMBEDDED_TEMPLATE_SETTINGS } from '../workers/rollout/template.ts';
import { responseText, toolStats } from '../workers/rollout/trajectory.ts';
import { type Trajectory } from '../contracts/trajectory.ts';
import { SandboxPool } from '../workers/sandbox/pool.ts';
import { generate } from '../workers/tasks/arith.ts';
import { ensureEmbeddedSftModel } from '../tests/helpers/embedded-sft.ts';
import { benchFlags } from './flags.ts';

const flags = benchFlags('bench:rollout', 'npx tsx bench/rollout.ts [--quick] [--trajectories N] [--batch B]', { quick: 'boolean', trajectories: 'number', batch: 'number' });
const N = (flags.trajectories as number | undefined) ?? (flags.quick ? 32 : 128);
const BATCH = (flags.batch as number | undefined) ?? 16;
const SAMPLES = 4;

const log = (m: string) => console.log(m);
const dir = await ensureEmbeddedSftModel({ log: (m) => log(`[sft] ${m}`) });
const engine = await OnnxEngine.load(dir, { maxBatch: BATCH, threads: 1 });
const sandbox = await SandboxPool.start({ size: 1, log: () => {} });
const workloads = {
  mixed: generate({ split: 'test', n: Math.ceil(N / SAMPLES), seed: 21 }),
  'slow tools': generate({ split: 'test', n: Math.ceil(N / SAMPLES), seed: 22, families: ['count'], difficulty: 3 }),
};
let requests: { id: string; problem: string; seed: number }[] = [];

interface Cell { name: string; seconds: number; perSecond: number; busy: number; meanBatch: number; trajectories: Trajectory[] }

async function measure(name: string, schedule: Schedule, observe = false): Promise<Cell> {
  const board = new LiveBoard();
  let drained = 0;
  const timer = observe ? setInterval(() => { drained += board.drain().length; }, 1000) : null;
  const s0 = engine.steps, r0 = engine.stepRows, c0 = engine.computeMs;
  const t0 = performance.now();
  const trajectories = await runRollouts(requests, {
    engine, sandbox, template: EMBEDDED_TEMPLATE_SETTINGS, limits: { maxResponseTokens: 420, maxTurns: 6 }, temperature: 1, schedule,
    onEvent: observe ? board.onEvent : undefined,
  });
  const seconds = (performance.now() - t0) / 1000;
  if (timer) { clearInterval(timer); drained += board.drain().length; if (drained < N) throw new Error(`live board saw ${drained} updates for ${N} trajectories`); }
  const steps = engine.steps - s0;
  return { name, seconds, perSecond: N / seconds, busy: (engine.computeMs - c0) / 1000 / seconds, meanBatch: steps ? (engine.stepRows - r0) / steps : 0, trajectories };
}

log(`bench:rollout — ${N} trajectories per workload (${Math.ceil(N / SAMPLES)} held-out problems × ${SAMPLES}), temperature 1, engine batch ≤ ${BATCH} on 1 thread, sandbox pool of 1`);
const ratios: string[] = [];
for (const [name, problems] of Object.entries(workloads)) {
  requests = Array.from({ length: N }, (_, i) => ({ id: `t${i}`, problem: problems[Math.floor(i / SAMPLES)]!.problem, seed: 1000 + i }));
  await measure('warm-up', 'async');
  const sync = await measure('(i) turn-synchronous', 'turn_sync');
  const asyncCell = await measure('(ii) async dispatch + continuous batching', 'async');
  const observed = await measure('(ii) with the live board observing', 'async', true);
  const same = sync.trajectories.every((t, i) => responseText(t) === responseText(asyncCell.trajectories[i]!));
  if (!same) throw new Error('the two schedules produced different trajectories: seeded sampling is not batch-invariant');
  const calls = asyncCell.trajectories.reduce((s, t) => s + toolStats(t).calls, 0);
  const durations = asyncCell.trajectories.flatMap((t) => t.turns.map((x) => x.tool?.durationMs ?? null)).filter((x): x is number => x !== null).sort((a, b) => a - b);
  const turns = asyncCell.trajectories.reduce((s, t) => s + t.turns.length, 0);
  const rows = [sync, asyncCell, observed];
  const w = Math.max(...rows.map((r) => r.name.length));
  log(`\nworkload "${name}": ${turns} turns, ${calls} tool calls (run time median ${(durations[Math.floor(durations.length / 2)] ?? 0).toFixed(0)} ms, p90 ${(durations[Math.floor(durations.length * 0.9)] ?? 0).toFixed(0)} ms); identical trajectories under both schedules: ${same}`);
  log(`${'schedule'.padEnd(w)}  seconds  traj/s  engine busy  mean batch`);
  for (const r of rows) log(`${r.name.padEnd(w)}  ${r.seconds.toFixed(1).padStart(7)}  ${r.perSecond.toFixed(2).padStart(6)}  ${(100 * r.busy).toFixed(0).padStart(10)}%  ${r.meanBatch.toFixed(1).padStart(10)}`);
  ratios.push(`"${name}": async / turn-synchronous ${(asyncCell.perSecond / sync.perSecond).toFixed(2)}× trajectories/s, async engine busy ${(100 * asyncCell.busy).toFixed(0)}% (turn-synchronous ${(100 * sync.busy).toFixed(0)}%), live board ${(observed.perSecond / asyncCell.perSecond).toFixed(2)}× of unobserved`);
}
log('');
for (const r of ratios) log(r);
log('targets: async ≥ 1.5× turn-synchronous, async engine busy ≥ 85%');

await engine.close();
await sandbox.close();

// ——— verifier ———
const corpus = fs.readFileSync(path.join(import.meta.dirname, '../tests/fixtures/verifier-corpus.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { gold: string; pred: string });
const verifier = new Verifier({ steps: ['symbolic'] });
await Promise.all(corpus.map((c) => verifier.verify(c.gold, c.pred)));
const reps = flags.quick ? 2 : 5;
const v0 = performance.now();
for (let r = 0; r < reps; r++) await Promise.all(corpus.map((c) => verifier.verify(c.gold, c.pred)));
const vs = (performance.now() - v0) / 1000;
log(`\nverifier: ${((reps * corpus.length) / vs).toFixed(0)} pairs/s over the ${corpus.length}-pair corpus (all methods but sympy; ${reps} passes, concurrent)`);
log(`by method: ${JSON.stringify(verifier.counts)}`);
await verifier.close();
