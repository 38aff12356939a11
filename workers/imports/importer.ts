/**
 * Reading a foreign run's folder into an imported run (issue 28): one pass reads every file of the run's format from
 * where the last pass stopped, maps each record, stores the new trajectories and then the file's new offset, and
 * updates the dashboard's per-step figures. `followImport` repeats passes until it is stopped. A malformed record is
 * counted and reported with its file and line; the rest is imported.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ForeignFormat, ForeignProblem, ForeignTrajectory } from '../../contracts/foreign.ts';
import { readParquetRowGroups } from '../../server/datasets/parse.ts';
import type { Database } from '../../server/db/client.ts';
import { appendEvent } from '../../server/store/events.ts';
import { type FileProgress, readImportFiles, saveImportProgress } from '../../server/store/imports.ts';
import { logMetrics } from '../../server/store/metrics.ts';
import { readStepWithTokens, replaceTrajectoryTokens } from '../../server/store/trajectories.ts';
import { listFiles } from '../../server/imports/folder.ts';
import { sleep } from '../engines/sleep.ts';
import { readLines, statOf } from './files.ts';
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
}

export interface PassResult {
  lines: number;
  trajectories: number;
  problems: ForeignProblem[];
  /** Steps (by split) that gained trajectories. */
  steps: { train: Set<number>; eval: Set<number> };
}

/** At most this many problems are written to the run's log per pass; all are counted. */
const PROBLEMS_LOGGED = 50;
/** Trajectories stored per transaction. */
const BATCH = 500;
/** A JSON document larger than this is refused: it is read whole (Parquet is read a row group at a time). */
const MAX_JSON_FILE = 512 * 1024 * 1024;

/** The files of the run's format in the folder, in natural order (step_9 before step_10). */
export function filesOf(folder: string, format: ForeignFormat): string[] {
  return listFiles(folder)
    .files.filter((f) => LAYOUTS[format].test(f))
    .sort(naturalOrder);
}

export async function importPass(t: ImportTarget): Promise<PassResult> {
  const reader = readerOf(t.format);
  const done = await readImportFiles(t.db, t.runId);
  const result: PassResult = { lines: 0, trajectories: 0, problems: [], steps: { train: new Set(), eval: new Set() } };
  if (t.format === 'prime-rl') await readPrimeRlMetrics(t, done, result);
  for (const file of filesOf(t.folder, t.format)) {
    if (t.signal?.aborted) break;
    const before = done.get(file) ?? { file, offset: 0, line: 0, done: false };
    if (before.done) continue;
    const abs = path.join(t.folder, file);
    if (reader.kind === 'lines') await readLineFile(t, reader, file, abs, before, result);
    else await readWholeFile(t, reader, file, abs, result);
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
  abs: string,
  from: FileProgress,
  result: PassResult,
) {
  let at = from;
  for (;;) {
    if (t.signal?.aborted) return;
    const chunk = readLines(abs, at);
    if (!chunk || (chunk.lines.length === 0 && chunk.offset === at.offset)) return;
    const split = splitOf(file);
    const mapped: ForeignTrajectory[] = [];
    const problems: ForeignProblem[] = [];
    for (const { record, line } of jsonRecords(file, chunk.lines, problems)) {
      const where: Where = { file, line, split, ...stepField(t.format, file) };
      collect(reader.map(record, where), mapped, problems);
    }
    const stored = await store(t, mapped, result);
    await noteProblems(t, problems, result);
    at = { file, offset: chunk.offset, line: chunk.line, done: false };
    await saveImportProgress(t.db, t.runId, at, {
      lines: chunk.lines.length,
      trajectories: stored,
      problems: problems.length,
    });
    result.lines += chunk.lines.length;
  }
}

/** A file that could not be read or parsed, as against a failure to store what was read. */
class Unreadable extends Error {}

/** `fn`'s result; its failure as Unreadable. */
async function reading<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw new Unreadable((e as Error).message);
  }
}

