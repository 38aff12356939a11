'use client';
import type { ReactNode } from 'react';
import {
  AreaChart,
  CartesianGrid,
  ComposedChart,
  Legend,
  LineChart,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';

export const GRID = '#2a2f3a';
export const AXIS = '#9aa3b2';

/** A dashed vertical line with a label: where a stage starts. */
export interface ChartMark {
  x: number;
  label: string;
  key: string;
}

type Format = (v: number) => string;

/**
 * The frame every chart of the app draws its lines in: a grid, a numeric x axis over the data's range, a y axis, a
 * tooltip, an optional legend and a dashed mark per stage. `compact` is a dashboard panel's (small ticks, tight
 * margins, yellow stage marks); the full size is a run's or a comparison's chart. The caller's children are the
 * lines or areas, as recharts elements.
 */
export function ChartFrame({
  data,
  kind = 'line',
  compact = false,
  xKey = 'step',
  xDecimals = false,
  xFormat,
  yWidth = compact ? 48 : 60,
  yFormat,
  yDomain,
  tipValue,
  tipLabel,
  legend = false,
  marks = [],
  children,
}: {
  data: object[];
  kind?: 'line' | 'area' | 'composed';
  compact?: boolean;
  xKey?: string;
  xDecimals?: boolean;
  xFormat?: Format;
  yWidth?: number;
  yFormat?: Format;
  yDomain?: [number | string, number | string];
  tipValue?: (v: unknown) => string;
  tipLabel?: (label: unknown) => string;
  legend?: boolean;
  marks?: ChartMark[];
  children: ReactNode;
}) {
  const Chart = kind === 'area' ? AreaChart : kind === 'composed' ? ComposedChart : LineChart;
  const tick = compact ? { fontSize: 11 } : undefined;
  const mark = compact
    ? { stroke: '#e3b341', dash: '4 3', fill: '#e3b341', fontSize: 10 }
    : { stroke: '#5b6477', dash: '4 4', fill: AXIS, fontSize: 11 };
  return (
    <ResponsiveContainer width="100%" height="100%">
      <Chart
        data={data}
        margin={compact ? { top: 6, right: 12, bottom: 0, left: 0 } : { top: 10, right: 20, bottom: 5, left: 0 }}
      >
        <CartesianGrid stroke={GRID} strokeDasharray="3 3" />
        <XAxis
          dataKey={xKey}
          stroke={AXIS}
          type="number"
          domain={['dataMin', 'dataMax']}
          allowDecimals={xDecimals}
          tick={tick}
          tickFormatter={xFormat}
        />
        <YAxis stroke={AXIS} width={yWidth} tick={tick} tickFormatter={yFormat} domain={yDomain} />
        <Tooltip
          contentStyle={{ background: '#171a21', border: `1px solid ${GRID}` }}
          formatter={tipValue}
          labelFormatter={tipLabel}
        />
        {legend && <Legend wrapperStyle={compact ? { fontSize: 11 } : undefined} />}
        {marks.map((m) => (
          <ReferenceLine
            key={m.key}
            x={m.x}
            stroke={mark.stroke}
            strokeDasharray={mark.dash}
            label={{ value: m.label, position: 'insideTopLeft', fill: mark.fill, fontSize: mark.fontSize }}
          />
        ))}
        {children}
      </Chart>
    </ResponsiveContainer>
  );
}
