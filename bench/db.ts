/**
 * bench:db — ingest rate of metric points and of realistic trajectories on SQLite and PostgreSQL, batched vs one
 * row at a time, side by side in the same run, plus read-back latency of the two hot queries.
 *
 *   npx tsx bench/db.ts [--quick] [--sqlite-only] [--rounds N]
 *
 * Everything goes through the project's own code paths (server/store/metrics.ts, server/store/trajectories.ts,
 * server/db/batch.ts, openDatabase, migrate): no hand-written INSERTs. Machines here are noisy, so the numbers to
 * trust are the batched/single ratios measured in the same process, with batched and single interleaved in rounds
 * (A B A B …) so drift and table growth hit both sides alike. Absolute rows/s are printed too.
 *
 * Token records (the TrajectoryTokens side table): every measured trajectory carries one (~1,500 response
 * tokens; trainer logprobs, TIS weights and clip states on the selected half), so ingest includes them. Reported side
 * by side: bytes per trajectory without the side table (content JSON + tool calls, as before) and with it (plus the
 * packed token arrays; and what the same arrays would take as JSON), on disk too where the database can say, and the
 * time to read one step's 2,000 trajectories with content, without and with their decoded token records.
 *
 * SQLite: a fresh, migrated temp file (WAL, synchronous=NORMAL as openDatabase sets it).
 * PostgreSQL: a throwaway cluster from scripts/pg.mjs (note: it runs with fsync=off and synchronous_commit=off,
 * which flatters per-row commits; a durable server widens the batched/single gap).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openDatabase, type Database } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import type { Dialect } from '../server/db/url.ts';
import {
  insertMetricPoints,
  insertMetricPointSingle,
  readSeries,
  type MetricPointInput,
} from '../server/store/metrics.ts';
import { mulberry32 } from '../workers/engines/sampling.ts';
import {
  insertTrajectories,
  insertTrajectorySingle,
  readStep,
  readStepWithTokens,
  type ToolCallInput,
  type TrajectoryInput,
} from '../server/store/trajectories.ts';
import { encodeTokenRecord, tokenColumnBytes } from '../server/store/token-codec.ts';
import type { ClipState, TokenRecord } from '../contracts/trajectory.ts';
import { benchFlags } from './flags.ts';

// ───────────────────────────── options ─────────────────────────────

const flags = benchFlags('bench:db', 'npx tsx bench/db.ts [--quick] [--sqlite-only] [--rounds N]', {
  quick: 'boolean',
  'sqlite-only': 'boolean',
  rounds: 'number',
});
const QUICK = Boolean(flags.quick);
const SQLITE_ONLY = Boolean(flags['sqlite-only']);
const ROUNDS = Math.max(1, Math.floor(Number(flags.rounds ?? 3)));

/** Read-back shapes are fixed (they are what the UI asks for); ingest sizes shrink with --quick. */
const STEP_SIZE = 2_000; // trajectories per training step (readStep reads one step)
const SERIES_LEN = 10_000; // points per metric (readSeries reads one metric)
const GROUP = 8; // rollouts per prompt (G)

const SIZES = QUICK
  ? { metricBatched: 20_000, metricBatch: 5_000, metricSingle: 500, trajBatched: 2_000, trajBatch: 512, trajSingle: 50 }
  : // Big enough that every timed section runs ≥ ~0.5 s on a 2-core machine (shorter ones are mostly noise); the whole
    // bench, PostgreSQL start-up and read-back history included, stays well under 2 minutes there.
    {
      metricBatched: 200_000,
      metricBatch: 5_000,
      metricSingle: 5_000,
      trajBatched: 8_000,
      trajBatch: 512,
      trajSingle: 500,
    };

/** History added (untimed) before the read-back, so the reads are index lookups in a big table, not a full scan of a small one. */
const FILL_STEPS = 16; // extra steps of small trajectories in the measured run
const FILL_RUNS = 3; // other runs with 5 metrics × SERIES_LEN points each

const TARGETS = { metricPointsPerSec: 20_000, trajectoriesPerSec: 1_000 };

// ───────────────────────────── deterministic data ─────────────────────────────

/** A seeded PRNG (mulberry32) so every run ingests byte-identical content (ids aside). */
function prng(seed: number) {
  const next = mulberry32(seed);
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    normal: () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()),
  };
}
type Rng = ReturnType<typeof prng>;

const WORDS = (
  'we need to find the value of so let us compute first then check whether this holds for all integers ' +
  'consider the equation sum product modulo prime factor divisor remainder since therefore hence note that it follows ' +
  'substitute into expression simplify verify with code the result gives answer wait that seems off recheck case ' +
  'boundary condition when n equals zero negative positive count number of solutions pairs triangle area radius ' +
  'probability expected value sequence recurrence term limit converges polynomial root coefficient'
).split(' ');

function sentence(r: Rng, min: number, max: number): string {
  const n = r.int(min, max);
  const w: string[] = [];
  for (let i = 0; i < n; i++) w.push(r.pick(WORDS));
  const s = w.join(' ');
  return s[0].toUpperCase() + s.slice(1) + (r.next() < 0.15 ? '?' : '.');
}
function paragraph(r: Rng, bytes: number): string {
  const out: string[] = [];
  let len = 0;
  while (len < bytes) {
    const s = sentence(r, 6, 18);
    out.push(s);
    len += s.length + 1;
  }
  return out.join(' ');
}

