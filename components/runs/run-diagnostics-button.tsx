'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useTRPC } from '@/lib/trpc.ts';

/** Queues a diagnostics run and opens its live page. */
export function RunDiagnosticsButton() {
  const trpc = useTRPC();
  const router = useRouter();
  const launch = useMutation(
    trpc.system.runDiagnostics.mutationOptions({ onSuccess: ({ runId }) => router.push(`/runs/${runId}`) }),
  );
  return (
    <>
      <button type="button" onClick={() => launch.mutate()} disabled={launch.isPending} aria-label="Run diagnostics">
        {launch.isPending ? 'Queuing…' : 'Run diagnostics'}
      </button>
      {launch.error && (
        <span className="error" role="alert">
          {' '}
          {launch.error.message}
        </span>
      )}
    </>
  );
}
