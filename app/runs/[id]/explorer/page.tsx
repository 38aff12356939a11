import Link from 'next/link';
import { RolloutExplorer } from '@/components/explorer/rollout-explorer.tsx';

type Search = Record<string, string | string[] | undefined>;

/** /runs/<id>/explorer[?step=N]: every stored rollout of a run, step by step. */
export default async function RunExplorerPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Search>;
}) {
  const { id } = await params;
  const q = await searchParams;
  const raw = Array.isArray(q.step) ? q.step[0] : q.step;
  const step = raw !== undefined && /^-?\d+$/.test(raw) ? Number(raw) : null;
  return (
    <div>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>Rollout explorer</h1>
        <Link href={`/runs/${encodeURIComponent(id)}`}>Back to run {id}</Link>
      </div>
      <RolloutExplorer runId={id} initialStep={step} />
    </div>
  );
}
