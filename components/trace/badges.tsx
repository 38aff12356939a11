import type { ToolStatus } from '../../contracts/trajectory.ts';

/** globals.css colours badges by class: green ok, amber for resource limits, red for failures. */
const TOOL_CLASS: Record<ToolStatus, string> = {
  ok: 'ok',
  timeout: 'warn',
  memory: 'warn',
  output_limit: 'warn',
  error: 'fail',
  internal: 'fail',
  parse_error: 'fail',
};

export function ToolStatusBadge({ status }: { status: ToolStatus }) {
  return (
    <span className={`badge ${TOOL_CLASS[status] ?? 'warn'}`} data-status={status}>
      {status}
    </span>
  );
}

/** The trajectory's one verdict (TrajectoryDetail.correct): correct, incorrect, or none (an import without one). */
export function CorrectBadge({ correct }: { correct: boolean | null | undefined }) {
  if (correct === null || correct === undefined) return <span className="badge warn">no verdict</span>;
  return <span className={`badge ${correct ? 'ok' : 'fail'}`}>{correct ? 'correct' : 'incorrect'}</span>;
}
