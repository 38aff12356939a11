/** What a share link points at (a run, a step, a trajectory, a comparison or a trace view): matching, narrowing, describing. Pure. */
import type { ShareTargetInput } from '../../contracts/share.ts';

/** Whether a listed link (its stored target) is a link to the same thing the dialog shares. */
export function sameTarget(want: ShareTargetInput, link: { scope: string; target: unknown }): boolean {
  if (link.scope !== want.scope) return false;
  const t = (link.target ?? {}) as Record<string, unknown>;
  switch (want.scope) {
    case 'run':
      return t.runId === want.target.runId;
    case 'step':
      return t.runId === want.target.runId && t.step === want.target.step;
    case 'trajectory':
      return t.trajectoryId === want.target.trajectoryId;
    case 'compare': {
      const ids = Array.isArray(t.runIds) ? (t.runIds as unknown[]) : [];
      return ids.length === want.target.runIds.length && want.target.runIds.every((id) => ids.includes(id));
    }
    case 'traces': {
      // Order matters here: the columns are drawn in the link's order.
      const ids = Array.isArray(t.runIds) ? (t.runIds as unknown[]) : [];
      return (
        t.problemId === want.target.problemId &&
        ids.length === want.target.runIds.length &&
        want.target.runIds.every((id, i) => ids[i] === id)
      );
    }
  }
}

/** The run a dialog's list can be narrowed to on the server (`share.list({runId})`); none for a trajectory. */
export function listRunId(want: ShareTargetInput): string | undefined {
  switch (want.scope) {
    case 'run':
    case 'step':
      return want.target.runId;
    case 'compare':
    case 'traces':
      return want.target.runIds[0];
    case 'trajectory':
      return undefined;
  }
}

/** What the link shares, in words. */
export function describeTarget(scope: string, target: unknown): string {
  const t = (target ?? {}) as Record<string, unknown>;
  switch (scope) {
    case 'run':
      return `run ${String(t.runId)}`;
    case 'step':
      return `run ${String(t.runId)}, step ${String(t.step)}`;
    case 'trajectory':
      return `trajectory ${String(t.trajectoryId)}`;
    case 'compare':
      return `${Array.isArray(t.runIds) ? t.runIds.length : '?'} runs: ${Array.isArray(t.runIds) ? t.runIds.join(', ') : ''}`;
    case 'traces':
      return `problem ${String(t.problemId)} in ${Array.isArray(t.runIds) ? t.runIds.length : '?'} runs: ${Array.isArray(t.runIds) ? t.runIds.join(', ') : ''}`;
    default:
      return scope;
  }
}