const CODE_TEMPLATES = [
  (r: Rng) =>
    `from sympy import symbols, solve, Eq\nx = symbols('x')\nsol = solve(Eq(x**2 - ${r.int(2, 99)}*x + ${r.int(1, 500)}, 0), x)\nprint(sol)`,
  (r: Rng) =>
    `total = 0\nfor n in range(1, ${r.int(100, 10000)}):\n    if n % ${r.int(2, 13)} == 0 or n % ${r.int(2, 13)} == 0:\n        total += n\nprint(total)`,
  (r: Rng) =>
    `import math\nvals = [math.comb(${r.int(5, 40)}, k) for k in range(${r.int(3, 12)})]\nprint(sum(vals), vals[-1])`,
  (r: Rng) =>
    `from fractions import Fraction\np = Fraction(${r.int(1, 9)}, ${r.int(10, 60)})\nq = 1 - p\nprint(p * q ** ${r.int(2, 8)})`,
  (r: Rng) =>
    `import itertools\ncount = sum(1 for a, b in itertools.product(range(${r.int(5, 60)}), repeat=2) if (a * b) % ${r.int(3, 17)} == 1)\nprint(count)`,
  (r: Rng) =>
    `def f(n):\n    return n * (n + 1) // 2\nprint([f(k) for k in range(${r.int(1, 20)}, ${r.int(21, 40)})][:5])`,
];
const ERRORS = [
  { type: 'NameError', msg: (r: Rng) => `NameError: name 'y${r.int(0, 9)}' is not defined` },
  { type: 'ZeroDivisionError', msg: () => 'ZeroDivisionError: division by zero' },
  { type: 'TypeError', msg: () => "TypeError: unsupported operand type(s) for +: 'int' and 'str'" },
  { type: 'Timeout', msg: () => 'TimeoutError: execution exceeded 10 s' },
];

/**
 * A token record of `n` response tokens over 6 turns, tool responses masked, engine logprobs and entropies, and the
 * trainer's side when `trained`. A pool of these is shared by the generated trajectories (so the bench does not
 * hold 10,000 of them in memory); each insert still encodes its own.
 */
function makeTokenRecord(r: Rng, n: number, trained: boolean): TokenRecord {
  const rec: TokenRecord = {
    ids: [],
    mask: [],
    turn: [],
    chars: [],
    rolloutLogprobs: [],
    entropy: [],
    trainerLogprobs: null,
    weights: null,
    clip: null,
    advantage: null,
  };
  const perTurn = Math.ceil(n / 6);
  for (let i = 0; i < n; i++) {
    const tool = i % perTurn > perTurn * 0.8 && Math.floor(i / perTurn) < 5;
    rec.ids.push(r.int(0, 151_000));
    rec.mask.push(tool ? 0 : 1);
    rec.turn.push(Math.floor(i / perTurn));
    rec.chars.push(r.int(1, 6));
    rec.rolloutLogprobs.push(tool ? NaN : Math.log(0.02 + 0.98 * r.next()));
    rec.entropy.push(tool ? NaN : 3 * r.next());
  }
  if (trained) {
    rec.trainerLogprobs = rec.rolloutLogprobs.map((x) => x + 0.01 * r.normal());
    rec.clip = rec.mask.map((m) => (m && r.next() < 0.05 ? r.int(1, 5) : 0) as ClipState);
    rec.weights = rec.clip.map((c, i) => (rec.mask[i] ? (c === 5 ? 0 : c === 4 ? 2 : 1) : NaN));
    rec.advantage = r.normal();
  }
  return rec;
}
const TOKEN_POOL = (() => {
  const r = prng(99);
  return Array.from({ length: 32 }, (_, i) => makeTokenRecord(r, r.int(900, 2200), i % 2 === 0));
})();

