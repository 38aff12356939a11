'use client';
import { skipToken, useQuery } from '@tanstack/react-query';
import { useSubscription } from '@trpc/tanstack-react-query';
import Link from 'next/link';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { MetricChart, type Series } from '../ui/metric-chart.tsx';
import { StatusBadge } from '../ui/status-badge.tsx';
import { TerminalPane, type TerminalHandle } from '../ui/terminal-pane.tsx';
import { eventLine, formatTime } from '../ui/format.ts';
import { mergePoints } from '../ui/merge-points.ts';
import { LiveRollouts } from './live-rollouts.tsx';
import { EnginePanel } from './engine-panel.tsx';
import { ClusterPanel } from './cluster-panel.tsx';
import { type ClusterView, foldCluster } from '../../contracts/cluster.ts';
import type { EnginesSnapshot } from '../../contracts/live.ts';
import { FORMAT_FROM_LAYOUT } from '../../contracts/foreign.ts';
import { RunControls } from './run-controls.tsx';
import { ShareButton } from '../share/share-button.tsx';
import { FollowSwitch } from './follow-switch.tsx';
import { RunDashboard } from './run-dashboard.tsx';
import { PlanVsMeasured } from './plan-vs-measured.tsx';
import { RunProgress } from './run-progress.tsx';
import { mergeStageEvents, PANEL_KEYS } from './dashboard.ts';
import { stageBoundaries } from '../../contracts/recipe.ts';
import { applyRollouts, clearFinished, rolloutsOf, type LiveRollout } from './rollout-board.ts';

/** How long a finished step's rollouts stay on the live board after the step is stored. */
const FINISHED_LINGER_MS = 4000;
import { isEvent, type RunEvent } from '../../contracts/events.ts';
import { isFinished, type StageEventData } from '../../contracts/runs.ts';

type AnyEvent = Omit<RunEvent, 'runId'>;

/**
 * A run's live page: a snapshot as of event seq N, then the event stream from N. The stream resumes from the
 * last seq it saw after a reconnect, so the log and the chart neither miss nor repeat anything.
 *
 * On top of the log and the all-metrics chart: progress (stage, step, ETA), pause/resume/cancel, the training
 * dashboard (smoothed panels with stage boundaries) and the live rollouts of the step being generated.
 */
