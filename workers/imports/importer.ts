/**
 * Reading a foreign run's folder into an imported run: one pass reads every file of the run's format from where the
 * last pass stopped, maps each record, stores the new trajectories and then the file's new offset, and updates the
 * dashboard's per-step figures. It names no format: a format's files beside its rollouts are read through its hooks
 * (side-files.ts). `followImport` repeats passes until it is stopped. A malformed record is
 * counted and reported with its file and line; the rest is imported.
 */
import type { ForeignFormat, ForeignProblem, ForeignTrajectory } from '../../contracts/foreign.ts';
import { ParseError, readParquetRowGroups } from '../../server/datasets/parse.ts';
import { appendEvent } from '../../server/store/events.ts';
import { type FileProgress, readImportFiles, saveImportProgress } from '../../server/store/imports.ts';
import { storableText } from '../../server/imports/clean-text.ts';
import { listFiles } from '../../server/imports/folder.ts';
import { sleep } from '../engines/sleep.ts';
import { type LineChunk, readLines } from './files.ts';
import { IMPORT_LIMITS, type ImportLimits, jsonDepthOver, recordExcess } from '../../server/imports/bounds.ts';
import { asyncBufferOf, readAll, RefusedFile, withContained } from '../../server/imports/open.ts';
import { LAYOUTS, naturalOrder } from '../../contracts/foreign-layouts.ts';
import { type FormatReader, readerOf, splitOf, stepOf, type Where } from '../../server/imports/readers.ts';
import { refreshSteps, storeForeign } from '../../server/imports/store-foreign.ts';
import {
  type ImportTarget,
  limitsOf,
  type PassResult,
  type ProblemSink,
  type SideFiles,
  type SideIO,
  type SideRecordTaker,
} from './pass.ts';
import { sideFilesOf } from './side-files.ts';

export type { ImportTarget, PassResult } from './pass.ts';

/** At most this many problems are written to the run's log per pass; all are counted. */
const PROBLEMS_LOGGED = 50;

/**
 * Malformed records of a pass: all counted, the first `limits.problemsKept` kept with their place, the first
 * PROBLEMS_LOGGED written to the run's log at the next flush. A file of millions of bad lines holds a bounded list.
 */
class Problems {
  count = 0;
  private toLog: ForeignProblem[] = [];
  constructor(
    private readonly result: PassResult,
    private readonly keep: number,
  ) {}
  add(found: ForeignProblem) {
    // A reason may quote the record (JSON.parse's message does): made storable like the trajectories.
    const p = { ...found, reason: storableText(found.reason), file: storableText(found.file) };
    this.count++;
    this.result.problemCount++;
    if (this.result.problems.length < this.keep) this.result.problems.push(p);
    if (this.result.problemCount <= PROBLEMS_LOGGED) this.toLog.push(p);
  }
  /** Counted since the last take. */
  private taken = 0;
  take(): number {
    const n = this.count - this.taken;
    this.taken = this.count;
    return n;
  }
  async flush(t: ImportTarget) {
    for (const p of this.toLog)
      await appendEvent(t.db, t.runId, {
        type: 'import_problem',
        level: 'warn',
        message: `${p.file}${p.line ? `:${p.line}` : ''}: ${p.reason} (skipped; the rest is imported)`,
        data: p,
      });
    this.toLog = [];
  }
}

/** The files of the run's format in the folder, in natural order (step_9 before step_10). */
export function filesOf(folder: string, format: ForeignFormat, limits: ImportLimits = IMPORT_LIMITS): string[] {
  return listFiles(folder, limits)
    .files.filter((f) => LAYOUTS[format].test(f))
    .sort(naturalOrder);
}

export async function importPass(t: ImportTarget): Promise<PassResult> {
  const reader = readerOf(t.format);
  const done = await readImportFiles(t.db, t.runId);
  const result: PassResult = {
    lines: 0,
    trajectories: 0,
    problems: [],
    problemCount: 0,
    steps: { train: new Set(), eval: new Set() },
  };
  const limits = limitsOf(t);
  const side = sideFilesOf(t.format);
  const io: SideIO = {
    t,
    result,
    filesMatching: (re) =>
      listFiles(t.folder, limits)
        .files.filter((f) => re.test(f))
        .sort(naturalOrder),
    readSideFile: (file, take) => readSideFile(t, file, done, result, take),
  };
  await side?.before?.(io);
  for (const file of filesOf(t.folder, t.format, limits)) {
    if (t.signal?.aborted) break;
    const before = done.get(file) ?? { file, offset: 0, line: 0, done: false };
    if (before.done) continue;
    if (reader.kind === 'lines') await readLineFile(t, reader, file, before, result);
    else await readWholeFile(t, reader, file, result, side);
  }
  // After the rollouts, so that what a side file joins to is stored.
  await side?.after?.(io);
  await refreshSteps(t.db, t.runId, result.steps);
  return result;
}