/** One realistic rollout: ~5 KB of turns (reasoning, code, tool-output JSON), 5 tool calls and a token record. */
function makeTrajectory(r: Rng, runId: string, i: number, stepBase = 0): TrajectoryInput {
  const step = stepBase + Math.floor(i / STEP_SIZE);
  const inStep = i % STEP_SIZE;
  const groupId = `g${String(step).padStart(5, '0')}_${String(Math.floor(inStep / GROUP)).padStart(4, '0')}`;
  const t0 = 1_700_000_000_000 + i * 50;
  const turns: unknown[] = [{ role: 'user', text: paragraph(r, r.int(220, 420)) }];
  const toolCalls: ToolCallInput[] = [];
  let clock = t0;
  for (let turn = 0; turn < 5; turn++) {
    const code = r.pick(CODE_TEMPLATES)(r);
    const failed = r.next() < 0.15;
    const err = failed ? r.pick(ERRORS) : null;
    const stdout = failed
      ? ''
      : `${r.int(-1000, 100000)}${r.next() < 0.5 ? ` [${Array.from({ length: r.int(2, 8) }, () => r.int(0, 999)).join(', ')}]` : ''}\n`;
    const stderr = err
      ? `Traceback (most recent call last):\n  File "<cell>", line ${r.int(1, 6)}, in <module>\n${err.msg(r)}\n`
      : '';
    const queueMs = r.int(0, 40);
    const durationMs = r.int(8, 900);
    const queuedAt = clock;
    const startedAt = queuedAt + queueMs;
    const finishedAt = startedAt + durationMs;
    clock = finishedAt + r.int(200, 3000);
    const status = err ? (err.type === 'Timeout' ? 'timeout' : 'error') : 'ok';
    toolCalls.push({
      turn,
      code,
      stdout,
      stderr,
      status,
      exitCode: err ? 1 : 0,
      errorType: err?.type ?? null,
      queuedAt,
      startedAt,
      finishedAt,
      durationMs,
      queueMs,
    });
    turns.push({ role: 'assistant', text: `${paragraph(r, r.int(350, 650))}\n\n\`\`\`python\n${code}\n\`\`\`` });
    turns.push({ role: 'tool', text: JSON.stringify({ status, stdout, stderr, exitCode: err ? 1 : 0, durationMs }) });
  }
  const answer = String(r.int(0, 9999));
  turns.push({ role: 'assistant', text: `${paragraph(r, r.int(150, 350))} The answer is \\boxed{${answer}}.` });
  const correct = r.next() < 0.45;
  const toolErrors = toolCalls.filter((c) => c.status !== 'ok').length;
  const tokens = TOKEN_POOL[i % TOKEN_POOL.length]!;
  return {
    tokens,
    runId,
    step,
    stage: 0,
    split: 'train',
    problemId: `p_${r.int(0, 17_000)}`,
    groupId,
    sampleIndex: inStep % GROUP,
    reward: correct ? 1 : -1,
    correct,
    selected: r.next() < 0.5,
    selectReason: toolErrors === 0 ? 'clean' : 'sampled',
    pErr: toolErrors / 5,
    pFormat: 0,
    promptTokens: r.int(80, 200),
    responseTokens: tokens.ids.length,
    toolTokens: tokens.mask.filter((m) => m === 0).length,
    turns: turns.length,
    finishReason: 'stop',
    answer,
    content: { turns },
    toolCalls,
  };
}

const METRIC_KEYS = [
  'loss',
  'reward/mean',
  'reward/std',
  'kl',
  'entropy',
  'grad_norm',
  'lr',
  'tool/error_rate',
  'len/response',
  'time/step',
  'clip_frac',
  'adv/mean',
  'adv/std',
  'tool/calls',
  'len/prompt',
  'throughput',
  'val/pass@1',
  'val/len',
  'tool/timeout_rate',
  'time/rollout',
  'time/update',
  'tokens/s',
  'groups/filtered',
  'reward/format',
];

/** `count` points laid out step-major over count/SERIES_LEN keys, so each key ends up with a SERIES_LEN-long series. */
function makeMetricPoints(r: Rng, runId: string, count: number): MetricPointInput[] {
  const keys = Array.from(
    { length: Math.max(1, Math.ceil(count / SERIES_LEN)) },
    (_, i) => METRIC_KEYS[i] ?? `custom/${i}`,
  );
  const out: MetricPointInput[] = [];
  for (let step = 0; out.length < count; step++) {
    for (const key of keys) {
      if (out.length >= count) break;
      out.push({
        runId,
        key,
        step,
        value: Math.exp(-step / 3000) + 0.05 * r.normal(),
        time: 1_700_000_000_000 + step * 1000,
      });
    }
  }
  return out;
}

// ───────────────────────────── measurement ─────────────────────────────

interface Result {
  dialect: Dialect;
  workload: 'metric points' | 'trajectories';
  mode: 'batched' | 'single';
  rows: number;
  seconds: number;
  rounds: number[]; // per-round rows/s
}

