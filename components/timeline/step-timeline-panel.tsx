'use client';
import { perfettoFileName, toPerfettoTrace } from '../../contracts/perfetto-trace.ts';
import { STEP_PHASES, type StepTimeline, timeByKind } from '../../contracts/timeline.ts';
import { TimelineChart } from './timeline-chart.tsx';
import { durationText, KIND_STYLE } from './timeline-layout.ts';
import { useStepTimeline } from './use-step-timeline.ts';

/** The run page's step timeline: pick a step, read where its time went, download it for ui.perfetto.dev. */
export function StepTimelinePanel({ runId }: { runId: string }) {
  const v = useStepTimeline(runId);
  if (v.steps.length === 0 && !v.stepsError) return null;
  return (
    <StepTimelineView
      steps={v.steps}
      step={v.step}
      onStep={v.choose}
      timeline={v.timeline}
      error={v.stepsError ?? v.timelineError}
    />
  );
}

/** The panel itself, given its data: the run page's, or a share link's (one step, no picker). */
export function StepTimelineView({
  steps,
  step,
  onStep,
  timeline,
  error,
}: {
  steps?: number[];
  step: number | null;
  onStep?: (step: number) => void;
  timeline: StepTimeline | undefined;
  error: { message: string } | null;
}) {
  return (
    <section className="panel" aria-label="Step timeline" style={{ marginTop: 12 }}>
      <div className="row" style={{ justifyContent: 'space-between', marginBottom: 8 }}>
        <h2 style={{ margin: 0 }}>Step timeline{!steps && step !== null ? ` · step ${step}` : ''}</h2>
        <div className="row">
          {steps && onStep && (
            <label className="row" style={{ gap: 4 }}>
              Step
              <select value={step ?? ''} onChange={(e) => onStep(Number(e.target.value))} aria-label="Timeline step">
                {steps.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </label>
          )}
          {timeline && <DownloadTrace t={timeline} />}
        </div>
      </div>
      {error && (
        <p className="error" role="alert">
          Could not load the timeline: {error.message}
        </p>
      )}
      {timeline && <TimelineSummary t={timeline} />}
      {timeline && timeline.blocks.length > 0 && <TimelineChart t={timeline} />}
    </section>
  );
}

/** The step's wall time, each phase's time, and what the records lack. */
function TimelineSummary({ t }: { t: StepTimeline }) {
  const by = timeByKind(t);
  const phases = STEP_PHASES.filter((p) => by[p] !== undefined).map(
    (p) => `${KIND_STYLE[p].text} ${durationText(by[p]!)}`,
  );
  return (
    <p className="muted" data-testid="timeline-summary">
      {t.blocks.length === 0
        ? 'No recorded times at this step.'
        : `${durationText(t.end - t.origin)} from the first generation to the last phase; ${t.lanes.filter((l) => l.trajectoryId).length} trajectories`}
      {phases.length > 0 && ` · ${phases.join(' · ')}`}
      {!t.phasesRecorded && ' · this run recorded no phase times (imported, or trained before they were kept)'}
      {t.untimed > 0 && ` · ${t.untimed} turns or calls without recorded times are left out`}
    </p>
  );
}

/** The same document `npx toolsmith export RUN --format perfetto --step N` writes, made in the browser. */
function DownloadTrace({ t }: { t: StepTimeline }) {
  const download = () => {
    const blob = new Blob([JSON.stringify(toPerfettoTrace(t))], { type: 'application/json' });
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = perfettoFileName(t.runId, t.step);
    a.click();
    URL.revokeObjectURL(url);
  };
  return (
    <button type="button" onClick={download} disabled={t.blocks.length === 0}>
      Download Perfetto trace
    </button>
  );
}