export function RunView({ runId }: { runId: string }) {
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
  const [stageEvents, setStageEvents] = useState<StageEventData[]>([]);
  const [board, setBoard] = useState<LiveRollout[]>([]);
  const [engines, setEngines] = useState<EnginesSnapshot | null>(null);
  const [cluster, setCluster] = useState<ClusterView | null>(null);
  const [stepTick, setStepTick] = useState(0);
  // The seq of the snapshot the page was seeded from: the stream starts there. Kept apart from snapshot.data,
  // which is refetched (for the run's step, start and finish times) without moving the stream.
  const [cursor, setCursor] = useState<number | null>(null);

  const lingering = useRef(new Set<ReturnType<typeof setTimeout>>());
  /** What one event changes besides the log (the same for snapshot events and streamed ones). */
  const apply = useCallback((e: AnyEvent, live: boolean) => {
    if (isEvent(e, 'stage') && e.data) {
      const s = e.data;
      setStageEvents((prev) => [...prev.filter((p) => p.stage !== s.stage), s]);
    } else if (isEvent(e, 'engines') && e.data) {
      const snap = e.data;
      setEngines((prev) => (prev && prev.at > snap.at ? prev : snap));
    } else if (isEvent(e, 'cluster') && e.data) {
      const c = e.data;
      setCluster((prev) => foldCluster(prev, c));
    } else if (e.type === 'rollouts') {
      const updates = rolloutsOf(e.data);
      if (updates.length) setBoard((prev) => applyRollouts(prev, updates));
    } else if (e.type === 'step') {
      // The step's trajectories are stored: its finished rollouts leave the board, its groups are refetched. Live,
      // they stay FINISHED_LINGER_MS first: a short step's rollouts and its end arrive in one batch of the stream,
      // and would otherwise never be drawn.
      if (live) {
        const timer = setTimeout(() => {
          lingering.current.delete(timer);
          setBoard((prev) => clearFinished(prev));
        }, FINISHED_LINGER_MS);
        lingering.current.add(timer);
        setStepTick((n) => n + 1);
      } else setBoard((prev) => clearFinished(prev));
    }
  }, []);
  useEffect(() => () => lingering.current.forEach(clearTimeout), []);

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
    if (finished) setBoard([]);
  }, [finished]);

  const spec = snapshot.data?.run.recipeSpec;
  const stages = useMemo(() => mergeStageEvents(stageBoundaries(spec), stageEvents), [spec, stageEvents]);
  const refetchRun = runRow.refetch;
  const onControl = useCallback(async () => {
    const s = (await refetchRun()).data?.status;
    // A finished run that starts again (an imported run followed again): stream it again from the last event shown.
    if (s && !isFinished(s) && isFinished(streamed)) {
      setCursor(lastSeq);
      setStatus({ status: s, error: null });
    }
  }, [refetchRun, streamed, lastSeq]);

  if (snapshot.error && !snapshot.data)
    return (
      <div className="panel error" role="alert">
        Could not load run {runId}: {snapshot.error.message}
      </div>
    );
  const run = runRow.data ?? snapshot.data?.run;
  const kind = run?.kind ?? '';
  const isTrain = kind === 'train';
  // A run trained elsewhere: read-only, its source in the frozen spec; every viewer works on it.
  const isImport = kind === 'import';
  const imported = importedFrom(snapshot.data?.run.recipeSpec);
  // The polled row's: a run started without a format gets it when its job has read the folder's layout.
  const importFormat = runRow.data?.importFormat ?? imported?.format;
  const hasDashboardKeys = Object.keys(series).some((k) => PANEL_KEYS.has(k) || k.startsWith('eval/'));
  const showRollouts = isTrain || kind === 'eval' || board.length > 0;
  return (
    <div className="run-page">
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>{run ? run.name : 'Run'}</h1>
        <div className="row">
          <StatusBadge status={current} kind={kind} follow={runRow.data?.follow} />
          <span className="muted" aria-label="Stream state">
            {finished ? 'finished' : stream.status === 'pending' ? 'live' : stream.status}
          </span>
          {(isTrain || isImport) && <Link href={`/runs/${encodeURIComponent(runId)}/explorer`}>Rollout explorer</Link>}
          {(isTrain || isImport || kind === 'eval') && (
            <Link href={`/runs/${encodeURIComponent(runId)}/evals`}>Evaluations</Link>
          )}
          <ShareButton scope="run" target={{ runId }} linkLabel={run?.name} />
          <RunControls runId={runId} status={current} kind={kind} onDone={onControl} />
        </div>
      </div>
      {run && (
        <p className="muted">
          {run.kind} · seed {run.seed} · code {run.codeVersion} · step {run.step}
          {run.totalSteps ? ` / ${run.totalSteps}` : ''} · started {formatTime(run.startedAt)} · event #{lastSeq}
        </p>
      )}
      {imported && (
        <p className="muted" aria-label="Imported from">
          imported, read-only:{' '}
          {importFormat === FORMAT_FROM_LAYOUT
            ? 'rollouts (format from the layout, once read)'
            : `${importFormat} rollouts`}{' '}
          from <code>{imported.path}</code>
          {imported.frameworkVersion ? ` (${imported.frameworkVersion})` : ''}
          <FollowSwitch
            runId={runId}
            following={Boolean(runRow.data?.follow) && !isFinished(current)}
            onDone={onControl}
          />
        </p>
      )}
      {run && (run.totalSteps || stages.length > 0) ? (
        <RunProgress
          step={run.step}
          totalSteps={run.totalSteps}
          status={current}
          stageName={run.stageName}
          stages={stages}
          series={series}
        />
      ) : null}
      {status?.error && (
        <p className="error" role="alert">
          Error: {status.error}
        </p>
      )}
      {stream.error && (
        <p className="error" role="alert">
          Live updates interrupted: {stream.error.message}
        </p>
      )}
      {(isTrain || isImport || hasDashboardKeys) && <RunDashboard series={series} stages={stages} />}
      {isTrain && <PlanVsMeasured spec={snapshot.data?.run.recipeSpec} series={series} runId={runId} />}
      {isTrain && <ClusterPanel view={cluster} />}
      {isTrain && <EnginePanel snapshot={engines} live={current === 'running'} />}
      {showRollouts && (
        <LiveRollouts
          runId={runId}
          board={board}
          stepTick={stepTick}
          live={current === 'running'}
          showGroups={isTrain || isImport}
        />
      )}
      <div className="grid2">
        <section aria-label="Run log">
          <h2>Log</h2>
          <TerminalPane ref={terminal} label="Run log terminal" />
        </section>
        <section aria-label="Run metrics">
          <h2>All metrics</h2>
          <MetricChart series={series} title="Run metrics chart" />
        </section>
      </div>
    </div>
  );
}

/** The source of an imported run, from its frozen spec (server/store/imports.ts writes it). */
function importedFrom(spec: unknown): { format: string; path: string; frameworkVersion: string | null } | null {
  const i = (spec as { imported?: { format?: unknown; path?: unknown; frameworkVersion?: unknown } } | null)?.imported;
  if (!i || typeof i.format !== 'string' || typeof i.path !== 'string') return null;
  return {
    format: i.format,
    path: i.path,
    frameworkVersion: typeof i.frameworkVersion === 'string' ? i.frameworkVersion : null,
  };
}