function chunks<T>(xs: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}
/** Split into `k` nearly equal contiguous parts (one per round). */
function parts<T>(xs: T[], k: number): T[][] {
  const out: T[][] = [];
  for (let j = 0; j < k; j++)
    out.push(xs.slice(Math.floor((j * xs.length) / k), Math.floor(((j + 1) * xs.length) / k)));
  return out;
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

function progress(msg: string) {
  process.stdout.write(`  … ${msg}\n`);
}

interface ReadBack {
  name: string;
  rows: number;
  coldMs: number;
  warmMs: number;
  plan: string;
}

/** On-disk bytes per stored row of each trajectory table (SQLite's dbstat, PostgreSQL's relation sizes); null where unavailable. */
type Disk = Record<'Trajectory' | 'ToolCall' | 'TrajectoryTokens', { bytes: number; rows: number }> | null;

interface DbReport {
  dialect: Dialect;
  results: Result[];
  reads: ReadBack[];
  problems: string[];
  sizes: { trajectories: number; metricPoints: number };
  disk: Disk;
}

async function diskBytes(db: Database): Promise<Disk> {
  const out: Record<string, { bytes: number; rows: number }> = {};
  try {
    for (const t of ['Trajectory', 'ToolCall', 'TrajectoryTokens']) {
      const rows = Number((await db.query<{ n: number | bigint }>(`SELECT COUNT(*) AS "n" FROM "${t}"`))[0].n);
      const bytes =
        db.dialect === 'sqlite'
          ? // Table b-tree plus its indexes (sqlite_autoindex_* and named ones); overflow pages included.
            Number(
              (
                await db.query<{ b: number | bigint }>(
                  `SELECT SUM("pgsize") AS "b" FROM "dbstat" WHERE "name" = ? OR "name" IN (SELECT "name" FROM sqlite_master WHERE "tbl_name" = ? AND "type" = 'index')`,
                  [t, t],
                )
              )[0].b ?? 0,
            )
          : Number((await db.query<{ b: number | bigint }>(`SELECT pg_total_relation_size('"${t}"') AS "b"`))[0].b);
      out[t] = { bytes, rows };
    }
    return out as Disk;
  } catch {
    return null;
  }
}

/** The last non-empty line of an error (Prisma puts the reason there, after a source excerpt). */
function firstLine(e: unknown): string {
  const lines = String((e as Error)?.message ?? e)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines[lines.length - 1] ?? 'unknown error';
}

async function benchDatabase(url: string, dialect: Dialect): Promise<DbReport> {
  await migrate(url);
  const db = await openDatabase(url);
  try {
    const r = prng(20240917);
    const runB = `run_bench_batched_${dialect}`;
    const runS = `run_bench_single_${dialect}`;

    // Data is generated before the clock starts; what is timed is the store call (row building, SQL, commit).
    const mB = makeMetricPoints(r, runB, SIZES.metricBatched);
    const mS = makeMetricPoints(r, runS, SIZES.metricSingle);
    const tB = Array.from({ length: SIZES.trajBatched }, (_, i) => makeTrajectory(r, runB, i));
    const tS = Array.from({ length: SIZES.trajSingle }, (_, i) => makeTrajectory(r, runS, i));

    // Warm-up (JIT, Prisma's first query, prepared-statement caches) on a separate run id, not measured.
    const runW = `run_bench_warmup_${dialect}`;
    await insertMetricPoints(db, makeMetricPoints(r, runW, 2_000));
    for (const p of makeMetricPoints(r, `${runW}_s`, 50)) await insertMetricPointSingle(db, p);
    await insertTrajectories(
      db,
      Array.from({ length: 64 }, (_, i) => makeTrajectory(r, runW, i)),
    );
    for (let i = 0; i < 5; i++) await insertTrajectorySingle(db, makeTrajectory(r, `${runW}_s`, i));

    const res = (workload: Result['workload'], mode: Result['mode']): Result => ({
      dialect,
      workload,
      mode,
      rows: 0,
      seconds: 0,
      rounds: [],
    });
    const mBatched = res('metric points', 'batched');
    const mSingle = res('metric points', 'single');
    const tBatched = res('trajectories', 'batched');
    const tSingle = res('trajectories', 'single');
    const add = (acc: Result, rows: number, s: number) => {
      acc.rows += rows;
      acc.seconds += s;
      acc.rounds.push(rows / s);
    };

    const mBP = parts(mB, ROUNDS);
    const mSP = parts(mS, ROUNDS);
    const tBP = parts(tB, ROUNDS);
    const tSP = parts(tS, ROUNDS);
    for (let k = 0; k < ROUNDS; k++) {
      progress(`${dialect} round ${k + 1}/${ROUNDS}: metric points`);
      add(
        mBatched,
        mBP[k].length,
        await timed(async () => {
          for (const c of chunks(mBP[k], SIZES.metricBatch)) await insertMetricPoints(db, c);
        }),
      );
      add(
        mSingle,
        mSP[k].length,
        await timed(async () => {
          for (const p of mSP[k]) await insertMetricPointSingle(db, p);
        }),
      );
      progress(`${dialect} round ${k + 1}/${ROUNDS}: trajectories`);
      add(
        tBatched,
        tBP[k].length,
        await timed(async () => {
          for (const c of chunks(tBP[k], SIZES.trajBatch)) await insertTrajectories(db, c);
        }),
      );
      add(
        tSingle,
        tSP[k].length,
        await timed(async () => {
          for (const t of tSP[k]) await insertTrajectorySingle(db, t);
        }),
      );
    }

    // Sanity: every row landed (a bench that silently drops rows would look fast).
    const count = async (table: string, runId: string) =>
      Number(
        (await db.query<{ n: number | bigint }>(`SELECT COUNT(*) AS "n" FROM "${table}" WHERE "runId" = ?`, [runId]))[0]
          .n,
      );
    const checks: [string, string, number][] = [
      ['MetricPoint', runB, SIZES.metricBatched],
      ['MetricPoint', runS, SIZES.metricSingle],
      ['Trajectory', runB, SIZES.trajBatched],
      ['Trajectory', runS, SIZES.trajSingle],
      ['ToolCall', runB, SIZES.trajBatched * 5],
      ['ToolCall', runS, SIZES.trajSingle * 5],
    ];
    const tokenRows = Number(
      (
        await db.query<{ n: number | bigint }>(
          `SELECT COUNT(*) AS "n" FROM "TrajectoryTokens" k JOIN "Trajectory" t ON t."id" = k."trajectoryId" WHERE t."runId" IN (?, ?)`,
          [runB, runS],
        )
      )[0].n,
    );
    if (tokenRows !== SIZES.trajBatched + SIZES.trajSingle)
      throw new Error(
        `${dialect}: ${tokenRows} token records stored, expected ${SIZES.trajBatched + SIZES.trajSingle}`,
      );
    // On-disk size now, while every stored trajectory is a full one with a token record (the fill below is neither).
    const disk = await diskBytes(db);
    for (const [table, runId, want] of checks) {
      const got = await count(table, runId);
      if (got !== want) throw new Error(`${dialect}: ${table} for ${runId} has ${got} rows, expected ${want}`);
    }

    // Read-back happens on a table that looks like a database in use: the measured run gets FILL_STEPS more steps of
    // (small) trajectories and other runs add metric history, so one step / one metric is a small slice of its table
    // and the read has to use the index to be fast. Not timed.
    progress(`${dialect}: filling history for read-back (not timed)`);
    const fr = prng(7);
    const small = (i: number): TrajectoryInput => ({
      runId: runB,
      step: Math.ceil(SIZES.trajBatched / STEP_SIZE) + Math.floor(i / STEP_SIZE),
      stage: 0,
      groupId: `f${String(Math.floor((i % STEP_SIZE) / GROUP)).padStart(4, '0')}`,
      sampleIndex: i % GROUP,
      reward: fr.next() < 0.5 ? 1 : -1,
      finishReason: 'stop',
      content: { turns: [{ role: 'assistant', text: sentence(fr, 8, 20) }] },
      toolCalls: [],
    });
    const fill = Array.from({ length: FILL_STEPS * STEP_SIZE }, (_, i) => small(i));
    for (const c of chunks(fill, 4096)) await insertTrajectories(db, c);
    // "Before": one full step of the same trajectories stored without token records, read like step 0 (which has them).
    const bareStep = Math.ceil(SIZES.trajBatched / STEP_SIZE) + FILL_STEPS;
    const bare = Array.from({ length: STEP_SIZE }, (_, i) => ({
      ...makeTrajectory(fr, runB, i, bareStep),
      tokens: null,
    }));
    for (const c of chunks(bare, SIZES.trajBatch)) await insertTrajectories(db, c);
    for (let k = 0; k < FILL_RUNS; k++) {
      for (const c of chunks(makeMetricPoints(fr, `run_bench_other_${k}`, 5 * SERIES_LEN), 25_000))
        await insertMetricPoints(db, c);
    }
    const tableRows = async (table: string) =>
      Number((await db.query<{ n: number | bigint }>(`SELECT COUNT(*) AS "n" FROM "${table}"`))[0].n);
    const sizes = { trajectories: await tableRows('Trajectory'), metricPoints: await tableRows('MetricPoint') };

    // Read-back: the two queries the UI leans on. ANALYZE first (on PostgreSQL what autovacuum would have done by the
    // time anyone reads), so the planner has statistics for the freshly loaded tables.
    await db.execute('ANALYZE');
    const reads: ReadBack[] = [];
    const stepRows = await readBack(
      db,
      `readStep (one step, no content)`,
      () => readStep(db, runB, 0),
      STEP_SIZE,
      `SELECT "id" FROM "Trajectory" WHERE "runId" = ? AND "step" = ? ORDER BY "groupId" ASC, "sampleIndex" ASC`,
      [runB, 0],
    );
    reads.push(stepRows);
    // Before/after, interleaved twice so drift hits all alike: a step stored without token records, a step stored with
    // them (the usual read does not touch the side table), and that step read with its records decoded.
    for (const round of ['', ' again']) {
      reads.push(
        await readBack(
          db,
          `readStep (content; step stored without tokens)${round}`,
          () => readStep(db, runB, bareStep, { withContent: true }),
          STEP_SIZE,
          null,
          [],
        ),
      );
      reads.push(
        await readBack(
          db,
          `readStep (content; step stored with tokens)${round}`,
          () => readStep(db, runB, 0, { withContent: true }),
          STEP_SIZE,
          null,
          [],
        ),
      );
      reads.push(
        await readBack(
          db,
          `readStepWithTokens (content + decoded tokens)${round}`,
          () => readStepWithTokens(db, runB, 0, { withContent: true }),
          STEP_SIZE,
          null,
          [],
        ),
      );
    }
    // readSeries is called as the UI calls it (no step range). If that fails, say so and measure the same scan with
    // an explicit in-range window, so the latency is still reported.
    const problems: string[] = [];
    let series = () => readSeries(db, runB, 'loss');
    let seriesName = 'readSeries (one metric)';
    try {
      await series();
    } catch (e) {
      problems.push(`readSeries(db, runId, key) without fromStep/toStep fails: ${firstLine(e)}`);
      series = () => readSeries(db, runB, 'loss', 0, 2_147_483_647);
      seriesName = 'readSeries (one metric, explicit range)';
    }
    reads.push(
      await readBack(
        db,
        seriesName,
        series,
        SERIES_LEN,
        `SELECT "step", "value", "time" FROM "MetricPoint" WHERE "runId" = ? AND "key" = ? AND "step" >= ? AND "step" <= ? ORDER BY "step" ASC`,
        [runB, 'loss', 0, 2_147_483_647],
      ),
    );

    return { dialect, results: [mBatched, mSingle, tBatched, tSingle], reads, problems, sizes, disk };
  } finally {
    await db.close();
  }
}

async function readBack(
  db: Database,
  name: string,
  fn: () => Promise<unknown[]>,
  want: number,
  explainSql: string | null,
  params: unknown[],
): Promise<ReadBack> {
  let t = performance.now();
  const first = await fn();
  const coldMs = performance.now() - t;
  if (first.length !== want) throw new Error(`${name} returned ${first.length} rows, expected ${want}`);
  const warm: number[] = [];
  for (let i = 0; i < 5; i++) {
    t = performance.now();
    await fn();
    warm.push(performance.now() - t);
  }
  warm.sort((a, b) => a - b);
  return {
    name,
    rows: first.length,
    coldMs,
    warmMs: warm[Math.floor(warm.length / 2)],
    plan: explainSql ? await plan(db, explainSql, params) : '(same scan as above)',
  };
}

/** The access path for the equivalent SQL (diagnostic only; the timed read goes through Prisma). */
async function plan(db: Database, sql: string, params: unknown[]): Promise<string> {
  try {
    if (db.dialect === 'sqlite') {
      const rows = await db.query<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params);
      return rows.map((r) => r.detail).join('; ');
    }
    const rows = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
    return rows
      .map((r) => r['QUERY PLAN'].trim())
      .filter((l) => /Scan|Sort/.test(l))
      .map((l) => l.replace(/^->\s*/, '').replace(/\s+\(cost.*$/, ''))
      .join('; ');
  } catch (e) {
    return `(plan unavailable: ${(e as Error).message.split('\n')[0]})`;
  }
}

// ───────────────────────────── output ─────────────────────────────

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtRate = (n: number) => (n >= 100 ? fmtInt(n) : n.toFixed(1));
const fmtMs = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

function table(head: string[], rows: string[][], align: ('l' | 'r')[]): string {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (align[i] === 'r' ? c.padStart(w[i]) : c.padEnd(w[i]))).join('  ');
  return [line(head), w.map((n) => '─'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}

const rate = (r: Result) => r.rows / r.seconds;
const find = (rep: DbReport, w: Result['workload'], m: Result['mode']) =>
  rep.results.find((r) => r.workload === w && r.mode === m)!;
const label = (d: Dialect) => (d === 'sqlite' ? 'SQLite' : 'PostgreSQL');

interface AvgBytes {
  content: number;
  calls: number;
  tokens: number;
  tokensJson: number;
  responseTokens: number;
}

function printReport(reports: DbReport[], skipped: string | null, avgBytes: AvgBytes) {
  console.log('\nIngest (rows/s = rows ÷ total time over all rounds; range = slowest–fastest round)\n');
  const rows: string[][] = [];
  for (const rep of reports) {
    for (const r of rep.results) {
      const unit =
        r.workload === 'metric points'
          ? `${fmtInt(r.mode === 'batched' ? SIZES.metricBatch : 1)}/call`
          : `${r.mode === 'batched' ? SIZES.trajBatch : 1}/call`;
      rows.push([
        label(rep.dialect),
        r.workload,
        r.mode,
        unit,
        fmtInt(r.rows),
        r.seconds.toFixed(2),
        fmtRate(rate(r)),
        `${fmtRate(Math.min(...r.rounds))}–${fmtRate(Math.max(...r.rounds))}`,
      ]);
    }
  }
  console.log(
    table(['database', 'workload', 'mode', 'batch', 'rows', 'seconds', 'rows/s', 'range'], rows, [
      'l',
      'l',
      'l',
      'r',
      'r',
      'r',
      'r',
      'r',
    ]),
  );

  console.log('\nSpeed-up from batching (batched rows/s ÷ single rows/s, same process)\n');
  console.log(
    table(
      ['database', 'metric points', 'trajectories'],
      reports.map((rep) => [
        label(rep.dialect),
        `${(rate(find(rep, 'metric points', 'batched')) / rate(find(rep, 'metric points', 'single'))).toFixed(1)}×`,
        `${(rate(find(rep, 'trajectories', 'batched')) / rate(find(rep, 'trajectories', 'single'))).toFixed(1)}×`,
      ]),
      ['l', 'r', 'r'],
    ),
  );
  if (reports.length === 2) {
    const [s, p] = reports;
    console.log('\nSQLite ÷ PostgreSQL (rows/s, same process)\n');
    console.log(
      table(
        ['workload', 'batched', 'single'],
        (['metric points', 'trajectories'] as const).map((w) => [
          w,
          `${(rate(find(s, w, 'batched')) / rate(find(p, w, 'batched'))).toFixed(2)}×`,
          `${(rate(find(s, w, 'single')) / rate(find(p, w, 'single'))).toFixed(2)}×`,
        ]),
        ['l', 'r', 'r'],
      ),
    );
  }

  console.log('\nRead-back latency (first = first call after ANALYZE, warm = median of the next 5)');
  for (const rep of reports)
    console.log(
      `  ${label(rep.dialect)} tables at read time: ${fmtInt(rep.sizes.trajectories)} trajectories, ${fmtInt(rep.sizes.metricPoints)} metric points`,
    );
  console.log('');
  const rrows: string[][] = [];
  for (const rep of reports)
    for (const rb of rep.reads)
      rrows.push([label(rep.dialect), rb.name, fmtInt(rb.rows), fmtMs(rb.coldMs), fmtMs(rb.warmMs), rb.plan]);
  console.log(
    table(['database', 'query', 'rows', 'first ms', 'warm ms', 'plan (equivalent SQL)'], rrows, [
      'l',
      'l',
      'r',
      'r',
      'r',
      'l',
    ]),
  );

  console.log('\nBytes per trajectory (payload; the average generated trajectory)\n');
  const before = avgBytes.content + avgBytes.calls;
  console.log(
    table(
      ['stored as', 'bytes/trajectory', 'vs before'],
      [
        ['before: content JSON + tool calls (no token arrays)', fmtInt(before), '1.00×'],
        [
          'after: + TrajectoryTokens (packed binary)',
          fmtInt(before + avgBytes.tokens),
          `${((before + avgBytes.tokens) / before).toFixed(2)}×`,
        ],
        [
          '(for comparison) + the same arrays as JSON numbers',
          fmtInt(before + avgBytes.tokensJson),
          `${((before + avgBytes.tokensJson) / before).toFixed(2)}×`,
        ],
      ],
      ['l', 'r', 'r'],
    ),
  );
  console.log(
    `  token record: ${fmtInt(avgBytes.tokens)} bytes for ${fmtInt(avgBytes.responseTokens)} response tokens (${(avgBytes.tokens / avgBytes.responseTokens).toFixed(1)} bytes/token; JSON would be ${(avgBytes.tokensJson / avgBytes.responseTokens).toFixed(1)})`,
  );
  for (const rep of reports) {
    if (!rep.disk) {
      console.log(`  ${label(rep.dialect)} on disk: unavailable`);
      continue;
    }
    const per = (t: keyof NonNullable<Disk>) => rep.disk![t].bytes / Math.max(1, rep.disk!.Trajectory.rows);
    const b = per('Trajectory') + per('ToolCall');
    console.log(
      `  ${label(rep.dialect)} on disk (tables + indexes ÷ ${fmtInt(rep.disk.Trajectory.rows)} trajectories, warm-up rows included): before ${fmtInt(b)} B, after ${fmtInt(b + per('TrajectoryTokens'))} B (${((b + per('TrajectoryTokens')) / b).toFixed(2)}×; ${fmtInt(rep.disk.TrajectoryTokens.rows)} token rows, ${fmtInt(rep.disk.TrajectoryTokens.bytes / Math.max(1, rep.disk.TrajectoryTokens.rows))} B each)`,
    );
  }

  console.log(
    '\nOne step (2,000 trajectories) read with content, before/after token records (warm medians of two interleaved rounds, same run)\n',
  );
  const cmp: string[][] = [];
  for (const rep of reports) {
    const best = (prefix: string) =>
      Math.min(...rep.reads.filter((r) => r.name.startsWith(prefix)).map((r) => r.warmMs));
    const a = best('readStep (content; step stored without');
    const b = best('readStep (content; step stored with tokens');
    const c = best('readStepWithTokens');
    cmp.push([
      label(rep.dialect),
      fmtMs(a),
      `${fmtMs(b)} (${(b / a).toFixed(2)}×)`,
      `${fmtMs(c)} (${(c / a).toFixed(2)}×)`,
    ]);
  }
  console.log(
    table(['database', 'before: no token records ms', 'after: readStep ms', 'after: + decoded records ms'], cmp, [
      'l',
      'r',
      'r',
      'r',
    ]),
  );

  const sqlite = reports.find((r) => r.dialect === 'sqlite');
  const verdicts: { text: string; ok: boolean }[] = [];
  if (sqlite) {
    const m = rate(find(sqlite, 'metric points', 'batched'));
    const t = rate(find(sqlite, 'trajectories', 'batched'));
    verdicts.push({
      ok: m >= TARGETS.metricPointsPerSec,
      text: `SQLite batched metric points: ${fmtInt(m)}/s (target ≥ ${fmtInt(TARGETS.metricPointsPerSec)}/s)`,
    });
    verdicts.push({
      ok: t >= TARGETS.trajectoriesPerSec,
      text: `SQLite batched trajectories:  ${fmtInt(t)}/s (target ≥ ${fmtInt(TARGETS.trajectoriesPerSec)}/s)`,
    });
  }
  console.log('\nTargets\n');
  for (const v of verdicts) console.log(`  ${v.ok ? 'MET    ' : 'MISSED '} ${v.text}`);
  if (skipped) console.log(`\nPostgreSQL skipped: ${skipped}`);
  const problems = reports.flatMap((r) => r.problems.map((p) => `${label(r.dialect)}: ${p}`));
  if (problems.length) {
    console.log('\nProblems found (not bench failures: the code path misbehaved and the bench worked around it)\n');
    for (const p of problems) console.log(`  ! ${p}`);
  }

  // Paste-ready block for docs/benchmarks.md "bench:db".
  const env = `${os.cpus().length} CPU${os.cpus().length === 1 ? '' : 's'} (${os.cpus()[0]?.model.trim() ?? 'unknown'}), Node ${process.version}`;
  const md: string[] = [];
  md.push(`| Database | Workload | Batched rows/s | One-at-a-time rows/s | Speed-up |`);
  md.push(`|---|---|---:|---:|---:|`);
  for (const rep of reports) {
    for (const w of ['metric points', 'trajectories'] as const) {
      const b = find(rep, w, 'batched');
      const s = find(rep, w, 'single');
      md.push(
        `| ${label(rep.dialect)} | ${w}${w === 'trajectories' ? ' (≈5 KB, 5 tool calls)' : ''} | ${fmtInt(rate(b))} | ${fmtRate(rate(s))} | ${(rate(b) / rate(s)).toFixed(1)}× |`,
      );
    }
  }
  md.push('');
  md.push(`| Database | Read | Rows | Latency (warm) |`);
  md.push(`|---|---|---:|---:|`);
  for (const rep of reports)
    for (const rb of rep.reads)
      md.push(`| ${label(rep.dialect)} | ${rb.name} | ${fmtInt(rb.rows)} | ${fmtMs(rb.warmMs)} ms |`);
  md.push('');
  md.push(
    `Measured by \`npm run bench:db${QUICK ? ' -- --quick' : ''}\` on ${env}: metric points in batches of ${fmtInt(SIZES.metricBatch)}, ` +
      `trajectories (avg ${(avgBytes.content / 1024).toFixed(1)} KB content + ${(avgBytes.calls / 1024).toFixed(1)} KB in 5 tool calls + a ${(avgBytes.tokens / 1024).toFixed(1)} KB token record) in batches of ${SIZES.trajBatch}, ` +
      `one transaction each; one-at-a-time = one statement and commit per row. SQLite in WAL mode with synchronous=NORMAL` +
      (reports.some((r) => r.dialect === 'postgresql')
        ? '; PostgreSQL is a local throwaway cluster with fsync=off and synchronous_commit=off, which flatters one-at-a-time commits'
        : '') +
      `. Targets (SQLite, batched): ≥ ${fmtInt(TARGETS.metricPointsPerSec)} metric points/s ${verdicts[0]?.ok ? 'met' : 'missed'}, ` +
      `≥ ${fmtInt(TARGETS.trajectoriesPerSec)} trajectories/s ${verdicts[1]?.ok ? 'met' : 'missed'}.`,
  );
  console.log('\n----- docs/benchmarks.md table (markdown, paste as is) -----\n');
  console.log(md.join('\n'));
  console.log('\n----- end docs/benchmarks.md table -----');
}

// ───────────────────────────── main ─────────────────────────────

interface PgCluster {
  adminUrl: string;
  url: (db: string) => string;
  stop: () => void;
}

const cleanups: (() => void | Promise<void>)[] = [];
let cleaned = false;
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const fn of cleanups.reverse()) {
    try {
      await fn();
    } catch (e) {
      console.error(`bench:db: cleanup failed: ${(e as Error).message}`);
    }
  }
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    console.error(`\nbench:db: ${sig}, stopping…`);
    void cleanup().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
  });
}

