'use client';
import { useState } from 'react';
import { Line } from 'recharts';
import { ChartFrame } from './chart-frame.tsx';

export type Series = Record<string, { step: number; value: number; time?: number }[]>;

/** One metric of a run against step; a select switches between the run's metrics. */
export function MetricChart({ series, title = 'Metrics' }: { series: Series; title?: string }) {
  const keys = Object.keys(series).sort();
  const [chosen, setChosen] = useState<string | null>(null);
  const key = chosen && keys.includes(chosen) ? chosen : keys[0];
  if (!key)
    return (
      <section className="panel empty" aria-label={title}>
        No metrics yet: they appear here as the run logs them.
      </section>
    );
  const data = series[key];
  return (
    <section className="panel" aria-label={title}>
      <div className="row">
        <label>
          Metric{' '}
          <select aria-label="Metric" value={key} onChange={(e) => setChosen(e.target.value)}>
            {keys.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <span className="muted">{data.length} points</span>
      </div>
      <div className="chart" data-testid="metric-chart" data-points={data.length}>
        <ChartFrame data={data}>
          <Line
            type="monotone"
            dataKey="value"
            name={key}
            stroke="#6aa9ff"
            dot={data.length < 50}
            isAnimationActive={false}
          />
        </ChartFrame>
      </div>
    </section>
  );
}
