'use client';
import { formatTime } from '../ui/format.ts';
import { errorCode } from '../ui/error-code.ts';
import { RunFacts, RunHeader, RunLogAndMetrics } from '../runs/run-header.tsx';
import { SharedCompare } from './shared-compare.tsx';
import { SharedLog, SharedMetrics, SharedStepMetrics } from './shared-panels.tsx';
import { SharedBanner, SharedError, SharedNotFound } from './shared-states.tsx';
import { SharedTimeline } from './shared-timeline.tsx';
import { SharedTraces } from './shared-traces.tsx';
import { SharedTrajectories } from './shared-trajectories.tsx';
import { SharedTrajectory } from './shared-trajectory.tsx';
import { type RunInfo, useSharedSummary } from './use-shared-view.ts';

type Summary = NonNullable<ReturnType<typeof useSharedSummary>['data']>;

/**
 * /s/<token>: what a share link opens, read-only. Uses only share.view.* with the token (use-shared-view.ts); every
 * answer of NOT_FOUND (dead, expired, revoked or out-of-scope) shows the same not-found state. The run and compare
 * panels are the app's own, given the link's data.
 */
export function SharedView({ token }: { token: string }) {
  const summary = useSharedSummary(token);
  if (summary.error)
    return errorCode(summary.error) === 'NOT_FOUND' ? (
      <SharedNotFound />
    ) : (
      <SharedError what="the shared view" message={summary.error.message} retry={() => void summary.refetch()} />
    );
  if (!summary.data)
    return (
      <div className="panel empty" role="status">
        Opening the shared link…
      </div>
    );
  const s = summary.data;
  const run = s.runs[0];
  return (
    <div className="share-view" data-scope={s.scope}>
      <SharedBanner label={s.label} expiresAt={s.expiresAt} />
      {s.scope === 'compare' ? (
        <SharedCompare token={token} runs={s.runs} />
      ) : s.scope === 'traces' && s.problemId ? (
        <SharedTraces token={token} problemId={s.problemId} />
      ) : !run ? (
        <SharedNotFound />
      ) : (
        <SharedRun token={token} s={s} run={run} />
      )}
    </div>
  );
}

/** A run, step or trajectory link: the run's header, then what the link's scope shows of it. */
function SharedRun({ token, s, run }: { token: string; s: Summary; run: RunInfo }) {
  const heading =
    s.scope === 'step'
      ? `${run.name} · step ${s.step}`
      : s.scope === 'trajectory'
        ? `${run.name} · one trajectory`
        : run.name;
  return (
    <>
      <RunSummary run={run} heading={heading} />
      {s.scope === 'run' && (
        <>
          <RunLogAndMetrics
            logTitle="Log (latest)"
            log={<SharedLog token={token} />}
            metricsTitle="Metrics"
            metrics={<SharedMetrics token={token} runId={run.id} />}
          />
          <SharedTimeline token={token} runId={run.id} step={Math.max(0, run.step)} />
          <SharedTrajectories token={token} runId={run.id} initialStep={Math.max(0, run.step)} pickStep />
        </>
      )}
      {s.scope === 'step' && s.step !== null && (
        <>
          <section aria-label="Metrics at this step">
            <h2>Metrics at step {s.step}</h2>
            <SharedStepMetrics token={token} runId={run.id} />
          </section>
          <SharedTimeline token={token} runId={run.id} step={s.step} />
          <SharedTrajectories token={token} runId={run.id} initialStep={s.step} />
        </>
      )}
      {s.scope === 'trajectory' && s.trajectoryId && <SharedTrajectory token={token} trajectoryId={s.trajectoryId} />}
    </>
  );
}

/** The run page's header and facts line, with what the link carries (a step or trajectory link: no seed, no error). */
function RunSummary({ run, heading }: { run: RunInfo; heading: string }) {
  return (
    <section aria-label="Run summary">
      <RunHeader heading={heading} status={run.status} />
      <RunFacts
        parts={[
          run.kind,
          `step ${run.step}${run.totalSteps ? ` / ${run.totalSteps}` : ''}`,
          run.stageName && `stage ${run.stageName}`,
          run.seed != null && `seed ${run.seed}`,
          run.codeVersion && `code ${run.codeVersion}`,
          `created ${formatTime(run.createdAt)}`,
          run.startedAt && `started ${formatTime(run.startedAt)}`,
          run.finishedAt && `finished ${formatTime(run.finishedAt)}`,
        ]}
      />
      {run.error && <p className="error">Error: {run.error}</p>}
    </section>
  );
}
