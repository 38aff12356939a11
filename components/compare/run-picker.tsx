'use client';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { StatusBadge } from '../ui/status-badge.tsx';
import { formatTime } from '../ui/format.ts';
import { MAX_COMPARE, toggleRun } from './selection.ts';
import { runColor } from '../ui/run-colors.ts';

/** Choose 2–8 runs from `runs.list`; the chosen ones keep the order they were picked in (the first is the base). */
export function RunPicker({ selected, onChange }: { selected: string[]; onChange: (ids: string[]) => void }) {
  const trpc = useTRPC();
  const runs = useQuery(trpc.runs.list.queryOptions({ limit: 200 }, { refetchInterval: 10_000 }));
  const [filter, setFilter] = useState('');
  const full = selected.length >= MAX_COMPARE;

  let body: React.ReactNode;
  if (runs.error)
    body = (
      <div className="error" role="alert">
        Could not list runs: {runs.error.message}
      </div>
    );
  else if (!runs.data)
    body = (
      <div className="empty" role="status">
        Loading runs…
      </div>
    );
  else if (runs.data.length === 0)
    body = <div className="empty">No runs yet: launch a recipe, then compare its runs here.</div>;
  else {
    const f = filter.trim().toLowerCase();
    const shown = f
      ? runs.data.filter((r) => `${r.name} ${r.id} ${r.kind} ${r.status}`.toLowerCase().includes(f))
      : runs.data;
    body = <RunTable runs={shown} selected={selected} onChange={onChange} full={full} filter={filter} />;
  }

  return (
    <section className="panel" aria-label="Choose runs">
      <div className="row" style={{ justifyContent: 'space-between', marginBottom: 8 }}>
        <strong>
          Runs{' '}
          <span className="muted">
            ({selected.length} chosen; 2–{MAX_COMPARE})
          </span>
        </strong>
        <div className="row">
          <input
            type="search"
            aria-label="Filter runs"
            placeholder="Filter runs…"
            value={filter}
            onChange={(e) => setFilter(e.target.value)}
          />
          <button type="button" onClick={() => onChange([])} disabled={selected.length === 0}>
            Clear runs
          </button>
        </div>
      </div>
      {full && (
        <p className="muted" role="status" style={{ margin: '0 0 8px' }}>
          At most {MAX_COMPARE} runs: remove one to add another.
        </p>
      )}
      {body}
    </section>
  );
}

type ListedRun = {
  id: string;
  name: string;
  kind: string;
  status: string;
  step: number;
  totalSteps: number | null;
  createdAt: string | Date;
};

/** The listed runs, each with its checkbox and, once chosen, its swatch in the charts' colour. */
function RunTable({
  runs: shown,
  selected,
  onChange,
  full,
  filter,
}: {
  runs: ListedRun[];
  selected: string[];
  onChange: (ids: string[]) => void;
  full: boolean;
  filter: string;
}) {
  return (
    <div className="cmp-runlist">
      <table aria-label="Runs to compare">
        <thead>
          <tr>
            <th scope="col">
              <span className="sr-only">Chosen</span>
            </th>
            <th scope="col">Run</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col">Step</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => {
            const at = selected.indexOf(r.id);
            return (
              <tr key={r.id} className={at >= 0 ? 'cmp-picked' : undefined}>
                <td>
                  <input
                    type="checkbox"
                    checked={at >= 0}
                    disabled={at < 0 && full}
                    onChange={() => onChange(toggleRun(selected, r.id))}
                    aria-label={`Compare ${r.name} (${r.id})`}
                  />
                  {at >= 0 && <span className="cmp-swatch" style={{ background: runColor(at) }} aria-hidden="true" />}
                </td>
                <td>
                  {r.name} <span className="muted">{r.id}</span>
                </td>
                <td>{r.kind}</td>
                <td>
                  <StatusBadge status={r.status} />
                </td>
                <td>
                  {r.step}
                  {r.totalSteps ? ` / ${r.totalSteps}` : ''}
                </td>
                <td>{formatTime(r.createdAt)}</td>
              </tr>
            );
          })}
          {shown.length === 0 && (
            <tr>
              <td colSpan={6} className="empty">
                No run matches “{filter}”.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
