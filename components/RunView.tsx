'use client';
import { skipToken, useMutation, useQuery } from '@tanstack/react-query';
import { useSubscription } from '@trpc/tanstack-react-query';
import { useEffect, useRef, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { MetricChart, type Series } from './MetricChart.tsx';
import { StatusBadge } from './StatusBadge.tsx';
import { TerminalPane, type TerminalHandle } from './TerminalPane.tsx';
import { eventLine, formatTime } from './format.ts';
import { mergePoints } from './mergePoints.ts';

type MetricEventData = { step: number; time: number; values: Record<string, number> };

/**
 * A run's live page: a snapshot as of event seq N, then the event stream from N. The stream resumes from the
 * last seq it saw after a reconnect, so the log and the chart neither miss nor repeat anything.
 */
export function RunView({ runId }: { runId: string }) {
  const trpc = useTRPC();
  const snapshot = useQuery(trpc.runs.snapshot.queryOptions({ runId, logTail: 1000 }, { staleTime: Infinity, refetchOnWindowFocus: false, retry: false }));
  const terminal = useRef<TerminalHandle>(null);
  const [series, setSeries] = useState<Series>({});
  const [status, setStatus] = useState<{ status: string; error: string | null } | null>(null);
  const [lastSeq, setLastSeq] = useState(0);
  // The seq of the snapshot the page was seeded from: the stream starts there. Kept apart from snapshot.data,
  // which is refetched (for the run's step, start and finish times) without moving the stream.
  const [cursor, setCursor] = useState<number | null>(null);

  useEffect(() => {
    const data = snapshot.data;
    if (!data || cursor !== null) return;
    setSeries(data.metrics);
    setStatus({ status: data.run.status, error: data.run.error });
    setLastSeq(data.lastSeq);
    for (const e of data.events) terminal.current?.writeLine(eventLine(e));
    setCursor(data.lastSeq);
  }, [snapshot.data, cursor]);

  const current = status?.status ?? snapshot.data?.run.status ?? 'loading';
  const finished = ['succeeded', 'failed', 'cancelled'].includes(current);
  // The header's run row (step, times) is polled while the run is live; the log and chart come from the stream.
  const runRow = useQuery(trpc.runs.get.queryOptions({ runId }, { enabled: cursor !== null, refetchInterval: finished ? false : 2000 }));

  // A finished run writes no more events: stop streaming then (the last event seen is its final status).
  const stream = useSubscription(
    trpc.runs.events.subscriptionOptions(cursor !== null && !finished ? { runId, cursor } : skipToken, {
      onData: ({ data: e }) => {
        terminal.current?.writeLine(eventLine(e));
        setLastSeq(e.seq);
        if (e.type === 'metric' && e.data) {
          const m = e.data as MetricEventData;
          setSeries((prev) => {
            const next = { ...prev };
            for (const [key, value] of Object.entries(m.values)) next[key] = mergePoints(prev[key] ?? [], [{ step: m.step, value, time: m.time }]);
            return next;
          });
        }
        if (e.type === 'status' && e.data) {
          const s = e.data as { status: string; error: string | null };
          setStatus({ status: s.status, error: s.error });
          void runRow.refetch();
        }
      },
    }),
  );

  const cancel = useMutation(trpc.runs.cancel.mutationOptions());

  if (snapshot.error && !snapshot.data) return <div className="panel error" role="alert">Could not load run {runId}: {snapshot.error.message}</div>;
  const run = runRow.data ?? snapshot.data?.run;
  return (
    <div>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>{run ? run.name : 'Run'}</h1>
        <div className="row">
          <StatusBadge status={current} />
          <span className="muted" aria-label="Stream state">{finished ? 'finished' : stream.status === 'pending' ? 'live' : stream.status}</span>
          <button className="danger" onClick={() => cancel.mutate({ runId })} disabled={finished || cancel.isPending} aria-label="Cancel run">Cancel</button>
        </div>
      </div>
      {run && (
        <p className="muted">
          {run.kind} · seed {run.seed} · code {run.codeVersion} · step {run.step}{run.totalSteps ? ` / ${run.totalSteps}` : ''} · started {formatTime(run.startedAt)} · event #{lastSeq}
        </p>
      )}
      {status?.error && <p className="error" role="alert">Error: {status.error}</p>}
      {stream.error && <p className="error" role="alert">Live updates interrupted: {stream.error.message}</p>}
      <div className="grid2">
        <section aria-label="Run log">
          <h2>Log</h2>
          <TerminalPane ref={terminal} label="Run log terminal" />
        </section>
        <section aria-label="Run metrics">
          <h2>Metrics</h2>
          <MetricChart series={series} title="Run metrics chart" />
        </section>
      </div>
    </div>
  );
}
