'use client';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc.ts';
import { StatusBadge } from '../ui/status-badge.tsx';
import type { CheckResult } from '../../contracts/events.ts';
import { formatTime } from '../ui/format.ts';

/** The latest diagnostics result: one row per check, with the fix for anything that is not ok. */
export function DiagnosticsReport() {
  const trpc = useTRPC();
  const latest = useQuery(trpc.system.latestDiagnostics.queryOptions(undefined, { refetchInterval: 3000 }));
  if (latest.error)
    return (
      <div className="panel error" role="alert">
        Could not load diagnostics: {latest.error.message}
      </div>
    );
  if (latest.isPending) return <div className="panel empty">Loading…</div>;
  const d = latest.data;
  if (!d) return <div className="panel empty">Diagnostics have not run yet on this installation.</div>;
  const checks: CheckResult[] = d.report?.checks ?? [];
  return (
    <div className="panel">
      <p>
        Latest run {d.runId ? <Link href={`/runs/${d.runId}`}>{d.runId}</Link> : null} finished{' '}
        {formatTime(d.finishedAt)} on {d.report?.host ?? '?'} <StatusBadge status={d.report?.ok ? 'ok' : 'fail'} />
      </p>
      {d.error && (
        <p className="error" role="alert">
          {d.error}
        </p>
      )}
      <table aria-label="Diagnostics checks">
        <thead>
          <tr>
            <th>Check</th>
            <th>Status</th>
            <th>Detail</th>
            <th>Fix</th>
            <th>ms</th>
          </tr>
        </thead>
        <tbody>
          {checks.map((c) => (
            <tr key={c.name} data-check={c.name}>
              <td>{c.name}</td>
              <td>
                <StatusBadge status={c.status} />
              </td>
              <td>{c.detail}</td>
              <td>{c.fix ?? ''}</td>
              <td>{c.ms}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
