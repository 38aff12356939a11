'use client';
import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';

/**
 * An imported run's Follow switch: on, a worker tails its folder from the stored offsets; off, it stops (what was read
 * stays). It shows the server's state: after a click it stays disabled, showing what was asked for, until the run
 * reports that state (a second click in between would ask again for what the server was already doing).
 */
export function FollowSwitch({ runId, following, onDone }: { runId: string; following: boolean; onDone: () => void }) {
  const trpc = useTRPC();
  const [asked, setAsked] = useState<boolean | null>(null);
  const set = useMutation(trpc.runs.followImport.mutationOptions({ onSuccess: onDone, onError: () => setAsked(null) }));
  // The server's answer arrived: the switch is the server's again.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the reported state changes
  useEffect(() => setAsked(null), [following]);
  const settling = asked !== null && asked !== following;
  return (
    <label>
      {' '}
      <input
        type="checkbox"
        aria-label="Follow"
        checked={settling ? asked : following}
        disabled={set.isPending || settling}
        onChange={(e) => {
          setAsked(e.target.checked);
          set.mutate({ runId, follow: e.target.checked });
        }}
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
