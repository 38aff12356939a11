/** EvalResult rows: one per benchmark and evaluated step of a run, `details` holding the full summary as JSON. */
import type { Database } from '../db/client.ts';
import { newId } from '../ids.ts';

export interface NewEvalResult {
  runId: string;
  step: number;
  benchmark: string;
  k: number;
  pass1: number;
  passK: number;
  meanLength: number;
  toolCalls: number;
  toolErrors: number;
  details: unknown;
}

/** A run's evaluation rows, by step then benchmark (`details` still JSON text). */
export function listEvalResults(db: Database, runId: string) {
  return db.prisma.evalResult.findMany({ where: { runId }, orderBy: [{ step: 'asc' }, { benchmark: 'asc' }] });
}

/** The row of one benchmark at one step of a run, if it was evaluated already (null otherwise). */
export function findEvalResult(db: Database, q: { runId: string; benchmark: string; step: number }) {
  return db.prisma.evalResult.findFirst({ where: { runId: q.runId, benchmark: q.benchmark, step: q.step } });
}

/** Store one benchmark's result; `details` is stored as JSON. */
export async function insertEvalResult(db: Database, r: NewEvalResult): Promise<void> {
  await db.prisma.evalResult.create({
    data: {
      id: newId('ev_'),
      runId: r.runId,
      step: r.step,
      benchmark: r.benchmark,
      k: r.k,
      pass1: r.pass1,
      passK: r.passK,
      meanLength: r.meanLength,
      toolCalls: r.toolCalls,
      toolErrors: r.toolErrors,
      details: JSON.stringify(r.details),
    },
  });
}

/** Store or replace one benchmark's row at one step (an imported run's validation, recomputed as lines arrive). */
export async function upsertEvalResult(
  db: Database,
  r: Omit<NewEvalResult, 'passK' | 'meanLength' | 'toolCalls' | 'toolErrors'> & {
    passK: number | null;
    meanLength: number | null;
    toolCalls: number | null;
    toolErrors: number | null;
  },
): Promise<void> {
  const data = {
    k: r.k,
    pass1: r.pass1,
    passK: r.passK,
    meanLength: r.meanLength,
    toolCalls: r.toolCalls,
    toolErrors: r.toolErrors,
    details: JSON.stringify(r.details),
  };
  const found = await findEvalResult(db, r);
  if (found) await db.prisma.evalResult.update({ where: { id: found.id }, data });
  else
    await db.prisma.evalResult.create({
      data: { id: newId('ev_'), runId: r.runId, step: r.step, benchmark: r.benchmark, ...data },
    });
}
