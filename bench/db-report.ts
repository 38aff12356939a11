/**
 * bench:db's report: the ingest table (batched against single, per database), the read-back latencies, bytes per
 * trajectory with and without token records, the verdicts against the targets and the line for docs/benchmarks.md.
 */
import os from 'node:os';
import type { Dialect } from '../server/db/url.ts';

export interface Result {
  dialect: Dialect;
  workload: 'metric points' | 'trajectories';
  mode: 'batched' | 'single';
  rows: number;
  seconds: number;
  rounds: number[]; // per-round rows/s
}

export interface ReadBack {
  name: string;
  rows: number;
  coldMs: number;
  warmMs: number;
  plan: string;
}

/** On-disk bytes per stored row of each trajectory table (SQLite's dbstat, PostgreSQL's relation sizes); null where unavailable. */
export type Disk = Record<'Trajectory' | 'ToolCall' | 'TrajectoryTokens', { bytes: number; rows: number }> | null;

export interface DbReport {
  dialect: Dialect;
  results: Result[];
  reads: ReadBack[];
  problems: string[];
  sizes: { trajectories: number; metricPoints: number };
  disk: Disk;
}

export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
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

export interface AvgBytes {
  content: number;
  calls: number;
  tokens: number;
  tokensJson: number;
  responseTokens: number;
}

/** How the run was made, for the report's wording: --quick, the batch sizes and the targets. */
export interface RunSettings {
  quick: boolean;
  sizes: { metricBatch: number; trajBatch: number };
  targets: { metricPointsPerSec: number; trajectoriesPerSec: number };
}

/** The whole report, section by section, in the order it prints. */
export function printReport(reports: DbReport[], skipped: string | null, avgBytes: AvgBytes, run: RunSettings) {
  printIngest(reports, run);
  printReads(reports);
  printBytes(reports, avgBytes);
  const verdicts = printVerdicts(reports, skipped, run);
  printDocsTable(reports, avgBytes, run, verdicts);
}

/** Ingest rows/s per database, workload and mode; batching's speed-up; SQLite against PostgreSQL. */
function printIngest(reports: DbReport[], { sizes: SIZES }: RunSettings) {
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
}

/** Read-back latency of the two hot queries, with their plans. */
function printReads(reports: DbReport[]) {
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
}

/** Bytes per trajectory before and after token records, in payload and on disk, and one step read with them. */
function printBytes(reports: DbReport[], avgBytes: AvgBytes) {
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
}

type Verdict = { text: string; ok: boolean };

/** The targets met or missed, what was skipped and what misbehaved. */
function printVerdicts(reports: DbReport[], skipped: string | null, { targets: TARGETS }: RunSettings): Verdict[] {
  const sqlite = reports.find((r) => r.dialect === 'sqlite');
  const verdicts: Verdict[] = [];
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

  return verdicts;
}

/** The paste-ready block for docs/benchmarks.md "bench:db". */
function printDocsTable(reports: DbReport[], avgBytes: AvgBytes, run: RunSettings, verdicts: Verdict[]) {
  const { quick: QUICK, sizes: SIZES, targets: TARGETS } = run;
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
