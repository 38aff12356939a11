'use client';
import { skipToken, useQuery } from '@tanstack/react-query';
import { useSubscription } from '@trpc/tanstack-react-query';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { isEvent } from '../../contracts/events.ts';
import { stageBoundaries } from '../../contracts/recipe.ts';
import { isFinished } from '../../contracts/runs.ts';
import { eventLine } from '../ui/format.ts';
import { mergePoints } from '../ui/merge-points.ts';
import type { Series } from '../ui/metric-chart.tsx';
import type { TerminalHandle } from '../ui/terminal-pane.tsx';
import { mergeStageEvents } from './dashboard.ts';
import { type AnyEvent, useRunEvents } from './use-run-events.ts';

/**
 * A run's live page state: a snapshot as of event seq N, then the event stream from N. The stream resumes from the
 * last seq it saw after a reconnect, so the log and the chart neither miss nor repeat anything. The log goes
 * straight to the terminal (`terminal`), the rest into state.
 */
export function useRunView(runId: string) {
  const trpc = useTRPC();
  const snapshot = useQuery(
    trpc.runs.snapshot.queryOptions(
      { runId, logTail: 1000 },
      { staleTime: Infinity, refetchOnWindowFocus: false, retry: false },
    ),
  );
  const terminal = useRef<TerminalHandle>(null);
  const [series, setSeries] = useState<Series>({});
  const [status, setStatus] = useState<{ status: string; error: string | null } | null>(null);
  const [lastSeq, setLastSeq] = useState(0);
  const events = useRunEvents();
  const { apply, clearBoard } = events;
  // The seq of the snapshot the page was seeded from: the stream starts there. Kept apart from snapshot.data,
  // which is refetched (for the run's step, start and finish times) without moving the stream.
  const [cursor, setCursor] = useState<number | null>(null);

  useEffect(() => {
    const data = snapshot.data;
    if (!data || cursor !== null) return;
    setSeries(data.metrics);
    setStatus({ status: data.run.status, error: data.run.error });
    setLastSeq(data.lastSeq);
    for (const e of data.events) {
      terminal.current?.writeLine(eventLine(e));
      apply(e as AnyEvent, false);
    }
    setCursor(data.lastSeq);
  }, [snapshot.data, cursor, apply]);

  const streamed = status?.status ?? snapshot.data?.run.status ?? 'loading';
  // The header's run row (step, times) is polled while the run is live; the log and chart come from the stream.
  const runRow = useQuery(
    trpc.runs.get.queryOptions(
      { runId },
      { enabled: cursor !== null, refetchInterval: isFinished(streamed) ? false : 2000 },
    ),
  );
  // A run the poll finds finished is finished, even if its last status event was not streamed to this page.
  const polled = runRow.data?.status;
  const current = polled && isFinished(polled) && !isFinished(streamed) ? polled : streamed;
  const finished = isFinished(current);

  // A finished run writes no more events: stop streaming once its final status event has arrived — not when the
  // poll finds it finished first, or the events still in flight (the run's last lines) would never be shown.
  const stream = useSubscription(
    trpc.runs.events.subscriptionOptions(cursor !== null && !isFinished(streamed) ? { runId, cursor } : skipToken, {
      onData: ({ data: e }) => {
        terminal.current?.writeLine(eventLine(e));
        setLastSeq(e.seq);
        if (isEvent(e, 'metric') && e.data) {
          const m = e.data;
          setSeries((prev) => {
            const next = { ...prev };
            for (const [key, value] of Object.entries(m.values))
              next[key] = mergePoints(prev[key] ?? [], [{ step: m.step, value, time: m.time }]);
            return next;
          });
        }
        if (isEvent(e, 'status') && e.data) {
          const s = e.data;
          setStatus({ status: s.status, error: s.error });
          void runRow.refetch();
        }
        apply(e as AnyEvent, true);
      },
    }),
  );

  // A finished run has nothing in flight.
  useEffect(() => {
    if (finished) clearBoard();
  }, [finished, clearBoard]);

  const spec = snapshot.data?.run.recipeSpec;
  const stages = useMemo(() => mergeStageEvents(stageBoundaries(spec), events.stageEvents), [spec, events.stageEvents]);
  const refetchRun = runRow.refetch;
  const onControl = useCallback(async () => {
    const s = (await refetchRun()).data?.status;
    // A finished run that starts again (an imported run followed again): stream it again from the last event shown.
    if (s && !isFinished(s) && isFinished(streamed)) {
      setCursor(lastSeq);
      setStatus({ status: s, error: null });
    }
  }, [refetchRun, streamed, lastSeq]);

  return { snapshot, runRow, terminal, series, status, lastSeq, events, stages, current, finished, stream, onControl };
}
