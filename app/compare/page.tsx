import { CompareView } from '@/components/compare/compare-view.tsx';
import { parseRunIds } from '@/components/compare/selection.ts';

type Search = Record<string, string | string[] | undefined>;

/** /compare?runs=a,b,c — several runs' metrics overlaid by step, with their recipe differences. */
export default async function ComparePage({ searchParams }: { searchParams: Promise<Search> }) {
  const q = await searchParams;
  const runIds = parseRunIds(q.runs);
  // No key: the view owns the selection after the first render and writes it back to the URL itself.
  return <CompareView initialRunIds={runIds} />;
}
