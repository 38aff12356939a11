import Link from 'next/link';
import type { ReactNode } from 'react';
import { runColor } from '../ui/run-colors.ts';
import { StatusBadge } from '../ui/status-badge.tsx';

export interface ComparedRun {
  id: string;
  name: string;
  kind: string;
  status: string;
  step: number;
  totalSteps?: number | null;
  error?: string | null;
}

/** A column after the run's kind, status and step: the compare page shows stages, a share link the run's times. */
export interface RunColumn<R> {
  header: string;
  cell: (run: R) => ReactNode;
}

/**
 * The compared runs, one row each with its swatch in the charts' colour. `runHref` links a run's name (a share
 * link leaves it out: it carries no link into the app); `markBase` marks the first run as the recipe base.
 */
export function ComparedRunsTable<R extends ComparedRun>({
  runs,
  columns,
  runHref,
  markBase = false,
  showErrors = false,
}: {
  runs: R[];
  columns: RunColumn<R>[];
  runHref?: (run: R) => string;
  markBase?: boolean;
  showErrors?: boolean;
}) {
  return (
    <table aria-label="Compared runs">
      <thead>
        <tr>
          <th scope="col">Run</th>
          <th scope="col">Kind</th>
          <th scope="col">Status</th>
          <th scope="col">Step</th>
          {columns.map((c) => (
            <th scope="col" key={c.header}>
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {runs.map((r, i) => (
          <tr key={r.id}>
            <td>
              <span className="cmp-swatch" style={{ background: runColor(i) }} aria-hidden="true" />
              {runHref ? <Link href={runHref(r)}>{r.name}</Link> : r.name}{' '}
              <span className="muted">
                {r.id}
                {markBase && i === 0 ? ' · base' : ''}
              </span>
              {showErrors && r.error && <div className="error">{r.error.slice(0, 160)}</div>}
            </td>
            <td>{r.kind}</td>
            <td>
              <StatusBadge status={r.status} />
            </td>
            <td>
              {r.step}
              {r.totalSteps ? ` / ${r.totalSteps}` : ''}
            </td>
            {columns.map((c) => (
              <td key={c.header}>{c.cell(r)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
