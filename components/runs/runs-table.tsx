'use client';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc.ts';
import { StatusBadge } from '../ui/status-badge.tsx';
import { formatTime } from '../ui/format.ts';

export function RunsTable({ kind }: { kind?: string }) {
  const trpc = useTRPC();
  const runs = useQuery(trpc.runs.list.queryOptions({ kind, limit: 50 }, { refetchInterval: 2000 }));
  if (runs.error)
    return (
      <div className="panel error" role="alert">
        Could not list runs: {runs.error.message}
      </div>
    );
  if (!runs.data) return <div className="panel empty">Loading runs…</div>;
  if (runs.data.length === 0)
    return <div className="panel empty">No runs yet. Run diagnostics to check this machine, or launch a recipe.</div>;
  return (
    <table aria-label="Runs">
      <thead>
        <tr>
          <th>Run</th>
          <th>Kind</th>
          <th>Status</th>
          <th>Step</th>
          <th>Created</th>
        </tr>
      </thead>
      <tbody>
        {runs.data.map((r) => (
          <tr key={r.id}>
            <td>
              <Link href={`/runs/${r.id}`}>{r.name}</Link>
            </td>
            <td>{r.kind}</td>
            <td>
              <StatusBadge status={r.status} kind={r.kind} follow={r.follow} />
              {r.error ? <span className="error"> {r.error.slice(0, 120)}</span> : null}
            </td>
            <td>
              {r.step}
              {r.totalSteps ? ` / ${r.totalSteps}` : ''}
            </td>
            <td>{formatTime(r.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
