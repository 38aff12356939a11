/**
 * Reading a foreign run's folder into an imported run (issue 28): one pass reads every file of the run's format from
 * where the last pass stopped, maps each record, stores the new trajectories and then the file's new offset, and
 * updates the dashboard's per-step figures. `followImport` repeats passes until it is stopped. A malformed record is
 * counted and reported with its file and line; the rest is imported.
 */
import type { ForeignFormat, ForeignProblem, ForeignTrajectory } from '../../contracts/foreign.ts';
import { ParseError, readParquetRowGroups } from '../../server/datasets/parse.ts';
import type { Database } from '../../server/db/client.ts';
import { appendEvent } from '../../server/store/events.ts';
import { type FileProgress, readImportFiles, saveImportProgress } from '../../server/store/imports.ts';
import { logMetrics } from '../../server/store/metrics.ts';
import { readStepWithTokens, replaceTrajectoryTokens } from '../../server/store/trajectories.ts';
import { storableText } from '../../server/imports/clean-text.ts';
import { listFiles } from '../../server/imports/folder.ts';
import { sleep } from '../engines/sleep.ts';
import { type LineChunk, readLines } from './files.ts';
import {
  IMPORT_LIMITS,
  type ImportLimits,
  jsonDepthOver,
  recordExcess,
  REWARD_FILE_BYTES,
} from '../../server/imports/bounds.ts';
import { asyncBufferOf, readAll, RefusedFile, withContained } from '../../server/imports/open.ts';
import { LAYOUTS, naturalOrder } from '../../contracts/foreign-layouts.ts';
import {
  type FormatReader,
  harborRewardFile,
  readerOf,
  splitOf,
  stepOf,
  type Where,
} from '../../server/imports/readers.ts';
import { refreshSteps, storeForeign } from '../../server/imports/store-foreign.ts';
import {
  mapPrimeRlMetricsLine,
  mapPrimeRlTokenExportLine,
  type TokenExportMapped,
} from '../../server/imports/formats/prime-rl.ts';
import { tokenSequenceKey, withTrainerSide } from '../../server/imports/token-join.ts';
import type { ImportedContent } from '../../server/imports/to-store.ts';
import type { TokenRecord } from '../../contracts/trajectory.ts';

export interface ImportTarget {
  db: Database;
  runId: string;
  folder: string;
  format: ForeignFormat;
  /** TRL's reward_weights, where the run's config gives them. */
  weights?: Record<string, number>;
  /** A pass while following leaves a whole-file record that fails to read for a later pass (it may be half written). */
  following?: boolean;
  signal?: AbortSignal;
  /** Tighter limits than IMPORT_LIMITS (tests). */
  limits?: Partial<ImportLimits>;
}

export interface PassResult {
  lines: number;
  trajectories: number;
  /** The first IMPORT_LIMITS.problemsKept malformed records, with their place. */
  problems: ForeignProblem[];
  /** All malformed records, kept or not. */
  problemCount: number;
  /** Steps (by split) that gained trajectories. */
  steps: { train: Set<number>; eval: Set<number> };
}

/** At most this many problems are written to the run's log per pass; all are counted. */
const PROBLEMS_LOGGED = 50;
/** Trajectories stored per transaction. */
const BATCH = 500;

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

const limitsOf = (t: ImportTarget): ImportLimits => ({ ...IMPORT_LIMITS, ...t.limits });

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
  if (t.format === 'prime-rl') await readPrimeRlMetrics(t, done, result);
  for (const file of filesOf(t.folder, t.format, limits)) {
    if (t.signal?.aborted) break;
    const before = done.get(file) ?? { file, offset: 0, line: 0, done: false };
    if (before.done) continue;
    if (reader.kind === 'lines') await readLineFile(t, reader, file, before, result);
    else await readWholeFile(t, reader, file, result);
  }
  // After the traces, so that the trajectories a token export joins are stored.
  if (t.format === 'prime-rl') await readPrimeRlTokenExports(t, done, result);
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

