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
import { insertMetricPoints, insertMetricPointSingle, readSeries } from '../server/store/metrics.ts';
import {
  insertTrajectories,
  insertTrajectorySingle,
  readStep,
  readStepWithTokens,
  type TrajectoryInput,
} from '../server/store/trajectories.ts';
import { encodeTokenRecord, tokenColumnBytes } from '../server/store/token-codec.ts';
import { benchFlags } from './flags.ts';
import { GROUP, makeMetricPoints, makeTrajectory, prng, SERIES_LEN, STEP_SIZE, sentence } from './db-data.ts';
import {
  type AvgBytes,
  type DbReport,
  type Disk,
  fmtInt,
  printReport,
  type ReadBack,
  type Result,
} from './db-report.ts';

// ───────────────────────────── options ─────────────────────────────

const flags = benchFlags('bench:db', 'npx tsx bench/db.ts [--quick] [--sqlite-only] [--rounds N]', {
  quick: 'boolean',
  'sqlite-only': 'boolean',
  rounds: 'number',
});
const QUICK = Boolean(flags.quick);
const SQLITE_ONLY = Boolean(flags['sqlite-only']);
const ROUNDS = Math.max(1, Math.floor(Number(flags.rounds ?? 3)));

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

// ───────────────────────────── measurement ─────────────────────────────

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

/** One database: ingest measured batched against single in interleaved rounds, every row checked stored, then the
 *  tables filled with history and the hot reads timed. */
async function benchDatabase(url: string, dialect: Dialect): Promise<DbReport> {
  await migrate(url);
  const db = await openDatabase(url);
  try {
    const runB = `run_bench_batched_${dialect}`;
    const runS = `run_bench_single_${dialect}`;
    const results = await measureIngest(db, dialect, runB, runS);
    const disk = await checkStored(db, dialect, runB, runS);
    const { bareStep, sizes } = await fillHistory(db, dialect, runB);
    const { reads, problems } = await measureReads(db, runB, bareStep);
    return { dialect, results, reads, problems, sizes, disk };
  } finally {
    await db.close();
  }
}

/** Batched and one-at-a-time ingest of metric points and trajectories, interleaved in ROUNDS rounds after a warm-up. */
async function measureIngest(db: Database, dialect: Dialect, runB: string, runS: string): Promise<Result[]> {
  const r = prng(20240917);
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

  return [mBatched, mSingle, tBatched, tSingle];
}

/** Every row the ingest wrote is there (a bench that silently drops rows would look fast); returns the on-disk size
 *  taken now, while every stored trajectory is a full one with a token record (the fill after is neither). */
async function checkStored(db: Database, dialect: Dialect, runB: string, runS: string): Promise<Disk> {
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
    throw new Error(`${dialect}: ${tokenRows} token records stored, expected ${SIZES.trajBatched + SIZES.trajSingle}`);
  const disk = await diskBytes(db);
  for (const [table, runId, want] of checks) {
    const got = await count(table, runId);
    if (got !== want) throw new Error(`${dialect}: ${table} for ${runId} has ${got} rows, expected ${want}`);
  }

  return disk;
}

// Read-back happens on a table that looks like a database in use: the measured run gets FILL_STEPS more steps of
// (small) trajectories and other runs add metric history, so one step / one metric is a small slice of its table
// and the read has to use the index to be fast. Not timed.
async function fillHistory(db: Database, dialect: Dialect, runB: string) {
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

  return { bareStep, sizes };
}

// Read-back: the two queries the UI leans on. ANALYZE first (on PostgreSQL what autovacuum would have done by the
// time anyone reads), so the planner has statistics for the freshly loaded tables.
async function measureReads(db: Database, runB: string, bareStep: number) {
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

  return { reads, problems };
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

  printReport(reports, skipped, avgBytes, { quick: QUICK, sizes: SIZES, targets: TARGETS });
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
