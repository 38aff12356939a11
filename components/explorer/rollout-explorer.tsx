'use client';
import { useState } from 'react';
import { togglePick } from './explorer-window.ts';
import { FilterBar } from './filter-bar.tsx';
import { SamePrompt } from './same-prompt.tsx';
import { SortBar } from './sort-bar.tsx';
import { StepControls } from './step-controls.tsx';
import { TrajectoryGrid } from './trajectory-grid.tsx';
import { useExplorerFilters, useStepSlider, useTrajectoryPages } from './use-rollout-explorer.ts';

/**
 * The rollout explorer of a run: a slider over every stored step (or all steps), filters, top-k / bottom-k, a
 * windowed table that loads limit/offset pages as it scrolls (smooth at 100,000 rows), the same problem across
 * steps, and a compare link for two picked rows. The queries are in use-rollout-explorer.ts.
 */
export function RolloutExplorer({ runId, initialStep }: { runId: string; initialStep: number | null }) {
  const slider = useStepSlider(runId, initialStep);
  const filters = useExplorerFilters();
  const { pages, total, onRange, retry } = useTrajectoryPages(runId, slider, filters);
  const [picked, setPicked] = useState<string[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  const { steps, stepList, split } = slider;

  if (steps.error)
    return (
      <div className="panel error" role="alert">
        Could not load the run&apos;s stored steps: {steps.error.message}
      </div>
    );
  return (
    <div className="explorer">
      <StepControls runId={runId} slider={slider} />
      {steps.isLoading ? (
        <div className="panel empty">Loading stored steps…</div>
      ) : stepList.length === 0 ? (
        <div className="panel empty">
          No trajectories stored yet{split === 'eval' ? ' for evaluation' : ''}: every step&apos;s rollouts appear here
          once the step has finished.
        </div>
      ) : (
        <>
          <FilterBar f={filters} />
          <SortBar f={filters} total={total} allTotal={pages.total} picked={picked} clearPicks={() => setPicked([])} />
          {pages.error && (
            <div className="panel error" role="alert">
              Could not load trajectories: {pages.error}{' '}
              <button type="button" onClick={retry} aria-label="Retry loading trajectories">
                Retry
              </button>
            </div>
          )}
          <TrajectoryGrid
            total={total}
            pages={pages.map}
            onRange={onRange}
            picked={picked}
            onPick={(id) => setPicked((p) => togglePick(p, id))}
            onProblem={setProblem}
          />
        </>
      )}
      {problem && <SamePrompt runId={runId} problemId={problem} onClose={() => setProblem(null)} />}
    </div>
  );
}
