'use client';
import { useMutation } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc.ts';

/** An imported run's Follow switch: on, a worker tails its folder from the stored offsets; off, it stops (what was read stays). */
export function FollowSwitch({ runId, following, onDone }: { runId: string; following: boolean; onDone: () => void }) {
  const trpc = useTRPC();
  const set = useMutation(trpc.runs.followImport.mutationOptions({ onSuccess: onDone }));
  return (
    <label>
      {' '}
      <input
        type="checkbox"
        aria-label="Follow"
        checked={following}
        disabled={set.isPending}
        onChange={(e) => set.mutate({ runId, follow: e.target.checked })}
      />{' '}
      Follow
      {set.error && (
        <span className="error" role="alert">
          {' '}
          {set.error.message}
        </span>
      )}
    </label>
  );
}
