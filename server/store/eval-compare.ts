/**
 * Paired comparison of two evaluations (two steps of a run, or two runs) from their stored EvalResult rows: the
 * problems both scored, pass@1 of each and the difference b − a with its bootstrap interval (contracts/intervals.ts).
 */
import type { Database } from '../db/client.ts';
import {
  pairedComparison,
  type Interval,
  type PairedComparison,
  type ProblemScore,
} from '../../contracts/intervals.ts';
import { listEvalResults } from './evals.ts';

export interface EvalSide {
  runId: string;
  step?: number;
}
export interface BenchmarkComparison {
  benchmark: string;
  a: { pass1: number; ci: Interval | null; problems: number };
  b: { pass1: number; ci: Interval | null; problems: number };
  /** null with `why` when the two share no problem or an evaluation predates per-problem scores. */
  paired: PairedComparison | null;
  why?: string;
}
export interface EvalComparison {
  a: { runId: string; step: number | null };
  b: { runId: string; step: number | null };
  benchmarks: BenchmarkComparison[];
}

interface Details {
  problems?: number;
  pass1Ci?: Interval;
  perProblem?: ProblemScore[];
}
/** The EvalResult fields a comparison reads. */
export interface EvalRowLike {
  step: number;
  benchmark: string;
  pass1: number;
  details: string | null;
}

/** One step's rows of a run's evaluation rows (`step` omitted: the latest evaluated step). */
export function rowsAtStep<R extends EvalRowLike>(rows: R[], step?: number): { step: number | null; at: R[] } {
  const s = step ?? (rows.length ? Math.max(...rows.map((r) => r.step)) : null);
  return { step: s, at: rows.filter((r) => r.step === s) };
}

/** Benchmark by benchmark, b − a on the problems both scored. Pure. */
export function compareEvalRows(rowsA: EvalRowLike[], rowsB: EvalRowLike[]): BenchmarkComparison[] {
  const parse = (r: EvalRowLike) => ({ ...r, d: (r.details ? JSON.parse(r.details) : {}) as Details });
  const [sa, sb] = [rowsA.map(parse), rowsB.map(parse)];
  const benchmarks: BenchmarkComparison[] = [];
  for (const ra of sa) {
    const rb = sb.find((r) => r.benchmark === ra.benchmark);
    if (!rb) continue;
    const view = (r: typeof ra) => ({ pass1: r.pass1, ci: r.d.pass1Ci ?? null, problems: r.d.problems ?? 0 });
    const base = { benchmark: ra.benchmark, a: view(ra), b: view(rb) };
    if (!ra.d.perProblem || !rb.d.perProblem) {
      benchmarks.push({ ...base, paired: null, why: 'evaluated before per-problem scores were kept' });
      continue;
    }
    const paired = pairedComparison(ra.d.perProblem, rb.d.perProblem);
    benchmarks.push(paired ? { ...base, paired } : { ...base, paired: null, why: 'no problem in common' });
  }
  return benchmarks;
}

export async function pairedEvalComparison(db: Database, a: EvalSide, b: EvalSide): Promise<EvalComparison> {
  const [ra, rb] = await Promise.all([listEvalResults(db, a.runId), listEvalResults(db, b.runId)]);
  const [sa, sb] = [rowsAtStep(ra, a.step), rowsAtStep(rb, b.step)];
  return {
    a: { runId: a.runId, step: sa.step },
    b: { runId: b.runId, step: sb.step },
    benchmarks: compareEvalRows(sa.at, sb.at),
  };
}