async function main() {
  const started = performance.now();
  const sample = prng(1);
  const probe = Array.from({ length: 200 }, (_, i) => makeTrajectory(sample, 'probe', i));
  const avgBytes: AvgBytes = {
    content: probe.reduce((a, t) => a + JSON.stringify(t.content).length, 0) / probe.length,
    calls:
      probe.reduce(
        (a, t) =>
          a + t.toolCalls.reduce((b, c) => b + c.code.length + (c.stdout ?? '').length + (c.stderr ?? '').length, 0),
        0,
      ) / probe.length,
    tokens: probe.reduce((a, t) => a + tokenColumnBytes(encodeTokenRecord(t.tokens!)), 0) / probe.length,
    // JSON has no NaN: null stands in, as it would in a JSON column.
    tokensJson: probe.reduce((a, t) => a + JSON.stringify(t.tokens).length, 0) / probe.length,
    responseTokens: probe.reduce((a, t) => a + t.tokens!.ids.length, 0) / probe.length,
  };
  console.log(
    `bench:db${QUICK ? ' (--quick)' : ''}: ${os.cpus().length} CPUs, Node ${process.version}, ${ROUNDS} interleaved round(s)`,
  );
  console.log(
    `  metric points: ${fmtInt(SIZES.metricBatched)} batched (batches of ${fmtInt(SIZES.metricBatch)}) vs ${fmtInt(SIZES.metricSingle)} one at a time`,
  );
  console.log(
    `  trajectories:  ${fmtInt(SIZES.trajBatched)} batched (batches of ${SIZES.trajBatch}) vs ${fmtInt(SIZES.trajSingle)} one at a time; ` +
      `avg ${(avgBytes.content / 1024).toFixed(1)} KB content + 5 tool calls (${(avgBytes.calls / 1024).toFixed(1)} KB code/stdout/stderr)`,
  );

  const reports: DbReport[] = [];
  let skipped: string | null = null;

  // SQLite: a fresh temp file.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-bench-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  console.log('\nSQLite');
  reports.push(await benchDatabase(`file:${path.join(dir, 'bench.db')}`, 'sqlite'));

  // PostgreSQL: a throwaway cluster, unless asked not to or the server binaries are missing.
  if (SQLITE_ONLY) {
    skipped = '--sqlite-only';
  } else {
    const pgModule = new URL('../scripts/pg.mjs', import.meta.url).href;
    const { startPg, pgBinDir } = (await import(pgModule)) as {
      startPg: () => Promise<PgCluster>;
      pgBinDir: () => string | null;
    };
    if (!pgBinDir()) {
      skipped = 'PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install -y postgresql)';
    } else {
      console.log('\nPostgreSQL (starting a throwaway cluster)');
      let cluster: PgCluster | null = null;
      try {
        cluster = await startPg();
        const c = cluster;
        cleanups.push(() => c.stop());
        const admin = new pg.Client({ connectionString: c.adminUrl });
        await admin.connect();
        await admin.query('CREATE DATABASE toolsmith_bench');
        await admin.end();
        reports.push(await benchDatabase(c.url('toolsmith_bench'), 'postgresql'));
      } catch (e) {
        if (cluster) throw e; // the cluster started: a failure from here on is a real bench failure
        skipped = `could not start the throwaway cluster: ${(e as Error).message.split('\n')[0]}`;
      }
    }
  }

  printReport(reports, skipped, avgBytes);
  console.log(`\nbench:db finished in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

main()
  .then(cleanup)
  .catch(async (e) => {
    console.error(`bench:db failed: ${(e as Error).message}`);
    if (process.env.TOOLSMITH_DEBUG) console.error(e);
    await cleanup();
    process.exitCode = 1;
  });
