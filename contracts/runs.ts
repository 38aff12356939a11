/** A run's lifecycle states and kinds, as the store keeps them and every page shows them. */
export type RunStatus = 'queued' | 'running' | 'paused' | 'succeeded' | 'failed' | 'cancelled';
export const FINISHED: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];
export const isFinished = (status: string): boolean => (FINISHED as readonly string[]).includes(status);

/** What a run is: each kind is launched by server/lifecycle.ts and run by the job of the same kind. */
export type RunKind = 'train' | 'eval' | 'diagnostics' | (string & {});

/** Where each stage of a training run starts on the run's global step axis (the `stage` event's data). */
export interface StageEventData {
  stage: number;
  name: string;
  type: string;
  startStep: number;
}
