'use client';
import { keepPreviousData, skipToken, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useMemo, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { StatusBadge } from '../ui/status-badge.tsx';
import { ShareButton } from '../share/share-button.tsx';
import { compareHref, MIN_COMPARE } from './selection.ts';
import { axisOrigin, axisX, defaultCompareKeys, unionKeys, X_AXES, type XAxisKind } from './align.ts';
import { runColor } from '../ui/run-colors.ts';
import { KeyPicker } from './key-picker.tsx';
import { OverlayChart, type StageMark } from './overlay-chart.tsx';
import { RecipeDiffTable } from './recipe-diff-table.tsx';
import { RunPicker } from './run-picker.tsx';
import { PairedTable } from '../evals/paired-table.tsx';

/** /compare?runs=a,b,c: pick runs, overlay their metrics by step, and read their recipe differences. */
export function CompareView({ initialRunIds }: { initialRunIds: string[] }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [selected, setSelected] = useState(initialRunIds);
  const [chosenKeys, setChosenKeys] = useState<string[] | null>(null);
  const [axis, setAxis] = useState<XAxisKind>('step');
  const [showPicker, setShowPicker] = useState(initialRunIds.length < MIN_COMPARE);

  const select = (ids: string[]) => {
    setSelected(ids);
    router.replace(compareHref(ids), { scroll: false });
  };

  const ready = selected.length >= MIN_COMPARE;
  const cmp = useQuery(
    trpc.runs.compare.queryOptions(ready ? { runIds: selected } : skipToken, {
      placeholderData: keepPreviousData,
      retry: false,
      refetchInterval: 15_000,
    }),
  );
  const data = ready ? cmp.data : undefined;
  const keys = useMemo(() => (data ? unionKeys(data.series) : []), [data]);
  const shownKeys = (chosenKeys ?? (data ? defaultCompareKeys(data.series, selected) : [])).filter((k) =>
    keys.includes(k),
  );
  const origins = useMemo(
    () =>
      Object.fromEntries(
        (data?.runs ?? []).map((r) => [r.id, axisOrigin(data!.series[r.id] ?? {}, r.stageBoundaries)]),
      ),
    [data],
  );
  const xLabel = X_AXES.find((a) => a.id === axis)!.label;
  const stages = useMemo<StageMark[]>(() => {
    const marks = new Map<number, string>();
    for (const r of data?.runs ?? [])
      for (const s of r.stageBoundaries) if (s.startStep > 1 && !marks.has(s.startStep)) marks.set(s.startStep, s.name);
    return [...marks].map(([step, label]) => ({ step, label }));
  }, [data]);

  return (
    <div className="cmp">
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>Compare runs</h1>
        <div className="row">
          <button
            type="button"
            onClick={() => setShowPicker((v) => !v)}
            aria-expanded={showPicker}
            aria-controls="cmp-picker"
          >
            {showPicker ? 'Hide run picker' : 'Choose runs'}
          </button>
          {ready && <ShareButton scope="compare" target={{ runIds: selected }} label="Share this comparison" />}
        </div>
      </div>

      {showPicker && (
        <div id="cmp-picker">
          <RunPicker selected={selected} onChange={select} />
        </div>
      )}

      {!ready ? (
        <div className="panel empty" role="status">
          {selected.length === 0 ? 'Choose two to eight runs to compare.' : 'Choose at least one more run to compare.'}
        </div>
      ) : cmp.error && !data ? (
        <div className="panel error" role="alert">
          Could not compare these runs: {cmp.error.message}
          <div className="row" style={{ marginTop: 8 }}>
            <button type="button" onClick={() => void cmp.refetch()}>
              Retry
            </button>
            <button type="button" onClick={() => setShowPicker(true)}>
              Choose other runs
            </button>
          </div>
        </div>
      ) : !data ? (
        <div className="panel empty" role="status">
          Loading {selected.length} runs…
        </div>
      ) : (
        <>
          <section aria-label="Compared runs">
            <h2>Runs</h2>
            <table aria-label="Compared runs">
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Status</th>
                  <th scope="col">Step</th>
                  <th scope="col">Stages</th>
                </tr>
              </thead>
              <tbody>
                {data.runs.map((r, i) => (
                  <tr key={r.id}>
                    <td>
                      <span className="cmp-swatch" style={{ background: runColor(i) }} aria-hidden="true" />
                      <Link href={`/runs/${r.id}`}>{r.name}</Link>{' '}
                      <span className="muted">
                        {r.id}
                        {i === 0 ? ' · base' : ''}
                      </span>
                    </td>
                    <td>{r.kind}</td>
                    <td>
                      <StatusBadge status={r.status} />
                    </td>
                    <td>
                      {r.step}
                      {r.totalSteps ? ` / ${r.totalSteps}` : ''}
                    </td>
                    <td>
                      {r.stageBoundaries.length ? (
                        r.stageBoundaries.map((s) => `${s.name} ${s.startStep}–${s.endStep}`).join(' · ')
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>

          <section aria-label="Metrics">
            <h2>
              Metrics by {xLabel}{' '}
              {cmp.isFetching && (
                <span className="muted" role="status">
                  · updating…
                </span>
              )}
            </h2>
            <label className="row">
              x axis{' '}
              <select value={axis} onChange={(e) => setAxis(e.target.value as XAxisKind)} aria-label="x axis">
                {X_AXES.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.label}
                  </option>
                ))}
              </select>
            </label>
            <KeyPicker keys={keys} chosen={shownKeys} onChange={setChosenKeys} />
            {keys.length > 0 && shownKeys.length === 0 && (
              <div className="panel empty">Tick a metric above to chart it.</div>
            )}
            <div className="cmp-charts">
              {shownKeys.map((k) => (
                <OverlayChart
                  key={k}
                  metricKey={k}
                  runs={data.runs}
                  series={data.series}
                  stages={axis === 'step' ? stages : []}
                  x={(id, p) => (origins[id] ? axisX(axis, p, origins[id]) : null)}
                  xLabel={xLabel}
                />
              ))}
            </div>
          </section>

          <section aria-label="Evaluations">
            <h2>
              Evaluations, paired{' '}
              <span className="muted">
                (each run's latest evaluation against {data.runs[0]?.name}, on the problems both scored)
              </span>
            </h2>
            {data.runs.slice(1).map((r) => (
              <PairedTable
                key={r.id}
                a={{ runId: data.runs[0]!.id }}
                b={{ runId: r.id }}
                labelA={data.runs[0]!.name}
                labelB={r.name}
              />
            ))}
          </section>

          <section aria-label="Recipe">
            <h2>
              Recipe differences <span className="muted">(from {data.runs[0]?.name})</span>
            </h2>
            <RecipeDiffTable runs={data.runs} recipeDiff={data.recipeDiff} />
          </section>
        </>
      )}
    </div>
  );
}
