'use client';
import { useEffect, useMemo, useState } from 'react';
import { estimateEta, formatDuration, stageOf, stepTimes, type SeriesMap, type StageBoundary } from './dashboard.ts';

/**
 * Stage, progress and ETA, by time: each stage's steps left at that stage's own measured rate (dashboard.ts
 * estimateEta), so a run's fast SFT steps do not promise its slow RL steps; by step count only until a rate is known.
 */
export function RunProgress({
  step,
  totalSteps,
  status,
  stageName,
  stages,
  series,
}: {
  step: number;
  totalSteps: number | null;
  status: string;
  stageName: string | null;
  stages: StageBoundary[];
  series: SeriesMap;
}) {
  const samples = useMemo(() => stepTimes(series), [series]);
  const eta = useMemo(() => estimateEta(samples, step, totalSteps, 20, stages), [samples, step, totalSteps, stages]);
  // Re-render every few seconds so "updated … ago" stays honest while no step arrives.
  const [now, setNow] = useState<number | null>(null);
  const live = status === 'running';
  useEffect(() => {
    setNow(Date.now());
    if (!live) return;
    const t = setInterval(() => setNow(Date.now()), 5000);
    return () => clearInterval(t);
  }, [live, samples]);
  const stage = stageOf(stages, Math.max(1, step + 1)) ?? stageOf(stages, step);
  const stageIdx = stage ? stages.indexOf(stage) : -1;
  const stageText = stage
    ? `stage ${stageIdx + 1}/${stages.length} ${stage.name} (${stage.type})`
    : stageName
      ? `stage ${stageName}`
      : null;
  const byTime = live && eta?.timeFraction != null;
  const pct = byTime ? 100 * eta.timeFraction! : totalSteps ? Math.min(100, (100 * step) / totalSteps) : null;
  const lastTime = samples.length ? samples[samples.length - 1]!.time : null;
  return (
    <div className="run-progress" role="group" aria-label="Run progress">
      {stageText && <span className="run-stage">{stageText}</span>}
      {totalSteps ? (
        <progress
          className="run-progress-bar"
          aria-label={byTime ? 'Progress by time' : 'Step progress'}
          value={byTime ? pct! : step}
          max={byTime ? 100 : totalSteps}
        >
          {pct?.toFixed(0)}%
        </progress>
      ) : null}
      <span title={byTime ? 'time done over time done and left' : 'steps done over all steps'}>
        {totalSteps
          ? `${pct!.toFixed(pct! < 10 ? 1 : 0)}%${byTime ? ' of the time' : ` · step ${step}/${totalSteps}`}`
          : `step ${step}`}
      </span>
      {eta && (
        <span className="muted" title="steps per second over this stage's last 20 logged steps">
          {eta.rate >= 1 ? `${eta.rate.toFixed(1)} steps/s` : `${formatDuration(1 / eta.rate)}/step`}
        </span>
      )}
      {live && eta?.etaSeconds != null && (
        <span role="timer" aria-label="Estimated time left">
          ETA {formatDuration(eta.etaSeconds)}
        </span>
      )}
      {live && !eta && <span className="muted">ETA after two steps</span>}
      {live && eta?.waitingFor && <span className="muted">ETA once a {eta.waitingFor} step is measured</span>}
      {live && lastTime !== null && now !== null && now - lastTime > 60_000 && (
        <span className="muted">last step {formatDuration((now - lastTime) / 1000)} ago</span>
      )}
    </div>
  );
}
