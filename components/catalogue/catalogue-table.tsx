'use client';
/**
 * The catalogue of the Models and Datasets pages: what `npx toolsmith model fetch` / `dataset add` know,
 * each with whether it is here, and for a researcher or an admin a button that starts the fetch or add as a job
 * (a run with its log, linked while it runs). Viewers see the list without the buttons (the procedures refuse them).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useCallback, useEffect, useRef } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { roleRank } from '../../contracts/access.ts';

export interface CatalogueRow {
  name: string;
  description: string;
  license: string;
  source: string;
  present: boolean;
  run: { id: string; status: string } | null;
}

export function CatalogueTable({
  label,
  verb,
  rows,
  start,
  pending,
  error,
}: {
  label: string;
  /** "Fetch" or "Add". */
  verb: string;
  rows: CatalogueRow[];
  start: (name: string) => void;
  pending: boolean;
  error: string | null;
}) {
  const trpc = useTRPC();
  const me = useQuery(trpc.auth.me.queryOptions(undefined, { staleTime: 60_000, retry: false }));
  const role = me.data?.user?.role;
  const canAct = role !== undefined && roleRank(role) >= roleRank('researcher');
  return (
    <section className="panel" aria-label={label}>
      <h2>{label}</h2>
      <table aria-label={label}>
        <thead>
          <tr>
            <th>Name</th>
            <th>What</th>
            <th>Licence</th>
            <th>From</th>
            <th>Here</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.name} data-catalogue={r.name}>
              <td>{r.name}</td>
              <td>{r.description}</td>
              <td>{r.license}</td>
              <td>{r.source}</td>
              <td>
                {r.run ? (
                  <Link
                    href={`/runs/${encodeURIComponent(r.run.id)}`}
                    aria-label={`${verb} ${r.name}: ${r.run.status}`}
                  >
                    {r.run.status === 'queued' ? 'queued · waiting for a worker' : `${verb.toLowerCase()}ing…`}
                  </Link>
                ) : r.present ? (
                  'yes'
                ) : canAct ? (
                  <button type="button" disabled={pending} onClick={() => start(r.name)}>
                    {verb} {r.name}
                  </button>
                ) : (
                  'no'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {error && (
        <p className="error" role="alert">
          {verb} failed: {error}
        </p>
      )}
    </section>
  );
}

/** The catalogue rows of one kind, refreshed while a fetch or add runs, and the mutation that starts one. */
export function useCatalogue(kind: 'models' | 'datasets') {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // Poll only while something is in progress; when the last one ends, what is here (and the designer's preflight)
  // is read again.
  const poll = (data: CatalogueRow[] | undefined) => ((data ?? []).some((r) => r.run !== null) ? 1500 : false);
  const models = useQuery(
    trpc.models.catalogue.queryOptions(undefined, {
      enabled: kind === 'models',
      refetchInterval: (q) => poll(q.state.data),
    }),
  );
  const datasets = useQuery(
    trpc.datasets.catalogue.queryOptions(undefined, {
      enabled: kind === 'datasets',
      refetchInterval: (q) => poll(q.state.data),
    }),
  );
  const rows = kind === 'models' ? models : datasets;
  const running = (rows.data ?? []).filter((r) => r.run !== null).length;
  const invalidate = useCallback(() => {
    void queryClient.invalidateQueries(trpc.models.pathFilter());
    void queryClient.invalidateQueries(trpc.datasets.pathFilter());
    void queryClient.invalidateQueries(trpc.recipes.preflight.pathFilter());
  }, [queryClient, trpc]);
  const before = useRef(0);
  useEffect(() => {
    if (running < before.current) invalidate();
    before.current = running;
  }, [running, invalidate]);
  const fetchModel = useMutation(trpc.models.fetch.mutationOptions({ onSuccess: invalidate }));
  const addDataset = useMutation(trpc.datasets.add.mutationOptions({ onSuccess: invalidate }));
  const m = kind === 'models' ? fetchModel : addDataset;
  return { rows, start: (name: string) => m.mutate({ name }), pending: m.isPending, error: m.error?.message ?? null };
}
