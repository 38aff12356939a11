'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useTRPC } from '@/lib/trpc.ts';
import { errorCode } from '../ui/error-code.ts';
import { SharedBanner, SharedError, SharedNotFound } from './shared-states.tsx';
import { SharedTrajectory } from './shared-trajectory.tsx';

/** A trajectory opened from a shared run or step: the banner, a way back, then the trajectory. */
export function SharedTrajectoryPage({ token, trajectoryId }: { token: string; trajectoryId: string }) {
  const trpc = useTRPC();
  const summary = useQuery(
    trpc.share.view.summary.queryOptions({ token }, { retry: false, refetchOnWindowFocus: false }),
  );
  if (summary.error)
    return errorCode(summary.error) === 'NOT_FOUND' ? (
      <SharedNotFound />
    ) : (
      <SharedError what="the shared view" message={summary.error.message} retry={() => void summary.refetch()} />
    );
  if (!summary.data)
    return (
      <div className="panel empty" role="status">
        Opening the shared link…
      </div>
    );
  const run = summary.data.runs[0];
  return (
    <div className="share-view" data-scope={summary.data.scope}>
      <SharedBanner label={summary.data.label} expiresAt={summary.data.expiresAt} />
      <p>
        <Link href={`/s/${encodeURIComponent(token)}`}>
          ← Back to the shared {summary.data.scope === 'step' ? 'step' : 'run'}
          {run ? ` (${run.name})` : ''}
        </Link>
      </p>
      <SharedTrajectory token={token} trajectoryId={trajectoryId} />
    </div>
  );
}
