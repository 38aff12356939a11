'use client';
import { ComparedRunsTable, type RunColumn } from '../compare/compared-runs-table.tsx';
import { MetricOverlays } from '../compare/metric-overlays.tsx';
import { RecipeSection } from '../compare/recipe-diff-table.tsx';
import { formatTime } from '../ui/format.ts';
import { SharedError } from './shared-states.tsx';
import { type RunInfo, useSharedCompare } from './use-shared-view.ts';

/** A share link's times instead of the compare page's stages. */
const TIMES: RunColumn<RunInfo>[] = [
  { header: 'Created', cell: (r) => formatTime(r.createdAt) },
  { header: 'Finished', cell: (r) => formatTime(r.finishedAt) },
];

/** A shared comparison: compare's runs table (no links into the app), metric overlays and recipe differences. */
export function SharedCompare({ token, runs }: { token: string; runs: RunInfo[] }) {
  const c = useSharedCompare(token, runs);
  return (
    <>
      <h1>Comparison of {runs.length} runs</h1>
      <section aria-label="Compared runs">
        <ComparedRunsTable runs={runs} columns={TIMES} showErrors />
      </section>
      <section aria-label="Metrics">
        <h2>Metrics by step</h2>
        {c.failed?.error ? (
          <SharedError what="metrics" message={c.failed.error.message} retry={c.retry} />
        ) : !c.loaded ? (
          <div className="panel empty" role="status">
            Loading metrics…
          </div>
        ) : (
          <MetricOverlays keys={c.keys} shown={c.shown} onChange={c.setChosen} runs={runs} series={c.series} />
        )}
      </section>
      <RecipeSection runs={runs} recipeDiff={c.recipeDiff} />
    </>
  );
}
