import type { Database, Sql } from '../db/client.ts';
import { insertRows } from '../db/batch.ts';
import { appendEvent } from './events.ts';

export interface MetricPointInput {
  runId: string;
  key: string;
  step: number;
  value: number;
  time?: number;
}
export interface SeriesPoint {
  step: number;
  value: number;
  time: number;
}

const COLUMNS = ['runId', 'key', 'step', 'value', 'time'];
// Re-logging a step (after a resume) replaces the value instead of failing or duplicating it.
const UPSERT =
  'ON CONFLICT ("runId", "key", "step") DO UPDATE SET "value" = excluded."value", "time" = excluded."time"';

/** Bulk insert (chunked multi-row upsert). Non-finite values are refused by the caller, never stored as NULL. */
export async function insertMetricPoints(db: Database, points: MetricPointInput[], on?: Sql): Promise<void> {
  const now = Date.now();
  await insertRows(
    db,
    'MetricPoint',
    COLUMNS,
    points.map((p) => [p.runId, p.key, p.step, p.value, p.time ?? now]),
    { suffix: UPSERT, on },
  );
}

/** One row per statement: the slow path, kept for bench:db's side-by-side comparison. */
export async function insertMetricPointSingle(db: Database, p: MetricPointInput, on?: Sql): Promise<void> {
  await insertRows(db, 'MetricPoint', COLUMNS, [[p.runId, p.key, p.step, p.value, p.time ?? Date.now()]], {
    suffix: UPSERT,
    on,
  });
}

/**
 * Record one step's scalars and announce them on the run's event stream, so live charts see them without
 * polling the metric table. Non-finite values are not stored; a warning event names them instead.
 */
export async function logMetrics(
  db: Database,
  runId: string,
  step: number,
  values: Record<string, number>,
): Promise<void> {
  const finite: Record<string, number> = {};
  const bad: string[] = [];
  for (const [key, value] of Object.entries(values)) {
    if (typeof value === 'number' && Number.isFinite(value)) finite[key] = value;
    else bad.push(`${key}=${String(value)}`);
  }
  const time = Date.now();
  await insertMetricPoints(
    db,
    Object.entries(finite).map(([key, value]) => ({ runId, key, step, value, time })),
  );
  if (Object.keys(finite).length > 0) {
    await appendEvent(db, runId, {
      type: 'metric',
      level: 'debug',
      message: `step ${step}: ${Object.entries(finite)
        .map(([k, v]) => `${k}=${formatNumber(v)}`)
        .join(' ')}`,
      data: { step, time, values: finite },
    });
  }
  if (bad.length > 0) {
    await appendEvent(db, runId, {
      type: 'log',
      level: 'warn',
      message: `step ${step}: non-finite metric values not stored: ${bad.join(', ')}`,
    });
  }
}

/** Four significant digits without trailing zeros: 0.5, 46.9, 1143, 1.235e-5. */
export function formatNumber(v: number): string {
  if (Number.isInteger(v)) return String(v);
  return String(Number(v.toPrecision(4)));
}

/** One metric of one run, by step: a single range scan of the (runId, key, step) primary key. */
export async function readSeries(
  db: Database,
  runId: string,
  key: string,
  fromStep?: number,
  toStep?: number,
): Promise<SeriesPoint[]> {
  return db.prisma.metricPoint.findMany({
    // An absent bound is left out (undefined): a MIN/MAX_SAFE_INTEGER stand-in overflows PostgreSQL's INTEGER step.
    where: { runId, key, step: { gte: fromStep, lte: toStep } },
    orderBy: { step: 'asc' },
    select: { step: true, value: true, time: true },
  });
}

export async function listMetricKeys(db: Database, runId: string): Promise<string[]> {
  const rows = await db.prisma.metricPoint.findMany({
    where: { runId },
    distinct: ['key'],
    select: { key: true },
    orderBy: { key: 'asc' },
  });
  return rows.map((r) => r.key);
}

/**
 * Several metrics of one run as step/value series by key, each in step order: one scan of the (runId, key, step)
 * primary key. Every key asked for is present (an empty series when the run has no point of it).
 */
export async function readSeriesOfKeys(
  db: Database,
  runId: string,
  keys: string[],
): Promise<Record<string, { step: number; value: number; time: number }[]>> {
  const out: Record<string, { step: number; value: number; time: number }[]> = Object.fromEntries(
    keys.map((k) => [k, []]),
  );
  if (keys.length === 0) return out;
  const points = await db.prisma.metricPoint.findMany({
    where: { runId, key: { in: keys } },
    orderBy: [{ key: 'asc' }, { step: 'asc' }],
    select: { key: true, step: true, value: true, time: true },
  });
  // The time is for compare's wall-clock axis (components/compare/align.ts).
  for (const p of points) out[p.key]!.push({ step: p.step, value: p.value, time: p.time });
  return out;
}
