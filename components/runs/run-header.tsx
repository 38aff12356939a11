import type { ReactNode } from 'react';
import { StatusBadge } from '../ui/status-badge.tsx';

/** A run's heading row: its name, its status and, on the run page, its actions. The share view shows it bare. */
export function RunHeader({
  heading,
  status,
  kind,
  follow,
  children,
}: {
  heading: string;
  status: string;
  kind?: string;
  follow?: boolean | null;
  children?: ReactNode;
}) {
  return (
    <div className="row" style={{ justifyContent: 'space-between' }}>
      <h1>{heading}</h1>
      <div className="row">
        <StatusBadge status={status} kind={kind} follow={follow} />
        {children}
      </div>
    </div>
  );
}

/** A run's facts on one muted line: the parts it has, joined by a dot. */
export function RunFacts({ parts }: { parts: (string | false | null | undefined)[] }) {
  return <p className="muted">{parts.filter(Boolean).join(' · ')}</p>;
}

/** The run's log beside its all-metrics chart: the run page's live ones, a share link's read-only ones. */
export function RunLogAndMetrics({
  logTitle,
  log,
  metricsTitle,
  metrics,
}: {
  logTitle: string;
  log: ReactNode;
  metricsTitle: string;
  metrics: ReactNode;
}) {
  return (
    <div className="grid2">
      <section aria-label="Run log">
        <h2>{logTitle}</h2>
        {log}
      </section>
      <section aria-label="Run metrics">
        <h2>{metricsTitle}</h2>
        {metrics}
      </section>
    </div>
  );
}
