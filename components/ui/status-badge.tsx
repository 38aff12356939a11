import { runStatusLabel } from './status-label.ts';

/** A run's status; `data-status` is always the status itself, the words may say more (status-label.ts). */
export function StatusBadge({ status, kind, follow }: { status: string; kind?: string; follow?: boolean | null }) {
  return (
    <span className={`badge ${status}`} data-status={status}>
      {runStatusLabel(status, kind, follow)}
    </span>
  );
}
