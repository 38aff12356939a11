'use client';
import { skipToken, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useTRPC, useTRPCClient } from '@/lib/trpc.ts';
import { ShareButton } from '../share/share-button.tsx';
import { useDebounced } from '../ui/use-debounced.ts';
import { compareHref, tracesHref } from '../compare/selection.ts';
import { effectivePicks } from './align-runs.ts';
import { type DetailQuery, MultiTraceView } from './multi-trace-view.tsx';
import { MAX_TRACE_RUNS, MIN_TRACE_RUNS } from '../../contracts/traces.ts';
import type { TrajectoryDetail } from '../../contracts/trajectory.ts';

/** `trajectories.get` through the plain client, typed as the trace view types it (trace/trace-view.tsx says why). */
type TrajectoriesClient = { trajectories: { get: { query(input: { id: string }): Promise<TrajectoryDetail> } } };

/**
 * /compare/traces: 2–4 runs (from the compare page), a problem they hold (most shared first), then its trajectories
 * side by side. Problem and picks live in the URL, so the page is a link; "Share these traces" makes a read-only one.
 */
export function TracesPage({
  runIds,
  initialProblem,
  initialPicks,
}: {
  runIds: string[];
  initialProblem: string | null;
  initialPicks: (string | null)[];
}) {
  const trpc = useTRPC();
  const client = useTRPCClient() as unknown as TrajectoriesClient;
  const router = useRouter();
  const [problem, setProblem] = useState(initialProblem);
  const [picks, setPicks] = useState(initialPicks);
  const ok = runIds.length >= MIN_TRACE_RUNS && runIds.length <= MAX_TRACE_RUNS;

  const columns = useQuery(
    trpc.trajectories.ofProblemAcrossRuns.queryOptions(ok && problem ? { runIds, problemId: problem } : skipToken, {
      retry: false,
    }),
  );
  const shownPicks = columns.data ? effectivePicks(columns.data, picks) : [];
  const detailQuery = (id: string): DetailQuery => ({
    queryKey: ['trajectories', 'get', id],
    queryFn: () => client.trajectories.get.query({ id }),
  });

  const chooseProblem = (p: string) => {
    setProblem(p);
    setPicks([]);
    router.replace(tracesHref(runIds, p), { scroll: false });
  };
  const pick = (column: number, id: string) => {
    const next = [...shownPicks];
    next[column] = id;
    setPicks(next);
    router.replace(tracesHref(runIds, problem, next), { scroll: false });
  };

  if (!ok)
    return (
      <div>
        <h1>Trajectories side by side</h1>
        <p className="panel empty" role="status">
          Choose {MIN_TRACE_RUNS}–{MAX_TRACE_RUNS} runs on <Link href={compareHref(runIds)}>Compare</Link>, then open
          “Trajectories side by side”.
        </p>
      </div>
    );

  return (
    <div>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>Trajectories side by side</h1>
        <div className="row">
          <Link href={compareHref(runIds)}>Back to the comparison</Link>
          {problem && columns.data && (
            <ShareButton scope="traces" target={{ runIds, problemId: problem }} label="Share these traces" />
          )}
        </div>
      </div>
      <ProblemPicker runIds={runIds} problem={problem} onChoose={chooseProblem} />
      {columns.error && (
        <p className="error" role="alert">
          Could not load problem {problem}: {columns.error.message}
        </p>
      )}
      {columns.data && (
        <MultiTraceView
          columns={columns.data}
          picks={shownPicks}
          onPick={pick}
          detailQuery={detailQuery}
          trajectoryHref={(id) => `/trajectories/${encodeURIComponent(id)}`}
        />
      )}
    </div>
  );
}

/** The problems the runs hold, those in the most runs first, narrowed by a search over their ids. */
function ProblemPicker({
  runIds,
  problem,
  onChoose,
}: {
  runIds: string[];
  problem: string | null;
  onChoose: (problemId: string) => void;
}) {
  const trpc = useTRPC();
  const [search, setSearch] = useState('');
  // One query once the typing pauses, not one per keystroke (each is a groupBy over the runs' trajectories).
  const settled = useDebounced(search, 300);
  const problems = useQuery(
    trpc.trajectories.problemsAcrossRuns.queryOptions(
      { runIds, search: settled || undefined },
      { retry: false, placeholderData: (previous) => previous },
    ),
  );
  return (
    <section className="panel" aria-label="Choose a problem" style={{ marginBottom: 12 }}>
      <div className="row">
        <input
          type="search"
          aria-label="Filter problems"
          placeholder="Problem id contains…"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
        />
        <select
          aria-label="Problem"
          value={problem ?? ''}
          onChange={(e) => onChoose(e.target.value)}
          disabled={!problems.data?.length}
        >
          <option value="" disabled>
            {problems.data?.length === 0 ? 'No problem in these runs' : 'Choose a problem…'}
          </option>
          {problem && !problems.data?.some((p) => p.problemId === problem) && (
            <option value={problem}>{problem}</option>
          )}
          {problems.data?.map((p) => (
            <option key={p.problemId} value={p.problemId}>
              {p.problemId} — in {p.runs} of {runIds.length} runs
            </option>
          ))}
        </select>
      </div>
      {problems.error && (
        <p className="error" role="alert">
          Could not list problems: {problems.error.message}
        </p>
      )}
    </section>
  );
}
