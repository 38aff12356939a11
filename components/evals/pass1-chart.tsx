'use client';
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
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
            <YAxis stroke="#9aa3b2" width={44} domain={[0, 100]} />
            <Tooltip
              contentStyle={{ background: '#171a21', border: '1px solid #2a2f3a' }}
              labelFormatter={(s) => `step ${String(s)}`}
              formatter={(v) => `${String(v)}%`}
            />
            <Legend />
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
          </LineChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
