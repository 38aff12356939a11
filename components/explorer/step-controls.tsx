'use client';
import { ShareButton } from '../share/share-button.tsx';
import type { Split, useStepSlider } from './use-rollout-explorer.ts';

/** The split, the slider over the stored steps (or all of them), a share link of the step and the step count. */
export function StepControls({ runId, slider }: { runId: string; slider: ReturnType<typeof useStepSlider> }) {
  const { split, setSplit, stepList, idx, setStepIdx, stepInfo, step, allSteps, setAllSteps } = slider;
  return (
    <div className="row x-controls">
      <label>
        Split{' '}
        <select aria-label="Split" value={split} onChange={(e) => setSplit(e.target.value as Split)}>
          <option value="train">train</option>
          <option value="eval">eval</option>
        </select>
      </label>
      {stepList.length > 0 && (
        <label className="x-step">
          Step{' '}
          <input
            type="range"
            aria-label="Step"
            min={0}
            max={stepList.length - 1}
            value={idx ?? 0}
            disabled={allSteps}
            aria-valuetext={stepInfo ? `step ${stepInfo.step}` : undefined}
            onChange={(e) => setStepIdx(Number(e.target.value))}
          />
          <strong>{stepInfo ? stepInfo.step : '—'}</strong>
          {stepInfo && (
            <span className="muted">
              {' '}
              {stepInfo.count} rollouts · accuracy {(100 * stepInfo.accuracy).toFixed(0)}% · kept {stepInfo.selected}
            </span>
          )}
        </label>
      )}
      <label>
        <input
          type="checkbox"
          checked={allSteps}
          onChange={(e) => setAllSteps(e.target.checked)}
          aria-label="All steps"
        />{' '}
        all steps
      </label>
      {step !== null && <ShareButton scope="step" target={{ runId, step }} />}
      <span className="muted">
        {stepList.length} stored step{stepList.length === 1 ? '' : 's'}
      </span>
    </div>
  );
}
