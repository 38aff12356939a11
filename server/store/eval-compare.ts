/**
 * Paired comparison of two evaluations (two steps of a run, or two runs) from their stored EvalResult rows: the
 * problems both scored, pass@1 of each and the difference b − a with its bootstrap interval (contracts/intervals.ts).
 */
import type { Database } from '../db/client.ts';
import { pairedComparison, type Interval, type PairedComparison, type ProblemScore } from '../../contracts/intervals.ts';
import { listEvalResults } from './evals.ts';

export interface EvalSide { runId: string; step?: number }
export interface BenchmarkComparison {
  benchmark: string;
  a: { pass1: number; ci: Interval | null; problems: number };
  b: { pass1: number; ci: Interval | null; problems: number };
  /** null with `why` when the two share no problem or an evaluation predates per-problem scores. */
  paired: PairedComparison | null;
  why?: string;
}
export interface EvalComparison { a: { runId: string; step: number | null }; b: { runId: string; step: number | null }; benchmarks: BenchmarkComparison[] }

interface Details { problems?: number; pass1Ci?: Interval; perProblem?: ProblemScore[] }

async function side(db: Database, s: EvalSide) {
  const rows = await listEvalResults(db, s.runId);
  const step = s.step ?? (rows.length ? Math.max(...rows.map((r) => r.step)) : null);
  const at = rows.filter((r) => r.step === step).map((r) => ({ ...r, d: (r.details ? JSON.parse(r.details) : {}) as Details }));
  return { step, at };
}

export async function pairedEvalComparison(db: Database, a: EvalSide, b: EvalSide): Promise<EvalComparison> {
  const [sa, sb] = await Promise.all([side(db, a), side(db, b)]);
  const benchmarks: BenchmarkComparison[] = [];
  for (const ra of sa.at) {
    const rb = sb.at.find((r) => r.benchmark === ra.benchmark);
    if (!rb) continue;
    const view = (r: typeof ra) => ({ pass1: r.pass1, ci: r.d.pass1Ci ?? null, problems: r.d.problems ?? 0 });
    const base = { benchmark: ra.benchmark, a: view(ra), b: view(rb) };
    if (!ra.d.perProblem || !rb.d.perProblem) { benchmarks.push({ ...base, paired: null, why: 'evaluated before per-problem scores were kept' }); continue; }
    const paired = pairedComparison(ra.d.perProblem, rb.d.perProblem);
    benchmarks.push(paired ? { ...base, paired } : { ...base, paired: null, why: 'no problem in common' });
  }
  return { a: { runId: a.runId, step: sa.step }, b: { runId: b.runId, step: sb.step }, benchmarks };
}
