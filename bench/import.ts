/**
 * bench:import — how fast runs trained elsewhere are read: lines (records) per second and trajectories per
 * second per format, on SQLite and PostgreSQL in the same run; the delay from a line appended to a followed file to
 * its trajectory in the database (median and p99, at the default poll interval); and the peak memory of a large
 * folder's import against its size (bounded: files are read in chunks and stored in batches).
 *
 *   npx tsx bench/import.ts [--records N] [--big-mb M] [--sqlite-only] [--follow-lines K]
 *
 * Everything goes through the importer (workers/imports/importer.ts) exactly as `npx toolsmith import` runs it. The
 * records are each format's shape as in the mappers' tests; Parquet files are written by pyarrow (the project's
 * .venv), ART's with zstd as ART writes them.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { ForeignFormat } from '../contracts/foreign.ts';
import { openDatabase, type Database } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { launchImport } from '../server/imports/launch.ts';
import { followImport, importPass } from '../workers/imports/importer.ts';
import { artRow, primeEpisode, rllmDoc } from '../tests/helpers/foreign-records.ts';
import { benchFlags } from './flags.ts';

const flags = benchFlags(
  'bench:import',
  'npx tsx bench/import.ts [--records N] [--big-mb M] [--sqlite-only] [--follow-lines K]',
  { records: 'number', 'big-mb': 'number', 'sqlite-only': 'boolean', 'follow-lines': 'number' },
);
const RECORDS = Math.max(10, Math.floor(Number(flags.records ?? 2000)));
const BIG_MB = Math.max(0, Number(flags['big-mb'] ?? 256));
const FOLLOW_LINES = Math.max(20, Math.floor(Number(flags['follow-lines'] ?? 200)));
const PYTHON = path.join(process.cwd(), '.venv/bin/python');
const STEPS = 10;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-bench-import-'));

// ───────────────────────────── folders, one per format ─────────────────────────────

/** A verl line of realistic size: a prompt, a ~1.5 KB response, the reference, the score and two extras. */
function verlLine(step: number, i: number, writtenAt?: number) {
  return `${JSON.stringify({
    input: `Problem ${i % 64}: a farmer has ${i} sheep and buys ${step} more. How many now?`,
    output: `<think>${'Let me count the sheep carefully. '.repeat(40)}</think> ${i + step}`,
    gts: String(i + step),
    score: i % 3 === 0 ? 0 : 1,
    step,
    acc: i % 3 !== 0,
    uid: `g${i % 64}`,
    // Text, not a number: verl's numeric extras are reward components.
    ...(writtenAt === undefined ? {} : { written_at: String(writtenAt) }),
  })}\n`;
}

function writeJsonl(file: string, lines: Iterable<string>) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  let buf = '';
  for (const l of lines) {
    buf += l;
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf);
      buf = '';
    }
  }
  fs.writeSync(fd, buf);
  fs.closeSync(fd);
}

function* perStep(n: number) {
  for (let i = 0; i < n; i++) yield { step: 1 + Math.floor((i * STEPS) / n), i };
}

