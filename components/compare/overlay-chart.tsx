'use client';
import {
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { alignBy, type Point, type RunSeries } from './align.ts';
import { formatNumber } from '../ui/format.ts';
import { runColor } from '../ui/run-colors.ts';

export interface OverlayRun {
  id: string;
  name: string;
}
export interface StageMark {
  step: number;
  label: string;
}

/**
 * One metric key of several runs on a shared x axis (the step unless `x` says otherwise: compare's axis choice,
 * align.ts): one line per run, a dashed mark where each stage starts.
 */
export function OverlayChart({
  metricKey,
  runs,
  series,
  stages = [],
  x,
  xLabel = 'step',
}: {
  metricKey: string;
  runs: OverlayRun[];
  series: RunSeries;
  stages?: StageMark[];
  x?: (runId: string, p: Point) => number | null;
  xLabel?: string;
}) {
  const ids = runs.map((r) => r.id);
  const data = alignBy(series, ids, metricKey, x);
  const whole = data.every((r) => Number.isInteger(r.x));
  const points = ids.map((id) => series[id]?.[metricKey]?.length ?? 0);
  return (
    <figure
      className="panel cmp-chart"
      aria-label={`Chart of ${metricKey}`}
      data-testid="overlay-chart"
      data-key={metricKey}
      data-points={data.length}
    >
      <figcaption className="row" style={{ justifyContent: 'space-between' }}>
        <strong className="cmp-key">{metricKey}</strong>
        <span className="muted">{runs.map((r, i) => `${r.name}: ${points[i]}`).join(' · ')} points</span>
      </figcaption>
      {data.length === 0 ? (
        <div className="empty">None of these runs logged {metricKey}.</div>
      ) : (
        <div className="chart">
          <ResponsiveContainer width="100%" height="100%">
            <LineChart data={data} margin={{ top: 10, right: 20, bottom: 5, left: 0 }}>
              <CartesianGrid stroke="#2a2f3a" strokeDasharray="3 3" />
              <XAxis
                dataKey="x"
                stroke="#9aa3b2"
                type="number"
                domain={['dataMin', 'dataMax']}
                allowDecimals={!whole}
                tickFormatter={(v: number) => formatNumber(v)}
              />
              <YAxis stroke="#9aa3b2" width={64} tickFormatter={(v: number) => formatNumber(v)} />
              <Tooltip
                contentStyle={{ background: '#171a21', border: '1px solid #2a2f3a' }}
                labelFormatter={(s) => `${xLabel} ${formatNumber(Number(s))}`}
                formatter={(v) => formatNumber(typeof v === 'number' ? v : Number(v))}
              />
              <Legend />
              {stages.map((s) => (
                <ReferenceLine
                  key={`${s.step}-${s.label}`}
                  x={s.step}
                  stroke="#5b6477"
                  strokeDasharray="4 4"
                  label={{ value: s.label, position: 'insideTopLeft', fill: '#9aa3b2', fontSize: 11 }}
                />
              ))}
              {runs.map((r, i) => (
                <Line
                  key={r.id}
                  type="monotone"
                  dataKey={r.id}
                  name={r.name}
                  stroke={runColor(i)}
                  connectNulls
                  dot={data.length < 40}
                  isAnimationActive={false}
                />
              ))}
            </LineChart>
          </ResponsiveContainer>
        </div>
      )}
    </figure>
  );
}
