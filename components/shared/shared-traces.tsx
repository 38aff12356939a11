'use client';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC, useTRPCClient } from '@/lib/trpc.ts';
import { errorCode } from '../ui/error-code.ts';
import { type DetailQuery, MultiTraceView } from '../traces/multi-trace-view.tsx';
import { effectivePicks } from '../traces/align-runs.ts';
import type { TrajectoryDetail } from '../../contracts/trajectory.ts';
import { SharedError, SharedNotFound } from './shared-states.tsx';

/** share.view.trajectory through the plain client, typed as the trace view types it (trace/trace-view.tsx). */
type ShareClient = {
  share: { view: { trajectory: { query(input: { token: string; trajectoryId: string }): Promise<TrajectoryDetail> } } };
};

/** A shared trace view: the link's problem in each of its runs, side by side; the columns' pickers stay on the link. */
export function SharedTraces({ token, problemId }: { token: string; problemId: string }) {
  const trpc = useTRPC();
  const client = useTRPCClient() as unknown as ShareClient;
  const [picks, setPicks] = useState<(string | null)[]>([]);
  const columns = useQuery(
    trpc.share.view.problemTrajectories.queryOptions(
      { token },
      { retry: false, staleTime: Number.POSITIVE_INFINITY, refetchOnWindowFocus: false },
    ),
  );
  if (columns.error)
    return errorCode(columns.error) === 'NOT_FOUND' ? (
      <SharedNotFound />
    ) : (
      <SharedError what="the trace view" message={columns.error.message} retry={() => void columns.refetch()} />
    );
  if (!columns.data)
    return (
      <div className="panel empty" role="status">
        Loading trajectories…
      </div>
    );
  const shown = effectivePicks(columns.data, picks);
  const detailQuery = (trajectoryId: string): DetailQuery => ({
    queryKey: ['share', 'view', 'trajectory', token, trajectoryId],
    queryFn: () => client.share.view.trajectory.query({ token, trajectoryId }),
  });
  return (
    <>
      <h1>
        Problem <code>{problemId}</code> in {columns.data.length} runs
      </h1>
      <MultiTraceView
        columns={columns.data}
        picks={shown}
        onPick={(i, id) => setPicks(shown.map((p, j) => (j === i ? id : p)))}
        detailQuery={detailQuery}
      />
    </>
  );
}
