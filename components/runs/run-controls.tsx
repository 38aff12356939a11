'use client';
import { useMutation } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc.ts';
import { controlsFor } from './dashboard.ts';

/**
 * Cancel (always shown, enabled while the run can still stop), and for training runs Pause while queued or
 * running, Resume while paused. `onDone` refreshes the page's run row.
 */
export function RunControls({
  runId,
  status,
  kind,
  onDone,
}: {
  runId: string;
  status: string;
  kind: string;
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const cancel = useMutation(trpc.runs.cancel.mutationOptions({ onSuccess: onDone }));
  const pause = useMutation(trpc.runs.pause.mutationOptions({ onSuccess: onDone }));
  const resume = useMutation(trpc.runs.resume.mutationOptions({ onSuccess: onDone }));
  const can = controlsFor(status, kind);
  const busy = cancel.isPending || pause.isPending || resume.isPending;
  const error = cancel.error ?? pause.error ?? resume.error;
  return (
    <>
      {can.pause && (
        <button type="button" onClick={() => pause.mutate({ runId })} disabled={busy} aria-label="Pause run">
          Pause
        </button>
      )}
      {can.resume && (
        <button type="button" onClick={() => resume.mutate({ runId })} disabled={busy} aria-label="Resume run">
          Resume
        </button>
      )}
      <button
        type="button"
        className="danger"
        onClick={() => cancel.mutate({ runId })}
        disabled={!can.cancel || busy}
        aria-label="Cancel run"
      >
        Cancel
      </button>
      {error && (
        <span className="error" role="alert">
          Could not {cancel.error ? 'cancel' : pause.error ? 'pause' : 'resume'}: {error.message}
        </span>
      )}
    </>
  );
}
