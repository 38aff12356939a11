'use client';
import { Line } from 'recharts';
import { ChartFrame } from '../ui/chart-frame.tsx';
import { pass1OverSteps, type EvalRowLike } from './eval-rows.ts';
import { runColor } from '../ui/run-colors.ts';

/** pass@1 (%) of each benchmark over the evaluated steps; drawn only when there are two steps or more. */
export function Pass1Chart({ rows }: { rows: EvalRowLike[] }) {
  const { benchmarks, data } = pass1OverSteps(rows);
  if (data.length < 2) return null;
  return (
    <figure
      className="panel ev-chart"
      aria-label="pass@1 over steps"
      data-testid="pass1-chart"
      data-points={data.length}
    >
      <figcaption>
        <strong>pass@1 over steps</strong> <span className="muted">(%)</span>
      </figcaption>
      <div style={{ height: 220 }}>
        <ChartFrame
          data={data}
          yWidth={44}
          yDomain={[0, 100]}
          tipLabel={(s) => `step ${String(s)}`}
          tipValue={(v) => `${String(v)}%`}
          legend
        >
          {benchmarks.map((b, i) => (
            <Line
              key={b}
              type="monotone"
              dataKey={b}
              name={b}
              stroke={runColor(i)}
              connectNulls
              dot
              isAnimationActive={false}
            />
          ))}
        </ChartFrame>
      </div>
    </figure>
  );
}
