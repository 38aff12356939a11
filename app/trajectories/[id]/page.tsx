import { TraceView } from '@/components/trace/trace-view.tsx';
import { parseSpeed, parseT } from '@/components/trace/replay.ts';
import { parseMode } from '@/components/trace/token-scale.ts';

type Search = Record<string, string | string[] | undefined>;
const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? null;

/**
 * /trajectories/<id>[?compare=<id>][&t=<ms>][&speed=1|2|4|8][&view=tokens]. The query is read here once, as the replay's starting
 * point; after that the client owns the position and writes it back to the URL itself.
 */
export default async function TrajectoryPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Search>;
}) {
  const { id } = await params;
  const q = await searchParams;
  const compare = first(q.compare)?.trim() || null;
  return (
    <TraceView
      key={`${id}|${compare ?? ''}`}
      id={id}
      compareId={compare}
      initialT={parseT(first(q.t))}
      initialSpeed={parseSpeed(first(q.speed))}
      initialMode={parseMode(first(q.view))}
    />
  );
}
