'use client';
import { Line } from 'recharts';
import { ChartFrame } from '../ui/chart-frame.tsx';
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
          <ChartFrame
            data={data}
            xKey="x"
            xDecimals={!whole}
            xFormat={formatNumber}
            yWidth={64}
            yFormat={formatNumber}
            tipLabel={(s) => `${xLabel} ${formatNumber(Number(s))}`}
            tipValue={(v) => formatNumber(typeof v === 'number' ? v : Number(v))}
            legend
            marks={stages.map((s) => ({ x: s.step, label: s.label, key: `${s.step}-${s.label}` }))}
          >
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
          </ChartFrame>
        </div>
      )}
    </figure>
  );
}
