/**
 * Dataset and Problem rows. A dataset version is one Dataset row plus its Problem rows, written in one transaction;
 * parsing, field mapping, validation and hashing of an import stay in server/datasets/.
 */
import type { Database, PrismaClient } from '../db/client.ts';
import { inTransaction, insertRows } from '../db/batch.ts';
import { newId } from '../ids.ts';

export interface DatasetSummary {
  id: string;
  name: string;
  version: number;
  source: string;
  hash: string;
  count: number;
  metadata: Record<string, unknown> | null;
  createdAt: Date;
  splits: Record<string, number>;
}

/** One problem of a new dataset version (index = its position). */
export interface NewProblem {
  split: string;
  externalId: string | null;
  question: string;
  answer: string;
  metadata: unknown;
}

export interface NewDatasetVersion {
  name: string;
  hash: string;
  metadata: unknown;
  problems: NewProblem[];
  /** file (an import) or package (a catalogue dataset); generated and builtin are written elsewhere. */
  source?: 'file' | 'package';
}

const parseJson = (s: string | null) => (s ? (JSON.parse(s) as Record<string, unknown>) : null);

/** Problems per split of each dataset (every id asked for is present, {} when it has none). */
async function splitCounts(db: Database, ids: string[]): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>(ids.map((id) => [id, {}]));
  if (ids.length === 0) return out;
  const rows = await db.prisma.problem.groupBy({
    by: ['datasetId', 'split'],
    where: { datasetId: { in: ids } },
    _count: { _all: true },
  });
  for (const r of rows) out.get(r.datasetId)![r.split] = r._count._all;
  return out;
}

/** All datasets, newest first (every version; `latestOnly` keeps the newest version of each name). */
export async function listDatasets(
  db: Database,
  opts: { name?: string; latestOnly?: boolean; limit?: number } = {},
): Promise<DatasetSummary[]> {
  let rows = await db.prisma.dataset.findMany({
    where: opts.name ? { name: opts.name } : {},
    orderBy: [{ createdAt: 'desc' }, { name: 'asc' }, { version: 'desc' }],
    take: opts.latestOnly ? undefined : (opts.limit ?? 500),
  });
  if (opts.latestOnly) {
    const best = new Map<string, (typeof rows)[number]>();
    for (const r of rows) if (!best.has(r.name) || best.get(r.name)!.version < r.version) best.set(r.name, r);
    rows = rows.filter((r) => best.get(r.name) === r).slice(0, opts.limit ?? 500);
  }
  const counts = await splitCounts(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({ ...r, metadata: parseJson(r.metadata), splits: counts.get(r.id) ?? {} }));
}

/** One dataset by id, or by name (latest version, or `version`). */
export async function getDataset(
  db: Database,
  ref: { id?: string; name?: string; version?: number },
): Promise<DatasetSummary | null> {
  const row = ref.id
    ? await db.prisma.dataset.findUnique({ where: { id: ref.id } })
    : await db.prisma.dataset.findFirst({
        where: { name: ref.name, ...(ref.version ? { version: ref.version } : {}) },
        orderBy: { version: 'desc' },
      });
  if (!row) return null;
  const counts = await splitCounts(db, [row.id]);
  return { ...row, metadata: parseJson(row.metadata), splits: counts.get(row.id) ?? {} };
}

/** Whether a dataset with this id exists (reads the primary key only). */
export async function datasetExists(db: Database, id: string): Promise<boolean> {
  return (await db.prisma.dataset.findUnique({ where: { id }, select: { id: true } })) !== null;
}

/**
 * A dataset's problem rows in index order (metadata still JSON text): of one split (every split when `split` is
 * left out), from index `fromIndex` on, at most `limit`. One range scan of the (datasetId, split, index) index.
 */
export async function listProblemRows(
  db: Database,
  q: { datasetId: string; split?: string; fromIndex?: number; limit?: number; pick?: 'first' | 'spread' },
) {
  const spread = q.pick === 'spread' && q.limit !== undefined;
  const rows = await db.prisma.problem.findMany({
    where: {
      datasetId: q.datasetId,
      ...(q.split ? { split: q.split } : {}),
      ...(q.fromIndex !== undefined ? { index: { gte: q.fromIndex } } : {}),
    },
    orderBy: { index: 'asc' },
    take: spread ? undefined : q.limit,
  });
  return spread ? spreadEvenly(rows, q.limit!) : rows;
}

/** Pure: n items spread evenly over `items` in their order (item ⌊i·len/n⌋ for i < n); all of them when n ≥ len. */
export function spreadEvenly<T>(items: T[], n: number): T[] {
  if (n >= items.length) return items;
  return Array.from({ length: n }, (_, i) => items[Math.floor((i * items.length) / n)]!);
}

/** A page of problems in index order; `nextCursor` is the index to pass as `cursor` for the next page (null at the end). */
export async function listProblems(
  db: Database,
  opts: { datasetId: string; split?: string; cursor?: number; limit?: number },
) {
  const limit = opts.limit ?? 50;
  const rows = await listProblemRows(db, {
    datasetId: opts.datasetId,
    split: opts.split,
    fromIndex: opts.cursor ?? 0,
    limit: limit + 1,
  });
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  return {
    items: page.map((p) => ({ ...p, metadata: parseJson(p.metadata) })),
    nextCursor: more ? rows[limit].index : null,
  };
}

/** The newest version of `name` whose content hash is `hash` (an import of the same content), or null. */
export function findDatasetByContent(db: Database, name: string, hash: string) {
  return db.prisma.dataset.findFirst({ where: { name, hash }, orderBy: { version: 'desc' } });
}

/**
 * Store the next version of `name` (version 1 for a new name) and its problems, in one transaction: the Dataset row,
 * then the Problem rows as batched multi-row INSERTs. Two writers racing for one version collide on the
 * (name, version) key; the loser's transaction fails with a unique violation (the caller retries).
 */
export async function insertDatasetVersion(db: Database, d: NewDatasetVersion) {
  return inTransaction(db, async (sql) => {
    const tx = sql as unknown as PrismaClient;
    const last = await tx.dataset.findFirst({
      where: { name: d.name },
      orderBy: { version: 'desc' },
      select: { version: true },
    });
    const ds = await tx.dataset.create({
      data: {
        id: newId('ds_'),
        name: d.name,
        version: (last?.version ?? 0) + 1,
        source: d.source ?? 'file',
        hash: d.hash,
        count: d.problems.length,
        metadata: JSON.stringify(d.metadata),
      },
    });
    await insertRows(
      db,
      'Problem',
      ['id', 'datasetId', 'index', 'split', 'externalId', 'question', 'answer', 'metadata'],
      d.problems.map((it, i) => [
        newId('pb_'),
        ds.id,
        i,
        it.split,
        it.externalId,
        it.question,
        it.answer,
        it.metadata ? JSON.stringify(it.metadata) : null,
      ]),
      { on: sql },
    );
    return ds;
  });
}
