'use client';
import Link from 'next/link';
import { FORMAT_FROM_LAYOUT } from '../../contracts/foreign.ts';
import { isFinished } from '../../contracts/runs.ts';
import { ShareButton } from '../share/share-button.tsx';
import { formatTime } from '../ui/format.ts';
import { MetricChart } from '../ui/metric-chart.tsx';
import { TerminalPane } from '../ui/terminal-pane.tsx';
import { ClusterPanel } from './cluster-panel.tsx';
import { PANEL_KEYS } from './dashboard.ts';
import { EnginePanel } from './engine-panel.tsx';
import { FollowSwitch } from './follow-switch.tsx';
import { LiveRollouts } from './live-rollouts.tsx';
import { PlanVsMeasured } from './plan-vs-measured.tsx';
import { RunControls } from './run-controls.tsx';
import { RunDashboard } from './run-dashboard.tsx';
import { RunFacts, RunHeader, RunLogAndMetrics } from './run-header.tsx';
import { RunProgress } from './run-progress.tsx';
import { useRunView } from './use-run-view.ts';
import { StepTimelinePanel } from '../timeline/step-timeline-panel.tsx';

type View = ReturnType<typeof useRunView>;

/**
 * A run's live page (the state in use-run-view.ts): on top of the log and the all-metrics chart, progress (stage,
 * step, ETA), pause/resume/cancel, the training dashboard (smoothed panels with stage boundaries) and the live
 * rollouts of the step being generated.
 */
export function RunView({ runId }: { runId: string }) {
  const v = useRunView(runId);
  const { snapshot, runRow, series, status, stream, current, stages } = v;
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
  const hasDashboardKeys = Object.keys(series).some((k) => PANEL_KEYS.has(k) || k.startsWith('eval/'));
  const { board, engines, cluster, stepTick } = v.events;
  return (
    <div className="run-page">
      <RunViewHeader v={v} runId={runId} />
      {run && (
        <RunFacts
          parts={[
            run.kind,
            `seed ${run.seed ?? ''}`,
            `code ${run.codeVersion ?? ''}`,
            `step ${run.step}${run.totalSteps ? ` / ${run.totalSteps}` : ''}`,
            `started ${formatTime(run.startedAt)}`,
            `event #${v.lastSeq}`,
          ]}
        />
      )}
      <ImportedFrom v={v} runId={runId} />
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
      {(isTrain || isImport) && <StepTimelinePanel runId={runId} />}
      {isTrain && <ClusterPanel view={cluster} />}
      {isTrain && <EnginePanel snapshot={engines} live={current === 'running'} />}
      {(isTrain || kind === 'eval' || board.length > 0) && (
        <LiveRollouts
          runId={runId}
          board={board}
          stepTick={stepTick}
          live={current === 'running'}
          showGroups={isTrain || isImport}
        />
      )}
      <RunLogAndMetrics
        logTitle="Log"
        log={<TerminalPane ref={v.terminal} label="Run log terminal" />}
        metricsTitle="All metrics"
        metrics={<MetricChart series={series} title="Run metrics chart" />}
      />
    </div>
  );
}

/** The run's name, status and stream state, its viewers' links and its controls. */
function RunViewHeader({ v, runId }: { v: View; runId: string }) {
  const run = v.runRow.data ?? v.snapshot.data?.run;
  const kind = run?.kind ?? '';
  const hasViewers = kind === 'train' || kind === 'import';
  return (
    <RunHeader heading={run ? run.name : 'Run'} status={v.current} kind={kind} follow={v.runRow.data?.follow}>
      <span className="muted" role="status" aria-label="Stream state">
        {v.finished ? 'finished' : v.stream.status === 'pending' ? 'live' : v.stream.status}
      </span>
      {hasViewers && <Link href={`/runs/${encodeURIComponent(runId)}/explorer`}>Rollout explorer</Link>}
      {(hasViewers || kind === 'eval') && <Link href={`/runs/${encodeURIComponent(runId)}/evals`}>Evaluations</Link>}
      <ShareButton scope="run" target={{ runId }} linkLabel={run?.name} />
      <RunControls runId={runId} status={v.current} kind={kind} onDone={v.onControl} />
    </RunHeader>
  );
}

/** Where an imported run was read from, and the switch that follows the folder as it grows. */
function ImportedFrom({ v, runId }: { v: View; runId: string }) {
  const imported = importedFrom(v.snapshot.data?.run.recipeSpec);
  if (!imported) return null;
  // The polled row's: a run started without a format gets it when its job has read the folder's layout.
  const importFormat = v.runRow.data?.importFormat ?? imported.format;
  return (
    <p className="muted" role="note" aria-label="Imported from">
      imported, read-only:{' '}
      {importFormat === FORMAT_FROM_LAYOUT
        ? 'rollouts (format from the layout, once read)'
        : `${importFormat} rollouts`}{' '}
      from <code>{imported.path}</code>
      {imported.frameworkVersion ? ` (${imported.frameworkVersion})` : ''}
      <FollowSwitch
        runId={runId}
        following={Boolean(v.runRow.data?.follow) && !isFinished(v.current)}
        onDone={v.onControl}
      />
    </p>
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
