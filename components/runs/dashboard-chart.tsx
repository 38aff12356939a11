'use client';
import { memo, useRef } from 'react';
import { Area, Line } from 'recharts';
import { type ChartMark, ChartFrame } from '../ui/chart-frame.tsx';
import { chartRows, panelHeadlines, withBands, type Panel, type SeriesMap, type StageBoundary } from './dashboard.ts';

const COLORS = ['#6aa9ff', '#f0883e', '#3fb950', '#d2a8ff', '#f85149', '#e3b341', '#56d4dd', '#ff7eb6'];

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
  const lo = rows.length ? rows[0]!.step : 0;
  const hi = rows.length ? rows[rows.length - 1]!.step : 0;
  const marks = stages
    .filter((s) => s.startStep > lo && s.startStep <= hi)
    .map((s) => ({ x: s.startStep, label: s.name, key: String(s.stage) }));
  return (
    <figure className="dash-panel" aria-labelledby={titleId} data-panel={panel.id} data-points={rows.length}>
      <PanelHead panel={panel} series={series} titleId={titleId} />
      {present.length === 0 ? (
        <div className="dash-panel-empty muted">No points yet</div>
      ) : (
        <div className="dash-chart">
          <PanelPlot panel={panel} rows={rows} bands={bands} present={present} weight={weight} marks={marks} />
        </div>
      )}
    </figure>
  );
});

/** The panel's title and each line's last logged value, unsmoothed (with its band when it has one). */
function PanelHead({ panel, series, titleId }: { panel: Panel; series: SeriesMap; titleId: string }) {
  const heads = panelHeadlines(panel, series);
  const headStep = Math.max(...heads.map((h) => h.step));
  return (
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
  );
}

type PanelLine = Panel['lines'][number];
interface PlotProps {
  panel: Panel;
  rows: ReturnType<typeof chartRows>;
  bands: NonNullable<Panel['bands']>;
  present: PanelLine[];
  weight: number;
  marks: ChartMark[];
}

/** The colour of one of the panel's lines, by its place in the panel. */
const colorOf = (panel: Panel, key: PanelLine['key']) =>
  COLORS[panel.lines.findIndex((l) => l.key === key) % COLORS.length];

/** The panel's lines in the shared chart frame: stacked areas, or smoothed lines over faint raw ones and bands. */
function PanelPlot(props: PlotProps) {
  return props.panel.kind === 'stacked' ? <StackedPlot {...props} /> : <LinePlot {...props} />;
}

function StackedPlot({ panel, rows, present, marks }: PlotProps) {
  return (
    <ChartFrame
      data={rows}
      kind="area"
      compact
      yFormat={(v) => fmt(v)}
      tipValue={(v) => fmt(v)}
      tipLabel={(s) => `step ${s}`}
      legend
      marks={marks}
    >
      {present.map((l) => {
        const color = colorOf(panel, l.key);
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
    </ChartFrame>
  );
}

function LinePlot({ panel, rows, bands, present, weight, marks }: PlotProps) {
  return (
    <ChartFrame
      data={withBands(rows, bands)}
      kind="composed"
      compact
      yFormat={(v) => fmt(v, panel.percent)}
      yDomain={panel.percent ? [0, 1] : ['auto', 'auto']}
      tipValue={(v) => fmt(v, panel.percent)}
      tipLabel={(s) => `step ${s}`}
      legend={present.length > 1}
      marks={marks}
    >
      {bands.map((b) => (
        <Area
          key={`${b.of}-band`}
          type="linear"
          dataKey={`${b.of as string}~band`}
          name={`${panel.lines.find((l) => l.key === b.of)?.label ?? b.of} 95% band`}
          legendType="none"
          stroke="none"
          fill={colorOf(panel, b.of)}
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
            stroke={colorOf(panel, l.key)}
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
          stroke={colorOf(panel, l.key)}
          strokeWidth={1.6}
          dot={rows.length < 30}
          connectNulls
          isAnimationActive={false}
        />
      ))}
    </ChartFrame>
  );
}
