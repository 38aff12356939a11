'use client';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc.ts';
import { StepTimelineView } from '../timeline/step-timeline-panel.tsx';
import type { StepTimeline } from '../../contracts/timeline.ts';

/** A run or step link's step timeline (share.view.timeline): nothing when the step recorded no times. */
export function SharedTimeline({ token, runId, step }: { token: string; runId: string; step: number }) {
  const trpc = useTRPC();
  const q = useQuery(
    trpc.share.view.timeline.queryOptions(
      { token, runId, step },
      { retry: false, staleTime: Number.POSITIVE_INFINITY, refetchOnWindowFocus: false },
    ),
  );
  const t = q.data as StepTimeline | undefined;
  if (!q.error && (!t || t.blocks.length === 0)) return null;
  return <StepTimelineView step={step} timeline={t} error={q.error} />;
}
