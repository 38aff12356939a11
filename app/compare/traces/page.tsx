import { parseRunIds } from '@/components/compare/selection.ts';
import { parsePicks } from '@/components/traces/align-runs.ts';
import { TracesPage } from '@/components/traces/traces-page.tsx';

type Search = Record<string, string | string[] | undefined>;
const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? null;

/** /compare/traces?runs=a,b[,c,d]&problem=p[&pick=t1,t2] — one prompt's trajectories from 2–4 runs, side by side. */
export default async function CompareTracesPage({ searchParams }: { searchParams: Promise<Search> }) {
  const q = await searchParams;
  const runIds = parseRunIds(q.runs);
  const problem = first(q.problem)?.trim() || null;
  // No key: the page owns problem and picks after the first render and writes them back to the URL itself.
  return <TracesPage runIds={runIds} initialProblem={problem} initialPicks={parsePicks(q.pick, runIds.length)} />;
}
