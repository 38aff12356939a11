/**
 * Imported runs: the run's source folder and format, and how far each of its files has been read. The
 * trajectories themselves go through server/store/trajectories.ts like any run's.
 */
import { FORMAT_FROM_LAYOUT, type ForeignFormat, type ImportFormat } from '../../contracts/foreign.ts';
import type { Database } from '../db/client.ts';
import { createRun, setRunStatus } from './runs.ts';

export interface NewImport {
  name: string;
  /** FORMAT_FROM_LAYOUT: the import job finds it (setImportFormat). */
  format: ImportFormat;
  /** The folder, after symlinks. */
  path: string;
  frameworkVersion?: string | null;
  follow: boolean;
  createdBy?: string | null;
  /** A worker's job will read it: the run waits, queued, until a side slot takes the job (workers/lanes.ts). */
  queued?: boolean;
}

/**
 * An imported run: kind "import", queued until a worker takes its job, then running while it is read (or followed),
 * with its source beside it.
 */
export async function createImportRun(db: Database, input: NewImport) {
  const run = await createRun(db, {
    name: input.name,
    kind: 'import',
    recipeSpec: {
      imported: { format: input.format, path: input.path, frameworkVersion: input.frameworkVersion ?? null },
    },
    seed: 0,
    createdBy: input.createdBy ?? null,
  });
  await db.prisma.importSource.create({
    data: {
      runId: run.id,
      format: input.format,
      path: input.path,
      frameworkVersion: input.frameworkVersion ?? null,
      follow: input.follow,
    },
  });
  const what = `${rolloutsOf(input.format)} from ${input.path}${input.follow ? ' (to follow)' : ''}`;
  await setRunStatus(db, run.id, input.queued ? 'queued' : 'running', {
    message: input.queued ? `waiting for a worker's import slot: ${what}` : `importing ${what}`,
  });
  return run;
}

function rolloutsOf(format: ImportFormat): string {
  return format === FORMAT_FROM_LAYOUT ? 'rollouts (format from the layout)' : `${format} rollouts`;
}

/**
 * The format the import job found from the folder's layout. The run's spec keeps what the run was started with (a
 * run's spec is frozen when it is created); pages read the source's (runs.get's `importFormat`).
 */
export async function setImportFormat(db: Database, runId: string, format: ForeignFormat) {
  await db.prisma.importSource.update({ where: { runId }, data: { format } });
}

export function getImportSource(db: Database, runId: string) {
  return db.prisma.importSource.findUnique({ where: { runId } });
}

/** Whether each of these imported runs is to be followed, and its format (runs that are not imports are absent). */
export async function importStates(
  db: Database,
  runIds: string[],
): Promise<Map<string, { follow: boolean; format: string }>> {
  if (runIds.length === 0) return new Map();
  const rows = await db.prisma.importSource.findMany({
    where: { runId: { in: runIds } },
    select: { runId: true, follow: true, format: true },
  });
  return new Map(rows.map((r) => [r.runId, { follow: r.follow, format: r.format }]));
}

export function setImportFollow(db: Database, runId: string, follow: boolean) {
  return db.prisma.importSource.update({ where: { runId }, data: { follow } });
}

export interface FileProgress {
  file: string;
  /** Bytes taken: the end of the last whole line read (JSONL), or the size of a whole-file record once read. */
  offset: number;
  /** Lines (or records) taken so far. */
  line: number;
  done: boolean;
}

export async function readImportFiles(db: Database, runId: string): Promise<Map<string, FileProgress>> {
  const rows = await db.prisma.importFile.findMany({ where: { runId } });
  return new Map(rows.map((r) => [r.file, { file: r.file, offset: r.offset, line: r.line, done: r.done }]));
}

/**
 * Record how far a file has been read and what it gave. Written after the file's trajectories are stored: a crash
 * in between re-reads those lines, whose trajectories are then found stored already (ids are stable) and skipped.
 */
export async function saveImportProgress(
  db: Database,
  runId: string,
  p: FileProgress,
  counts: { lines: number; trajectories: number; problems: number },
) {
  await db.prisma.$transaction([
    db.prisma.importFile.upsert({
      where: { runId_file: { runId, file: p.file } },
      create: { runId, file: p.file, offset: p.offset, line: p.line, done: p.done },
      update: { offset: p.offset, line: p.line, done: p.done },
    }),
    db.prisma.importSource.update({
      where: { runId },
      data: {
        lines: { increment: counts.lines },
        trajectories: { increment: counts.trajectories },
        problems: { increment: counts.problems },
      },
    }),
  ]);
}

/** Which of these trajectory ids are stored already (a re-read line, or a batch the ingest API was sent twice). */
export async function storedTrajectoryIds(db: Database, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db.prisma.trajectory.findMany({
      where: { id: { in: ids.slice(i, i + 500) } },
      select: { id: true },
    });
    for (const r of rows) found.add(r.id);
  }
  return found;
}

/** Per step of one split: trajectories, mean reward, mean response tokens, turns and tool calls (the dashboard's). */
export async function importedStepAggregates(db: Database, runId: string, split: string, steps: number[]) {
  if (steps.length === 0) return [];
  const groups = await db.prisma.trajectory.groupBy({
    by: ['step'],
    where: { runId, split, step: { in: steps } },
    _count: { _all: true },
    _avg: { reward: true, responseTokens: true, turns: true, toolCalls: true },
  });
  const problems = await db.prisma.trajectory.groupBy({
    by: ['step', 'groupId'],
    where: { runId, split, step: { in: steps } },
  });
  const perStep = new Map<number, number>();
  for (const p of problems) perStep.set(p.step, (perStep.get(p.step) ?? 0) + 1);
  return groups.map((g) => ({
    step: g.step,
    count: g._count._all,
    groups: perStep.get(g.step) ?? 0,
    reward: g._avg.reward ?? 0,
    responseTokens: g._avg.responseTokens ?? 0,
    turns: g._avg.turns ?? 0,
    toolCalls: g._avg.toolCalls ?? 0,
  }));
}