function writeParquet(rows: unknown[], file: string, compression: 'snappy' | 'zstd') {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const py = `import json, sys, pyarrow as pa, pyarrow.parquet as pq
pq.write_table(pa.Table.from_pylist(json.load(sys.stdin)), sys.argv[1], compression=sys.argv[2])`;
  const r = spawnSync(PYTHON, ['-c', py, file, compression], { input: JSON.stringify(rows), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pyarrow could not write ${file}: ${r.stderr.slice(-500)}`);
}

/** Writes one step's records (`ids`) of each format under `root`, laid out as that framework writes them. */
const writeStep: Record<ForeignFormat, (root: string, step: number, ids: number[]) => void> = {
  verl: (root, step, ids) => {
    writeJsonl(
      path.join(root, 'rollout', `${step}.jsonl`),
      ids.map((i) => verlLine(step, i)),
    );
  },
  'prime-rl': (root, step, ids) => {
    writeJsonl(
      path.join(root, `rollouts/step_${step}/train/all/traces.jsonl`),
      ids.map(
        (i) =>
          `${JSON.stringify({
            ...primeEpisode,
            id: `ep-${i}`,
            group: { id: String(i % 64) },
            run: { ...primeEpisode.run, work: { ...primeEpisode.run.work, step } },
            traces: primeEpisode.traces.map((t) => ({ ...t, id: `tr-${i}` })),
          })}\n`,
      ),
    );
  },
  'nemo-rl': (root, step, ids) => {
    writeJsonl(
      path.join(root, `train_data_step${step}.jsonl`),
      ids.map(
        (i) =>
          `${JSON.stringify({
            content: [[`Problem ${i % 64}: what is ${i} + ${step}?`, `${'Counting. '.repeat(40)}${i + step}`]],
            rewards: [i % 2],
            generation_logprobs: [Array.from({ length: 48 }, (_, k) => (k < 16 ? 0 : -0.5))],
            prev_logprobs: [Array.from({ length: 48 }, (_, k) => (k < 16 ? 0 : -0.6))],
            input_lengths: [48],
            token_ids: [Array.from({ length: 48 }, (_, k) => k + 1)],
            token_loss_mask: [Array.from({ length: 48 }, (_, k) => (k < 16 ? 0 : 1))],
            idx: [i],
          })}\n`,
      ),
    );
  },
  trl: (root, step, ids) => {
    writeParquet(
      ids.map((i) => ({
        step,
        prompt: `Problem ${i % 64}: what is ${i} + ${step}?`,
        completion: `${'Counting. '.repeat(40)}${i + step}`,
        accuracy: i % 2,
        format: 0.5,
        advantage: (i % 2) - 0.5,
      })),
      path.join(root, 'completions', `completions_${String(step).padStart(5, '0')}.parquet`),
      'snappy',
    );
  },
  art: (root, step, ids) => {
    writeParquet(
      ids.map((i) => ({ ...artRow, group_index: i % 64, reward: (i % 5) / 4 })),
      path.join(root, 'trajectories', 'train', `${String(step).padStart(4, '0')}.parquet`),
      'zstd',
    );
  },
  rllm: (root, step, ids) => {
    for (const i of ids) {
      const file = path.join(root, `episodes/train_step_${step}_epoch_0/task-${i}.json`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(
        file,
        JSON.stringify({
          ...rllmDoc,
          training_step: step,
          episode_id: `task-${i}:0`,
          trajectories: rllmDoc.trajectories.map((t) => ({ ...t, uid: `${i}-${t.name}` })),
        }),
      );
    }
  },
  atif: (root, step, ids) => {
    for (const i of ids) {
      const file = path.join(root, `t${i}.trajectory.json`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(
        file,
        JSON.stringify({
          schema_version: 'ATIF-v1.4',
          session_id: `s-${i}`,
          agent: { name: 'bench', version: '1' },
          steps: [
            { step_id: 1, source: 'user', message: `What is ${i} + ${step}?` },
            {
              step_id: 2,
              source: 'agent',
              message: 'Let me compute.',
              tool_calls: [{ tool_call_id: 'c1', function_name: 'python', arguments: { code: `print(${i}+${step})` } }],
              observation: { results: [{ source_call_id: 'c1', content: String(i + step) }] },
              metrics: { completion_token_ids: [1, 2, 3], logprobs: [-0.1, -0.2, -0.3] },
            },
            { step_id: 3, source: 'agent', message: `It is ${i + step}.` },
          ],
          extra: { reward: 1, step, group_id: `g${i % 64}` },
        }),
      );
    }
  },
};

/** A folder of `n` records of `format`, in STEPS steps. */
function makeFolder(format: ForeignFormat, n: number): string {
  const root = path.join(work, format);
  const byStep = new Map<number, number[]>();
  for (const { step, i } of perStep(n)) byStep.set(step, [...(byStep.get(step) ?? []), i]);
  for (const [step, ids] of byStep) writeStep[format](root, step, ids);
  return root;
}

/** One record per trajectory for every format but rLLM (two: a solver and a judge per episode). */
const FORMATS: ForeignFormat[] = ['verl', 'prime-rl', 'nemo-rl', 'trl', 'art', 'rllm', 'atif'];

// ───────────────────────────── measurements ─────────────────────────────

interface Row {
  dialect: string;
  format: ForeignFormat;
  records: number;
  trajectories: number;
  seconds: number;
  problems: number;
}

async function importOnce(db: Database, folder: string): Promise<Omit<Row, 'dialect'>> {
  const launched = await launchImport(db, { path: folder }, { roots: null, enqueue: false });
  const t0 = performance.now();
  const r = await importPass({ db, runId: launched.runId, folder: launched.folder, format: launched.format });
  return {
    format: launched.format,
    records: r.lines,
    trajectories: r.trajectories,
    seconds: (performance.now() - t0) / 1000,
    problems: r.problemCount,
  };
}

/** Append a line every 50 ms to a followed verl file; each line's delay until its trajectory is in the database. */
async function followDelays(db: Database, pollMs: number): Promise<number[]> {
  const folder = path.join(work, `follow-${db.dialect}`);
  const file = path.join(folder, 'rollout', '1.jsonl');
  writeJsonl(file, [verlLine(1, 0, Date.now())]);
  const launched = await launchImport(db, { path: folder, follow: true }, { roots: null, enqueue: false });
  const stop = new AbortController();
  const following = followImport({
    db,
    runId: launched.runId,
    folder: launched.folder,
    format: 'verl',
    signal: stop.signal,
    pollMs,
  });
  const written = new Map<string, number>();
  const seen = new Map<string, number>();
  const watcher = (async () => {
    while (!stop.signal.aborted) {
      const rows = await db.prisma.trajectory.findMany({
        where: { runId: launched.runId },
        select: { id: true, content: true },
      });
      const now = Date.now();
      for (const r of rows)
        if (!seen.has(r.id)) {
          seen.set(r.id, now);
          const at = Number(JSON.parse(r.content).imported.trajectory.metadata.written_at);
          written.set(r.id, at);
        }
      await new Promise((res) => setTimeout(res, 10));
    }
  })();
  for (let i = 1; i <= FOLLOW_LINES; i++) {
    fs.appendFileSync(file, verlLine(1, i, Date.now()));
    await new Promise((res) => setTimeout(res, 50));
  }
  const deadline = Date.now() + 30_000;
  while (seen.size < FOLLOW_LINES + 1 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
  stop.abort();
  await following;
  await watcher;
  return [...seen].slice(1).map(([id, at]) => at - written.get(id)!);
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};

/** Peak resident memory of a child importing a `mb`-MB verl folder (a fresh process, so the peak is its own). */
function bigImport(
  mb: number,
): { bytes: number; seconds: number; peakRssMb: number; baseRssMb: number; trajectories: string } | null {
  if (mb <= 0) return null;
  if (!fs.existsSync('/usr/bin/time')) {
    console.log('\nlarge folder: skipped (peak memory is read with /usr/bin/time: apt-get install -y time)');
    return null;
  }
  const folder = path.join(work, 'big');
  const perLine = verlLine(1, 0).length;
  const lines = Math.ceil((mb * 1024 * 1024) / perLine);
  const perFile = Math.ceil(lines / STEPS);
  for (let s = 1; s <= STEPS; s++)
    writeJsonl(
      path.join(folder, 'rollout', `${s}.jsonl`),
      (function* () {
        for (let i = 0; i < perFile; i++) yield verlLine(s, i);
      })(),
    );
  const bytes = fs
    .readdirSync(path.join(folder, 'rollout'))
    .reduce((n, f) => n + fs.statSync(path.join(folder, 'rollout', f)).size, 0);
  const run = (dir: string, data: string) => {
    const t0 = performance.now();
    const r = spawnSync(
      '/usr/bin/time',
      ['-v', process.execPath, path.join(process.cwd(), 'bin/toolsmith.mjs'), 'import', dir],
      { encoding: 'utf8', env: { ...process.env, TOOLSMITH_DATA_DIR: data, DATABASE_URL: '' }, maxBuffer: 1 << 26 },
    );
    if (r.status !== 0) throw new Error(`the import of ${dir} failed: ${r.stderr.slice(-1000)}`);
    const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
    return {
      seconds: (performance.now() - t0) / 1000,
      rssMb: rss ? Number(rss[1]) / 1024 : Number.NaN,
      got: /imported (\d+) trajectories/.exec(r.stdout)?.[1] ?? '?',
    };
  };
  // The same command on a one-line folder: what the process takes before any data (Node, the CLI, the database).
  const tiny = path.join(work, 'tiny');
  writeJsonl(path.join(tiny, 'rollout', '1.jsonl'), [verlLine(1, 0)]);
  const base = run(tiny, path.join(work, 'tiny-data'));
  const big = run(folder, path.join(work, 'big-data'));
  const seconds = big.seconds;
  const rss = { base: base.rssMb };
  const got = big.got;
  return { bytes, seconds, peakRssMb: big.rssMb, baseRssMb: rss.base, trajectories: got };
}

// ───────────────────────────── main ─────────────────────────────

async function benchOn(url: string, dialect: string, folders: Map<ForeignFormat, string>) {
  await migrate(url);
  const db = await openDatabase(url);
  const rows: Row[] = [];
  try {
    for (const format of FORMATS) rows.push({ dialect, ...(await importOnce(db, folders.get(format)!)) });
    const delays = await followDelays(db, 1000);
    return { rows, delays };
  } finally {
    await db.close();
  }
}

async function main() {
  console.log(`bench:import — ${RECORDS} records per format in ${STEPS} steps; follow: ${FOLLOW_LINES} lines`);
  const folders = new Map(FORMATS.map((f) => [f, makeFolder(f, RECORDS)] as const));
  const results: { rows: Row[]; delays: number[]; dialect: string }[] = [];
  results.push({ dialect: 'sqlite', ...(await benchOn(`file:${path.join(work, 'bench.db')}`, 'sqlite', folders)) });
  if (!flags['sqlite-only']) {
    const { startPg, pgBinDir } = (await import(new URL('../scripts/pg.mjs', import.meta.url).href)) as {
      startPg: () => Promise<{ adminUrl: string; url: (db: string) => string; stop: () => void }>;
      pgBinDir: () => string | null;
    };
    if (!pgBinDir()) console.log('PostgreSQL skipped: server binaries not found (apt-get install -y postgresql)');
    else {
      const c = await startPg();
      try {
        const admin = new pg.Client({ connectionString: c.adminUrl });
        await admin.connect();
        await admin.query('CREATE DATABASE toolsmith_bench_import');
        await admin.end();
        results.push({
          dialect: 'postgresql',
          ...(await benchOn(c.url('toolsmith_bench_import'), 'postgresql', folders)),
        });
      } finally {
        c.stop();
      }
    }
  }
  console.log('\nformat      database     records  trajectories   records/s  trajectories/s  problems');
  for (const r of results.flatMap((x) => x.rows))
    console.log(
      `${r.format.padEnd(11)} ${r.dialect.padEnd(11)} ${String(r.records).padStart(8)} ${String(r.trajectories).padStart(13)} ${(r.records / r.seconds).toFixed(0).padStart(11)} ${(r.trajectories / r.seconds).toFixed(0).padStart(15)} ${String(r.problems).padStart(9)}`,
    );
  console.log(
    '\nfollow (TOOLSMITH_IMPORT_POLL_MS=1000, a line appended every 50 ms): line written → trajectory stored',
  );
  for (const x of results)
    console.log(
      `${x.dialect.padEnd(11)} ${x.delays.length} lines: median ${quantile(x.delays, 0.5).toFixed(0)} ms, p99 ${quantile(x.delays, 0.99).toFixed(0)} ms`,
    );
  const big = bigImport(BIG_MB);
  if (big)
    console.log(
      `\nlarge folder (verl, SQLite, npx toolsmith import): ${(big.bytes / 2 ** 20).toFixed(0)} MB, ${big.trajectories} trajectories in ${big.seconds.toFixed(1)} s (${(big.bytes / 2 ** 20 / big.seconds).toFixed(1)} MB/s); peak memory ${big.peakRssMb.toFixed(0)} MB, against ${big.baseRssMb.toFixed(0)} MB for a one-line folder (+${(big.peakRssMb - big.baseRssMb).toFixed(0)} MB)`,
    );
}

main()
  .catch((e) => {
    console.error(`bench:import failed: ${(e as Error).stack ?? e}`);
    process.exitCode = 1;
  })
  .finally(() => fs.rmSync(work, { recursive: true, force: true }));
