'use client';
import { useState } from 'react';
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';

export type Series = Record<string, { step: number; value: number; time?: number }[]>;

/** One metric of a run against step; a select switches between the run's metrics. */
export function MetricChart({ series, title = 'Metrics' }: { series: Series; title?: string }) {
  const keys = Object.keys(series).sort();
  const [chosen, setChosen] = useState<string | null>(null);
  const key = chosen && keys.includes(chosen) ? chosen : keys[0];
  if (!key)
    return (
      <div className="panel empty" aria-label={title}>
        No metrics yet: they appear here as the run logs them.
      </div>
    );
  const data = series[key];
  return (
    <div className="panel" aria-label={title}>
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
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={data} margin={{ top: 10, right: 20, bottom: 5, left: 0 }}>
            <CartesianGrid stroke="#2a2f3a" strokeDasharray="3 3" />
            <XAxis
              dataKey="step"
              stroke="#9aa3b2"
              type="number"
              domain={['dataMin', 'dataMax']}
              allowDecimals={false}
            />
            <YAxis stroke="#9aa3b2" width={60} />
            <Tooltip contentStyle={{ background: '#171a21', border: '1px solid #2a2f3a' }} />
            <Line
              type="monotone"
              dataKey="value"
              name={key}
              stroke="#6aa9ff"
              dot={data.length < 50}
              isAnimationActive={false}
            />
          </LineChart>
        </ResponsiveContainer>
      </div>
    </div>
  );
}
