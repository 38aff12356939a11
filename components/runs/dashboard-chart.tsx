'use client';
import { memo, useRef } from 'react';
import {
  Area,
  AreaChart,
  CartesianGrid,
  ComposedChart,
  Legend,
  Line,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { chartRows, panelHeadlines, withBands, type Panel, type SeriesMap, type StageBoundary } from './dashboard.ts';

const COLORS = ['#6aa9ff', '#f0883e', '#3fb950', '#d2a8ff', '#f85149', '#e3b341', '#56d4dd', '#ff7eb6'];
const GRID = '#2a2f3a';
const AXIS = '#9aa3b2';

function fmt(v: unknown, percent?: boolean): string {
  if (Array.isArray(v)) return `${fmt(v[0], percent)}–${fmt(v[1], percent)}`; // a band's [lo, hi]
  if (typeof v !== 'number' || !Number.isFinite(v)) return '—';
  if (percent) return `${(100 * v).toFixed(1)}%`;
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2) : Number(v.toPrecision(4)).toString();
}

/**
 * One dashboard panel: its metrics against step, smoothed (debiased EMA, smoothing.ts) over the faint raw values
 * (evaluation panels never: Panel.raw), or stacked areas for the step-time breakdown; a dashed line at each stage
 * start. The head shows each line's last logged value, unsmoothed (panelHeadlines).
 */