async function readWholeFile(t: ImportTarget, reader: FormatReader, file: string, result: PassResult) {
  const limits = limitsOf(t);
  const problems = new Problems(result, limits.problemsKept);
  const split = splitOf(file);
  const reward = await harborReward(t, file, problems);
  const where = (line: number): Where => ({
    file,
    line,
    split,
    ...stepField(t.format, file),
    ...(reward === undefined ? {} : { reward }),
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
 * prime-rl's `metrics.jsonl` (one row per step: `step`, `time`, the trainer's and orchestrator's scalars): its
 * numeric values become the run's metrics under their own names, read by byte offsets like the traces.
 */
async function readPrimeRlMetrics(t: ImportTarget, done: Map<string, FileProgress>, result: PassResult) {
  await readSideFile(t, 'metrics.jsonl', done, result, async (record, where, problems) => {
    const m = mapPrimeRlMetricsLine(record, where);
    if (!m.ok) problems.add(m.problem);
    else await logMetrics(t.db, t.runId, m.step, m.values);
  });
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
  take: (record: unknown, where: { file: string; line: number }, problems: ProblemSink) => Promise<void>,
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

/** prime-rl's token exports (trainer.enable_token_export): one training sample per line, by step and rank. */
const TOKEN_EXPORTS = /(^|\/)token_exports\/step_\d+\/rank_\d+\.jsonl$/;

/**
 * prime-rl's token exports, read by byte offsets like the traces: each line joins the stored trajectory of its step
 * with the same token sequence (server/imports/token-join.ts) and adds the trainer's log-probs and the entropies to
 * its token record. A line that joins none (a sample of a trace not imported, or not written yet) is a problem.
 */
async function readPrimeRlTokenExports(t: ImportTarget, done: Map<string, FileProgress>, result: PassResult) {
  const files = listFiles(t.folder, limitsOf(t))
    .files.filter((f) => TOKEN_EXPORTS.test(f))
    .sort(naturalOrder);
  const steps = new Map<number, Map<string, { id: string; record: TokenRecord }>>();
  for (const file of files) {
    const read = await readSideFile(t, file, done, result, async (record, where, problems) => {
      const m = mapPrimeRlTokenExportLine(record, where);
      if (!m.ok) problems.add(m.problem);
      else await joinTokenExport(t, m, steps, where, problems);
    });
    result.lines += read;
  }
}

async function joinTokenExport(
  t: ImportTarget,
  m: Extract<TokenExportMapped, { ok: true }>,
  steps: Map<number, Map<string, { id: string; record: TokenRecord }>>,
  where: { file: string; line: number },
  problems: ProblemSink,
) {
  let index = steps.get(m.step);
  if (!index) {
    index = await tokenIndexOfStep(t, m.step);
    steps.set(m.step, index);
  }
  const hit = index.get(tokenSequenceKey(m.tokens.promptIds, m.tokens.ids));
  const joined = hit && withTrainerSide(hit.record, m.tokens);
  if (!hit)
    problems.add({
      ...where,
      reason: `no imported trajectory of step ${m.step} has this token sequence (${(m.tokens.promptIds?.length ?? 0) + m.tokens.ids.length} tokens)`,
    });
  else if (joined) {
    await replaceTrajectoryTokens(t.db, hit.id, joined);
    hit.record = joined;
  }
}

/** The stored trajectories of one step that have a token record, by the hash of their token sequence. */
async function tokenIndexOfStep(t: ImportTarget, step: number) {
  const index = new Map<string, { id: string; record: TokenRecord }>();
  for (let offset = 0; ; offset += BATCH) {
    const rows = await readStepWithTokens(t.db, t.runId, step, { withContent: true, offset, limit: BATCH });
    for (const r of rows) {
      if (!r.tokens) continue;
      const content = (r as unknown as { content: string }).content;
      const extras = (JSON.parse(content) as { imported?: ImportedContent }).imported?.tokenExtras;
      index.set(tokenSequenceKey(extras?.promptIds, r.tokens.ids), { id: r.id, record: r.tokens });
    }
    if (rows.length < BATCH) return index;
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

/** Where problems go: a pass's Problems (counted, the first ones kept). */
interface ProblemSink {
  add(p: ForeignProblem): void;
}

function collect(m: ReturnType<FormatReader['map']>, into: ForeignTrajectory[], problems: ProblemSink) {
  if (m.ok) into.push(...m.trajectories);
  else problems.add(m.problem);
}

/**
 * Harbor's reward for an ATIF trial folder, where the file is there and holds a number. It is opened like every other
 * file (contained, regular, at most REWARD_FILE_BYTES); a refusal is a problem and the trial has no reward.
 */
async function harborReward(t: ImportTarget, file: string, problems: ProblemSink): Promise<number | undefined> {
  const rel = harborRewardFile(file);
  if (!rel) return undefined;
  try {
    const n = await withContained(t.folder, rel, REWARD_FILE_BYTES, (f) => Number(readAll(f).toString('utf8').trim()));
    return Number.isFinite(n) ? n : undefined;
  } catch (e) {
    if (!(e instanceof RefusedFile)) throw e;
    if (!e.missing) problems.add({ file: rel, line: 0, reason: `${e.reason} (the trial's reward)` });
    return undefined;
  }
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
