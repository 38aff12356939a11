'use client';
import { useMemo, useState } from 'react';
import { defaultCompareKeys, type Point, type RunSeries, unionKeys } from './align.ts';
import { KeyPicker } from './key-picker.tsx';
import { OverlayChart, type OverlayRun, type StageMark } from './overlay-chart.tsx';

/** The metric keys of compared runs: all of them, the ones ticked (by default those the runs share), and the ticking. */
export function useChosenKeys(series: RunSeries | undefined, runIds: string[]) {
  const [chosen, setChosen] = useState<string[] | null>(null);
  const keys = useMemo(() => (series ? unionKeys(series) : []), [series]);
  const shown = (chosen ?? (series ? defaultCompareKeys(series, runIds) : [])).filter((k) => keys.includes(k));
  return { keys, shown, setChosen };
}

/** The key picker and one overlay chart per ticked key: the compare page's metrics and a shared comparison's. */
export function MetricOverlays({
  keys,
  shown,
  onChange,
  runs,
  series,
  stages,
  x,
  xLabel,
}: {
  keys: string[];
  shown: string[];
  onChange: (keys: string[]) => void;
  runs: OverlayRun[];
  series: RunSeries;
  stages?: StageMark[];
  x?: (runId: string, p: Point) => number | null;
  xLabel?: string;
}) {
  return (
    <>
      <KeyPicker keys={keys} chosen={shown} onChange={onChange} />
      {keys.length > 0 && shown.length === 0 && <div className="panel empty">Tick a metric above to chart it.</div>}
      <div className="cmp-charts">
        {shown.map((k) => (
          <OverlayChart key={k} metricKey={k} runs={runs} series={series} stages={stages} x={x} xLabel={xLabel} />
        ))}
      </div>
    </>
  );
}