export const DashboardChart = memo(function DashboardChart({
  panel,
  series,
  weight: slider,
  stages,
}: {
  panel: Panel;
  series: SeriesMap;
  weight: number;
  stages: StageBoundary[];
}) {
  const weight = panel.raw ? 0 : slider;
  const keys = panel.lines.map((l) => l.key);
  const bands = (panel.bands ?? []).filter((b) => (series[b.lo]?.length ?? 0) > 0);
  const rowKeys = [...keys, ...bands.flatMap((b) => [b.lo, b.hi])];
  // Rows are recomputed only when one of the panel's own series (or the weight) changes: a new point of another
  // metric does not redo this chart's smoothing. (A ref, not useMemo: the eval panel's key count can grow.)
  const own = rowKeys.map((k) => series[k]);
  const cache = useRef<{ own: unknown[]; weight: number; rows: ReturnType<typeof chartRows> } | null>(null);
  const c = cache.current;
  if (!c || c.weight !== weight || c.own.length !== own.length || c.own.some((s, i) => s !== own[i])) {
    cache.current = { own, weight, rows: chartRows(series, rowKeys, weight) };
  }
  const rows = cache.current!.rows;
  const present = panel.lines.filter((l) => (series[l.key]?.length ?? 0) > 0);
  const titleId = `panel-${panel.id}`;
  const heads = panelHeadlines(panel, series);
  const headStep = Math.max(...heads.map((h) => h.step));
  const lo = rows.length ? rows[0]!.step : 0;
  const hi = rows.length ? rows[rows.length - 1]!.step : 0;
  const marks = stages.filter((s) => s.startStep > lo && s.startStep <= hi);
  return (
    <figure className="dash-panel" aria-labelledby={titleId} data-panel={panel.id} data-points={rows.length}>
      <figcaption className="dash-panel-head">
        <span id={titleId} className="dash-panel-title">
          {panel.title}
        </span>
        {heads.length > 0 && (
          <span
            className="muted dash-panel-last"
            title={`last logged values, unsmoothed (step ${headStep})`}
            data-headline={heads.map((h) => h.value ?? '').join(' ')}
          >
            {heads
              .map(
                (h) =>
                  `${heads.length > 1 ? `${h.label} ` : ''}${fmt(h.value, panel.percent)}${
                    h.band ? ` [${fmt(h.band.lo, panel.percent)}–${fmt(h.band.hi, panel.percent)}]` : ''
                  }`,
              )
              .join(' · ')}
          </span>
        )}
      </figcaption>
      {present.length === 0 ? (
        <div className="dash-panel-empty muted">No points yet</div>
      ) : (
        <div className="dash-chart">
          <ResponsiveContainer width="100%" height="100%">
            {panel.kind === 'stacked' ? (
              <AreaChart data={rows} margin={{ top: 6, right: 12, bottom: 0, left: 0 }}>
                <CartesianGrid stroke={GRID} strokeDasharray="3 3" />
                <XAxis
                  dataKey="step"
                  stroke={AXIS}
                  type="number"
                  domain={['dataMin', 'dataMax']}
                  allowDecimals={false}
                  tick={{ fontSize: 11 }}
                />
                <YAxis stroke={AXIS} width={48} tick={{ fontSize: 11 }} tickFormatter={(v: number) => fmt(v)} />
                <Tooltip
                  contentStyle={{ background: '#171a21', border: `1px solid ${GRID}` }}
                  formatter={(v) => fmt(v)}
                  labelFormatter={(s) => `step ${s}`}
                />
                <Legend wrapperStyle={{ fontSize: 11 }} />
                {present.map((l) => {
                  const color = COLORS[keys.indexOf(l.key) % COLORS.length];
                  return (
                    <Area
                      key={l.key}
                      type="monotone"
                      dataKey={`${l.key as string}~`}
                      name={l.label}
                      stackId="t"
                      stroke={color}
                      fill={color}
                      fillOpacity={0.35}
                      connectNulls
                      isAnimationActive={false}
                    />
                  );
                })}
                {marks.map((s) => (
                  <ReferenceLine
                    key={s.stage}
                    x={s.startStep}
                    stroke="#e3b341"
                    strokeDasharray="4 3"
                    label={{ value: s.name, position: 'insideTopLeft', fill: '#e3b341', fontSize: 10 }}
                  />
                ))}
              </AreaChart>
            ) : (
              <ComposedChart data={withBands(rows, bands)} margin={{ top: 6, right: 12, bottom: 0, left: 0 }}>
                <CartesianGrid stroke={GRID} strokeDasharray="3 3" />
                <XAxis
                  dataKey="step"
                  stroke={AXIS}
                  type="number"
                  domain={['dataMin', 'dataMax']}
                  allowDecimals={false}
                  tick={{ fontSize: 11 }}
                />
                <YAxis
                  stroke={AXIS}
                  width={48}
                  tick={{ fontSize: 11 }}
                  tickFormatter={(v: number) => fmt(v, panel.percent)}
                  domain={panel.percent ? [0, 1] : ['auto', 'auto']}
                />
                <Tooltip
                  contentStyle={{ background: '#171a21', border: `1px solid ${GRID}` }}
                  formatter={(v) => fmt(v, panel.percent)}
                  labelFormatter={(s) => `step ${s}`}
                />
                {present.length > 1 && <Legend wrapperStyle={{ fontSize: 11 }} />}
                {bands.map((b) => (
                  <Area
                    key={`${b.of}-band`}
                    type="linear"
                    dataKey={`${b.of as string}~band`}
                    name={`${panel.lines.find((l) => l.key === b.of)?.label ?? b.of} 95% band`}
                    legendType="none"
                    stroke="none"
                    fill={COLORS[keys.indexOf(b.of) % COLORS.length]}
                    fillOpacity={0.18}
                    connectNulls
                    isAnimationActive={false}
                  />
                ))}
                {weight > 0 &&
                  present.map((l) => (
                    <Line
                      key={`${l.key}-raw`}
                      type="linear"
                      dataKey={l.key}
                      name={`${l.label} (raw)`}
                      legendType="none"
                      stroke={COLORS[keys.indexOf(l.key) % COLORS.length]}
                      strokeOpacity={0.25}
                      dot={false}
                      connectNulls
                      isAnimationActive={false}
                    />
                  ))}
                {present.map((l) => (
                  <Line
                    key={l.key}
                    type="linear"
                    dataKey={`${l.key as string}~`}
                    name={l.label}
                    stroke={COLORS[keys.indexOf(l.key) % COLORS.length]}
                    strokeWidth={1.6}
                    dot={rows.length < 30}
                    connectNulls
                    isAnimationActive={false}
                  />
                ))}
                {marks.map((s) => (
                  <ReferenceLine
                    key={s.stage}
                    x={s.startStep}
                    stroke="#e3b341"
                    strokeDasharray="4 3"
                    label={{ value: s.name, position: 'insideTopLeft', fill: '#e3b341', fontSize: 10 }}
                  />
                ))}
              </ComposedChart>
            )}
          </ResponsiveContainer>
        </div>
      )}
    </figure>
  );
});