async function readLineFile(
  t: ImportTarget,
  reader: FormatReader,
  file: string,
  from: FileProgress,
  result: PassResult,
) {
  const limits = limitsOf(t);
  const problems = new Problems(result, limits.problemsKept);
  let at = from;
  for (;;) {
    if (t.signal?.aborted) return;
    const chunk = await readChunk(t, file, at, problems, limits);
    if (!chunk) return;
    const split = splitOf(file);
    const mapped: ForeignTrajectory[] = [];
    for (const { record, line } of jsonRecords(file, chunk, problems, limits)) {
      const where: Where = { file, line, split, ...stepField(t.format, file) };
      collect(reader.map(record, where), mapped, problems);
    }
    const stored = await store(t, mapped, result);
    await problems.flush(t);
    at = { file, offset: chunk.offset, line: chunk.line, done: false };
    await saveImportProgress(t.db, t.runId, at, {
      lines: chunk.lines.length,
      trajectories: stored,
      problems: problems.take(),
    });
    result.lines += chunk.lines.length;
  }
}

/**
 * The next chunk of a line file; null when there is nothing new. A file that may not be read (outside the folder, not
 * a regular file, over the size cap) is noted once and marked done.
 */
async function readChunk(
  t: ImportTarget,
  file: string,
  at: FileProgress,
  problems: Problems,
  limits: ImportLimits,
): Promise<ReturnType<typeof readLines>> {
  let chunk: ReturnType<typeof readLines>;
  try {
    chunk = readLines(t.folder, file, at, limits);
  } catch (e) {
    if (!(e instanceof RefusedFile)) throw e;
    await refuseFile(t, e, problems);
    return null;
  }
  if (!chunk) return null;
  if (chunk.lines.length === 0 && chunk.offset === at.offset) {
    // Nothing new but an unfinished last line already over the cap. While following it may still be being written
    // (its newline ends it as an overlong line); a single read reports it, never having held it whole.
    if (chunk.tailOverlong !== undefined && !t.following) {
      problems.add({
        file,
        line: chunk.tailOverlong,
        reason: `longer than ${limits.lineBytes} bytes (the line cap) and no newline; not read`,
      });
      await problems.flush(t);
      await saveImportProgress(t.db, t.runId, at, { lines: 0, trajectories: 0, problems: problems.take() });
    }
    return null;
  }
  return chunk;
}

/** A file refused by the opener: one problem naming it and why, and the file marked done (it is not tried again). */
async function refuseFile(t: ImportTarget, e: RefusedFile, problems: Problems) {
  if (e.missing) return;
  problems.add({ file: e.file, line: 0, reason: e.reason });
  await problems.flush(t);
  await saveImportProgress(
    t.db,
    t.runId,
    { file: e.file, offset: 0, line: 0, done: true },
    { lines: 0, trajectories: 0, problems: problems.take() },
  );
}

/** A file that could not be read or parsed, as against a failure to store what was read. */
class Unreadable extends Error {
  /** The row it failed at, where the reader says (a Parquet row group over its cap); 0 for the whole file. */
  constructor(
    message: string,
    readonly line = 0,
  ) {
    super(message);
  }
}

/** `fn`'s result; its failure as Unreadable. */
async function reading<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ParseError && e.row) throw new Unreadable(e.reason, e.row);
    throw new Unreadable((e as Error).message);
  }
}

async function readWholeFile(
  t: ImportTarget,
  reader: FormatReader,
  file: string,
  result: PassResult,
  side: SideFiles | undefined,
) {
  const limits = limitsOf(t);
  const problems = new Problems(result, limits.problemsKept);
  const split = splitOf(file);
  const beside = (await side?.beside?.(t, file, problems)) ?? {};
  const where = (line: number): Where => ({
    file,
    line,
    split,
    ...stepField(t.format, file),
    ...beside,
    ...(t.weights ? { weights: t.weights } : {}),
  });
  let records = 0;
  let stored = 0;
  let size = 0;
  const take = async (rows: { record: unknown; line: number }[]) => {
    const mapped: ForeignTrajectory[] = [];
    for (const { record, line } of rows) collect(reader.map(record, where(line)), mapped, problems);
    stored += await store(t, mapped, result);
    records += rows.length;
  };
  try {
    // A JSON document is parsed whole, so it has its own, smaller cap; Parquet is read a row group at a time.
    const cap = reader.kind === 'json' ? limits.documentBytes : limits.fileBytes;
    await withContained(t.folder, file, cap, async (f) => {
      size = f.size;
      if (reader.kind === 'parquet') {
        const groups = readParquetRowGroups(asyncBufferOf(f), limits.rowGroupBytes);
        for (;;) {
          const next = await reading(() => groups.next());
          if (next.done) break;
          const rows: { record: unknown; line: number }[] = [];
          for (const r of next.value) {
            // Refused before it is mapped and stored: a small compressed file can decode to a huge row.
            const excess = recordExcess(r.data, limits);
            if (excess) problems.add({ file, line: r.row, reason: `row ${excess}; not imported` });
            else rows.push({ record: r.data, line: r.row });
          }
          await take(rows);
        }
        return;
      }
      const text = await reading(() => readAll(f).toString('utf8'));
      if (jsonDepthOver(text, limits.depth))
        problems.add({ file, line: 0, reason: `nested deeper than ${limits.depth} levels; not imported` });
      else await take([{ record: await reading(() => JSON.parse(text) as unknown), line: 0 }]);
    });
  } catch (e) {
    if (e instanceof RefusedFile) {
      // Not there any more: nothing to say. Refused: said once, and not tried again.
      if (!e.missing) await refuseFile(t, e, problems);
      return;
    }
    // Only the file's own failure ends it as a problem: one in storing what was read propagates (the job retries;
    // the file is not marked read).
    if (!(e instanceof Unreadable)) throw e;
    // While following, a file that does not read yet may still be being written: the next pass reads it again (what
    // this one stored is found stored by its ids).
    if (t.following) return;
    problems.add({ file, line: e.line, reason: `unreadable: ${e.message.split('\n')[0]}` });
  }
  await problems.flush(t);
  await saveImportProgress(
    t.db,
    t.runId,
    { file, offset: size, line: records, done: true },
    { lines: records, trajectories: stored, problems: problems.take() },
  );
  result.lines += records;
}

