'use client';
import { useEffect, useMemo, useState } from 'react';
import { DashboardChart } from './dashboard-chart.tsx';
import { evalPanels, PANELS, type SeriesMap, type StageBoundary } from './dashboard.ts';

const STORAGE_KEY = 'toolsmith.smoothing';

function initialWeight(): number {
  if (typeof window === 'undefined') return 0.6;
  const v = Number(window.localStorage?.getItem(STORAGE_KEY));
  return Number.isFinite(v) && v >= 0 && v < 1 && window.localStorage.getItem(STORAGE_KEY) !== null ? v : 0.6;
}

/** The training dashboard: a grid of metric panels sharing one smoothing slider and the stage boundaries. */
export function RunDashboard({ series, stages }: { series: SeriesMap; stages: StageBoundary[] }) {
  const [weight, setWeight] = useState(0.6);
  // The last weight used, after hydration (the server renders the default).
  useEffect(() => {
    setWeight(initialWeight());
  }, []);
  const panels = useMemo(() => [...PANELS, ...evalPanels(series)], [series]);
  return (
    <section aria-label="Training dashboard" className="dash">
      <div className="row dash-toolbar">
        <h2>Training metrics</h2>
        <label className="dash-smoothing">
          Smoothing{' '}
          <input
            type="range"
            min={0}
            max={0.99}
            step={0.01}
            value={weight}
            aria-label="Smoothing"
            onChange={(e) => {
              const w = Number(e.target.value);
              setWeight(w);
              try {
                window.localStorage.setItem(STORAGE_KEY, String(w));
              } catch {
                /* private mode */
              }
            }}
          />
          <output className="muted" aria-live="off">
            {weight.toFixed(2)}
          </output>
        </label>
        <span className="muted">time-weighted EMA, debiased; faint lines are the raw values</span>
        {stages.length > 0 && (
          <span className="muted">
            dashed lines: stage starts ({stages.map((s) => `${s.name} @${s.startStep}`).join(', ')})
          </span>
        )}
      </div>
      <div className="dash-grid">
        {panels.map((p) => (
          <DashboardChart key={p.id} panel={p} series={series} weight={weight} stages={stages} />
        ))}
      </div>
    </section>
  );
}