async function readWholeFile(t: ImportTarget, reader: FormatReader, file: string, abs: string, result: PassResult) {
  const st = statOf(abs);
  if (!st) return;
  const problems: ForeignProblem[] = [];
  const split = splitOf(file);
  const reward = await harborReward(t.folder, file);
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
  const take = async (rows: { record: unknown; line: number }[]) => {
    const mapped: ForeignTrajectory[] = [];
    for (const { record, line } of rows) collect(reader.map(record, where(line)), mapped, problems);
    stored += await store(t, mapped, result);
    records += rows.length;
  };
  try {
    if (reader.kind === 'parquet') {
      // A row group at a time: a file of any size in the memory of its largest group.
      const { asyncBufferFromFile } = await import('hyparquet');
      const groups = readParquetRowGroups(await reading(() => asyncBufferFromFile(abs)));
      for (;;) {
        const next = await reading(() => groups.next());
        if (next.done) break;
        await take(next.value.map((r) => ({ record: r.data, line: r.row })));
      }
    } else if (st.size > MAX_JSON_FILE)
      problems.push({ file, line: 0, reason: `larger than ${MAX_JSON_FILE} bytes (a JSON document is read whole)` });
    else await take([{ record: await reading(() => JSON.parse(fs.readFileSync(abs, 'utf8')) as unknown), line: 0 }]);
  } catch (e) {
    // Only the file's own failure ends it as a problem: one in storing what was read propagates (the job retries;
    // the file is not marked read).
    if (!(e instanceof Unreadable)) throw e;
    // While following, a file that does not read yet may still be being written: the next pass reads it again (what
    // this one stored is found stored by its ids).
    if (t.following) return;
    problems.push({ file, line: 0, reason: `unreadable: ${e.message.split('\n')[0]}` });
  }
  await noteProblems(t, problems, result);
  await saveImportProgress(
    t.db,
    t.runId,
    { file, offset: st.size, line: records, done: true },
    { lines: records, trajectories: stored, problems: problems.length },
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
    if (!m.ok) problems.push(m.problem);
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
  take: (record: unknown, where: { file: string; line: number }, problems: ForeignProblem[]) => Promise<void>,
): Promise<number> {
  let at = done.get(file) ?? { file, offset: 0, line: 0, done: false };
  let read = 0;
  for (;;) {
    if (t.signal?.aborted) return read;
    const chunk = readLines(path.join(t.folder, file), at);
    if (!chunk || (chunk.lines.length === 0 && chunk.offset === at.offset)) return read;
    const problems: ForeignProblem[] = [];
    for (const { record, line } of jsonRecords(file, chunk.lines, problems))
      await take(record, { file, line }, problems);
    await noteProblems(t, problems, result);
    at = { file, offset: chunk.offset, line: chunk.line, done: false };
    await saveImportProgress(t.db, t.runId, at, {
      lines: chunk.lines.length,
      trajectories: 0,
      problems: problems.length,
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
  const files = listFiles(t.folder)
    .files.filter((f) => TOKEN_EXPORTS.test(f))
    .sort(naturalOrder);
  const steps = new Map<number, Map<string, { id: string; record: TokenRecord }>>();
  for (const file of files) {
    const read = await readSideFile(t, file, done, result, async (record, where, problems) => {
      const m = mapPrimeRlTokenExportLine(record, where);
      if (!m.ok) problems.push(m.problem);
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
  problems: ForeignProblem[],
) {
  let index = steps.get(m.step);
  if (!index) {
    index = await tokenIndexOfStep(t, m.step);
    steps.set(m.step, index);
  }
  const hit = index.get(tokenSequenceKey(m.tokens.promptIds, m.tokens.ids));
  const joined = hit && withTrainerSide(hit.record, m.tokens);
  if (!hit)
    problems.push({
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

/** Each line parsed as JSON; a line that is not JSON is a problem naming its file and line, and is skipped. */
function* jsonRecords(file: string, lines: { text: string; line: number }[], problems: ForeignProblem[]) {
  for (const { text, line } of lines) {
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch (e) {
      problems.push({ file, line, reason: `not JSON: ${(e as Error).message}` });
      continue;
    }
    yield { record, line };
  }
}

function stepField(format: ForeignFormat, file: string): { step?: number } {
  const step = stepOf(format, file);
  return step === undefined ? {} : { step };
}

function collect(m: ReturnType<FormatReader['map']>, into: ForeignTrajectory[], problems: ForeignProblem[]) {
  if (m.ok) into.push(...m.trajectories);
  else problems.push(m.problem);
}

/** Harbor's reward for an ATIF trial folder, where the file is there and holds a number. */
async function harborReward(folder: string, file: string): Promise<number | undefined> {
  const rel = harborRewardFile(file);
  if (!rel) return undefined;
  try {
    const n = Number(fs.readFileSync(path.join(folder, rel), 'utf8').trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
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

async function noteProblems(t: ImportTarget, problems: ForeignProblem[], result: PassResult) {
  for (const p of problems) {
    if (result.problems.length < PROBLEMS_LOGGED)
      await appendEvent(t.db, t.runId, {
        type: 'import_problem',
        level: 'warn',
        message: `${p.file}${p.line ? `:${p.line}` : ''}: ${p.reason} (skipped; the rest is imported)`,
        data: p,
      });
    result.problems.push(p);
  }
}

/** Passes until `signal` aborts, one every `pollMs` (sooner after a pass that found something). */
export async function followImport(t: ImportTarget & { signal: AbortSignal; pollMs: number }) {
  const target = { ...t, following: true };
  while (!t.signal.aborted) {
    const r = await importPass(target);
    if (r.lines === 0) await sleep(t.pollMs, t.signal);
  }
}