/**
 * A JSONL file beside the rollouts, read by byte offsets as they are: each record to `take`, each chunk's problems
 * noted and its offset stored. The lines read.
 */
async function readSideFile(
  t: ImportTarget,
  file: string,
  done: Map<string, FileProgress>,
  result: PassResult,
  take: SideRecordTaker,
): Promise<number> {
  let at = done.get(file) ?? { file, offset: 0, line: 0, done: false };
  if (at.done) return 0;
  const limits = limitsOf(t);
  const problems = new Problems(result, limits.problemsKept);
  let read = 0;
  for (;;) {
    if (t.signal?.aborted) return read;
    const chunk = await readChunk(t, file, at, problems, limits);
    if (!chunk) return read;
    for (const { record, line } of jsonRecords(file, chunk, problems, limits))
      await take(record, { file, line }, problems);
    await problems.flush(t);
    at = { file, offset: chunk.offset, line: chunk.line, done: false };
    await saveImportProgress(t.db, t.runId, at, {
      lines: chunk.lines.length,
      trajectories: 0,
      problems: problems.take(),
    });
    read += chunk.lines.length;
  }
}

/**
 * Each line of a chunk parsed as JSON; a line over the line cap, not JSON, or nested deeper than the cap is a problem
 * naming its file and line (in line order), and is skipped.
 */
function* jsonRecords(
  file: string,
  chunk: Pick<LineChunk, 'lines' | 'overlong'>,
  problems: ProblemSink,
  limits: Pick<ImportLimits, 'depth' | 'lineBytes'>,
) {
  let o = 0;
  const overlongBefore = (line: number) => {
    for (; o < chunk.overlong.length && (chunk.overlong[o] as number) < line; o++)
      problems.add({
        file,
        line: chunk.overlong[o] as number,
        reason: `longer than ${limits.lineBytes} bytes (the line cap); skipped`,
      });
  };
  for (const { text, line } of chunk.lines) {
    overlongBefore(line);
    if (jsonDepthOver(text, limits.depth)) {
      problems.add({ file, line, reason: `nested deeper than ${limits.depth} levels; not imported` });
      continue;
    }
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch (e) {
      problems.add({ file, line, reason: `not JSON: ${(e as Error).message}` });
      continue;
    }
    yield { record, line };
  }
  overlongBefore(Number.POSITIVE_INFINITY);
}

function stepField(format: ForeignFormat, file: string): { step?: number } {
  const step = stepOf(format, file);
  return step === undefined ? {} : { step };
}

function collect(m: ReturnType<FormatReader['map']>, into: ForeignTrajectory[], problems: ProblemSink) {
  if (m.ok) into.push(...m.trajectories);
  else problems.add(m.problem);
}

/** Store what is not stored yet; the pass counts what it stored and which steps gained. */
async function store(t: ImportTarget, mapped: ForeignTrajectory[], result: PassResult): Promise<number> {
  const r = await storeForeign(t.db, t.runId, t.format, mapped, {
    stored: 0,
    duplicates: 0,
    steps: result.steps,
  });
  result.trajectories += r.stored;
  return r.stored;
}

/** Passes until `signal` aborts, one every `pollMs` (sooner after a pass that found something). */
export async function followImport(t: ImportTarget & { signal: AbortSignal; pollMs: number }) {
  const target = { ...t, following: true };
  while (!t.signal.aborted) {
    const r = await importPass(target);
    if (r.lines === 0) await sleep(t.pollMs, t.signal);
  }
}
