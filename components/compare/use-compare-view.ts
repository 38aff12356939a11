'use client';
import { keepPreviousData, skipToken, useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useMemo, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { axisOrigin, axisX, type Point, X_AXES, type XAxisKind } from './align.ts';
import { useChosenKeys } from './metric-overlays.tsx';
import type { StageMark } from './overlay-chart.tsx';
import { compareHref, MIN_COMPARE } from './selection.ts';

/** The compare page's state: the picked runs (kept in the URL), their comparison, the metric keys and the x axis. */
export function useCompareView(initialRunIds: string[]) {
  const trpc = useTRPC();
  const router = useRouter();
  const [selected, setSelected] = useState(initialRunIds);
  const [axis, setAxis] = useState<XAxisKind>('step');
  const [showPicker, setShowPicker] = useState(initialRunIds.length < MIN_COMPARE);

  const select = (ids: string[]) => {
    setSelected(ids);
    router.replace(compareHref(ids), { scroll: false });
  };

  const ready = selected.length >= MIN_COMPARE;
  const cmp = useQuery(
    trpc.runs.compare.queryOptions(ready ? { runIds: selected } : skipToken, {
      placeholderData: keepPreviousData,
      retry: false,
      refetchInterval: 15_000,
    }),
  );
  const data = ready ? cmp.data : undefined;
  const { keys, shown, setChosen } = useChosenKeys(data?.series, selected);
  const origins = useMemo(
    () =>
      Object.fromEntries(
        (data?.runs ?? []).map((r) => [r.id, axisOrigin(data!.series[r.id] ?? {}, r.stageBoundaries)]),
      ),
    [data],
  );
  const xLabel = X_AXES.find((a) => a.id === axis)!.label;
  const stages = useMemo<StageMark[]>(() => {
    const marks = new Map<number, string>();
    for (const r of data?.runs ?? [])
      for (const s of r.stageBoundaries) if (s.startStep > 1 && !marks.has(s.startStep)) marks.set(s.startStep, s.name);
    return [...marks].map(([step, label]) => ({ step, label }));
  }, [data]);
  const x = (id: string, p: Point) => (origins[id] ? axisX(axis, p, origins[id]) : null);

  return {
    selected,
    select,
    ready,
    cmp,
    data,
    keys,
    shown,
    setChosen,
    axis,
    setAxis,
    xLabel,
    stages: axis === 'step' ? stages : [],
    x,
    showPicker,
    setShowPicker,
  };
}
