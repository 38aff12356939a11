'use client';
import { skipToken, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import type { StepTimeline } from '../../contracts/timeline.ts';
import { timelineIsFinal, timelineRefresh } from './timeline-refresh.ts';

/** The timeline panel's state: the steps with training trajectories, the chosen one (the latest until picked), its timeline. */
export function useStepTimeline(runId: string) {
  const trpc = useTRPC();
  const steps = useQuery(
    trpc.trajectories.steps.queryOptions({ runId, split: 'train' }, { refetchInterval: 15_000, retry: false }),
  );
  const [chosen, setChosen] = useState<number | null>(null);
  const list = steps.data?.map((s) => s.step) ?? [];
  const step = chosen !== null && list.includes(chosen) ? chosen : (list.at(-1) ?? null);
  const isNewest = step !== null && step === list.at(-1);
  const timeline = useQuery(
    trpc.runs.timeline.queryOptions(step === null ? skipToken : { runId, step }, {
      retry: false,
      staleTime: (q) => (timelineIsFinal(q.state.data, isNewest) ? Number.POSITIVE_INFINITY : 0),
      refetchInterval: (q) => timelineRefresh(q.state.data, isNewest),
      refetchOnWindowFocus: false,
    }),
  );
  return {
    steps: list,
    stepsError: steps.error,
    step,
    choose: setChosen,
    timeline: timeline.data as StepTimeline | undefined,
    timelineError: timeline.error,
  };
}
