'use client';
import { useQueries, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { diffSpecs } from '../../contracts/recipe-diff.ts';
import type { SharedRunFull, SharedRunHeader } from '../../contracts/share.ts';
import type { RunSeries } from '../compare/align.ts';
import { useChosenKeys } from '../compare/metric-overlays.tsx';

/**
 * The share view's queries: only share.view.* with the link's token, never an app procedure (a signed-out page
 * would get 401s). Every answer of NOT_FOUND (dead, expired, revoked or out-of-scope) is the link's not-found state.
 */
export function useSharedSummary(token: string) {
  const trpc = useTRPC();
  return useQuery(trpc.share.view.summary.queryOptions({ token }, { retry: false, refetchOnWindowFocus: false }));
}

/** A run as the link shows it (contracts/share.ts): the header, and for run and compare links the rest; times arrive as JSON strings. */
type Wire<T> = {
  [K in keyof T]: T[K] extends Date ? string | Date : T[K] extends Date | null ? string | Date | null : T[K];
};
export type RunInfo = Wire<SharedRunHeader> & Partial<Omit<SharedRunFull, keyof SharedRunHeader>>;

/** A shared run's metric series; `live` polls them (a run link), a step link reads them once. */
export function useSharedMetrics(token: string, runId: string, live: boolean) {
  const trpc = useTRPC();
  return useQuery(
    trpc.share.view.metrics.queryOptions(
      { token, runId },
      { retry: false, ...(live ? { refetchInterval: 15_000 } : {}) },
    ),
  );
}

export function useSharedLog(token: string) {
  const trpc = useTRPC();
  return useQuery(
    trpc.share.view.events.queryOptions({ token, limit: 300 }, { retry: false, refetchInterval: 10_000 }),
  );
}

export const TRAJECTORY_PAGE = 50;

/** A page of a shared run's trajectories at one step, the step (typed, or one back or on) and the page's offset. */
export function useSharedTrajectories(token: string, runId: string, initialStep: number) {
  const trpc = useTRPC();
  const [step, setStep] = useState(initialStep);
  const [draft, setDraft] = useState(String(initialStep));
  const [cursor, setCursor] = useState(0);
  const q = useQuery(
    trpc.share.view.trajectories.queryOptions({ token, runId, step, limit: TRAJECTORY_PAGE, cursor }, { retry: false }),
  );
  const go = (n: number) => {
    const v = Math.max(0, Math.floor(n));
    setStep(v);
    setDraft(String(v));
    setCursor(0);
  };
  return { step, draft, setDraft, cursor, setCursor, q, go };
}

/** A shared comparison: each run's metrics through the link, the keys to chart and the recipe differences. */
export function useSharedCompare(token: string, runs: RunInfo[]) {
  const trpc = useTRPC();
  const metrics = useQueries({
    queries: runs.map((r) =>
      trpc.share.view.metrics.queryOptions({ token, runId: r.id }, { retry: false, refetchInterval: 15_000 }),
    ),
  });
  const loaded = metrics.every((m) => m.data);
  const failed = metrics.find((m) => m.error);
  const series: RunSeries = useMemo(
    () => Object.fromEntries(metrics.map((m, i) => [runs[i]!.id, m.data?.series ?? {}])),
    [metrics, runs],
  );
  const chosen = useChosenKeys(
    series,
    runs.map((r) => r.id),
  );
  const recipeDiff = useMemo(
    () => runs.slice(1).map((r) => ({ runId: r.id, diff: diffSpecs(runs[0]?.recipeSpec, r.recipeSpec) })),
    [runs],
  );
  const retry = () => metrics.forEach((m) => void m.refetch());
  return { loaded, failed, series, recipeDiff, retry, ...chosen };
}
