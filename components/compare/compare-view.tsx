'use client';
import Link from 'next/link';
import { ShareButton } from '../share/share-button.tsx';
import { PairedTable } from '../evals/paired-table.tsx';
import { X_AXES, type XAxisKind } from './align.ts';
import { ComparedRunsTable } from './compared-runs-table.tsx';
import { MetricOverlays } from './metric-overlays.tsx';
import { RecipeSection } from './recipe-diff-table.tsx';
import { RunPicker } from './run-picker.tsx';
import { tracesHref } from './selection.ts';
import { useCompareView } from './use-compare-view.ts';
import { MAX_TRACE_RUNS } from '../../contracts/traces.ts';

type Compare = ReturnType<typeof useCompareView>;
type Data = NonNullable<Compare['data']>;

/** /compare?runs=a,b,c: pick runs, overlay their metrics by step, and read their recipe differences. */
export function CompareView({ initialRunIds }: { initialRunIds: string[] }) {
  const c = useCompareView(initialRunIds);
  return (
    <div className="cmp">
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>Compare runs</h1>
        <div className="row">
          <button
            type="button"
            onClick={() => c.setShowPicker((v) => !v)}
            aria-expanded={c.showPicker}
            aria-controls="cmp-picker"
          >
            {c.showPicker ? 'Hide run picker' : 'Choose runs'}
          </button>
          {c.ready && (
            <Link
              href={tracesHref(c.selected)}
              title={c.selected.length > MAX_TRACE_RUNS ? `the first ${MAX_TRACE_RUNS} runs` : undefined}
            >
              Trajectories side by side
            </Link>
          )}
          {c.ready && <ShareButton scope="compare" target={{ runIds: c.selected }} label="Share this comparison" />}
        </div>
      </div>

      {c.showPicker && (
        <div id="cmp-picker">
          <RunPicker selected={c.selected} onChange={c.select} />
        </div>
      )}

      {!c.ready ? (
        <div className="panel empty" role="status">
          {c.selected.length === 0
            ? 'Choose two to eight runs to compare.'
            : 'Choose at least one more run to compare.'}
        </div>
      ) : c.cmp.error && !c.data ? (
        <div className="panel error" role="alert">
          Could not compare these runs: {c.cmp.error.message}
          <div className="row" style={{ marginTop: 8 }}>
            <button type="button" onClick={() => void c.cmp.refetch()}>
              Retry
            </button>
            <button type="button" onClick={() => c.setShowPicker(true)}>
              Choose other runs
            </button>
          </div>
        </div>
      ) : !c.data ? (
        <div className="panel empty" role="status">
          Loading {c.selected.length} runs…
        </div>
      ) : (
        <CompareBody c={c} data={c.data} />
      )}
    </div>
  );
}

function CompareBody({ c, data }: { c: Compare; data: Data }) {
  return (
    <>
      <section aria-label="Compared runs">
        <h2>Runs</h2>
        <ComparedRunsTable
          runs={data.runs}
          runHref={(r) => `/runs/${r.id}`}
          markBase
          columns={[{ header: 'Stages', cell: stagesCell }]}
        />
      </section>

      <section aria-label="Metrics">
        <h2>
          Metrics by {c.xLabel}{' '}
          {c.cmp.isFetching && (
            <span className="muted" role="status">
              · updating…
            </span>
          )}
        </h2>
        <label className="row">
          x axis{' '}
          <select value={c.axis} onChange={(e) => c.setAxis(e.target.value as XAxisKind)} aria-label="x axis">
            {X_AXES.map((a) => (
              <option key={a.id} value={a.id}>
                {a.label}
              </option>
            ))}
          </select>
        </label>
        <MetricOverlays
          keys={c.keys}
          shown={c.shown}
          onChange={c.setChosen}
          runs={data.runs}
          series={data.series}
          stages={c.stages}
          x={c.x}
          xLabel={c.xLabel}
        />
      </section>

      <PairedEvaluations runs={data.runs} />
      <RecipeSection runs={data.runs} recipeDiff={data.recipeDiff} />
    </>
  );
}

function stagesCell(r: Data['runs'][number]) {
  return r.stageBoundaries.length ? (
    r.stageBoundaries.map((s) => `${s.name} ${s.startStep}–${s.endStep}`).join(' · ')
  ) : (
    <span className="muted">—</span>
  );
}

function PairedEvaluations({ runs }: { runs: Data['runs'] }) {
  return (
    <section aria-label="Evaluations">
      <h2>
        Evaluations, paired{' '}
        <span className="muted">
          (each run's latest evaluation against {runs[0]?.name}, on the problems both scored)
        </span>
      </h2>
      {runs.slice(1).map((r) => (
        <PairedTable key={r.id} a={{ runId: runs[0]!.id }} b={{ runId: r.id }} labelA={runs[0]!.name} labelB={r.name} />
      ))}
    </section>
  );
}
