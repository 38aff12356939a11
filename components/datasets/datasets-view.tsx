'use client';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { formatTime } from '../ui/format.ts';

/** Imported datasets (every version) and, for the chosen one, its first problems. */
export function DatasetsView() {
  const trpc = useTRPC();
  const list = useQuery(trpc.datasets.list.queryOptions({ latestOnly: false, limit: 200 }));
  const [chosen, setChosen] = useState<string | null>(null);
  if (list.error)
    return (
      <div className="panel error" role="alert">
        Could not list datasets: {list.error.message}
      </div>
    );
  if (!list.data) return <div className="panel empty">Loading datasets…</div>;
  if (list.data.length === 0) {
    return (
      <div className="panel empty">
        No datasets yet. Import one with <code>npx toolsmith dataset import FILE --name NAME</code> (JSONL, CSV or
        Parquet), or add real problems from the catalogue below (or{' '}
        <code>npx toolsmith dataset add gsm8k-test-100</code>).
      </div>
    );
  }
  return (
    <div>
      <table aria-label="Datasets">
        <thead>
          <tr>
            <th>Name</th>
            <th>Version</th>
            <th>Problems</th>
            <th>Splits</th>
            <th>Source</th>
            <th>Licence</th>
            <th>Imported</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.data.map((d) => (
            <tr key={d.id} data-dataset={d.name}>
              <td>{d.name}</td>
              <td>{d.version}</td>
              <td>{d.count}</td>
              <td>
                {Object.entries(d.splits)
                  .map(([k, v]) => `${k} ${v}`)
                  .join(', ')}
              </td>
              <td title={typeof d.metadata?.description === 'string' ? d.metadata.description : undefined}>
                {d.source}
                {Array.isArray(d.metadata?.packages) ? (
                  <div className="muted">
                    {(d.metadata.packages as { package: string; version: string }[])
                      .map((p) => `${p.package} ${p.version}`)
                      .join(', ')}
                  </div>
                ) : null}
              </td>
              <td>{typeof d.metadata?.license === 'string' ? d.metadata.license : '—'}</td>
              <td>{formatTime(d.createdAt)}</td>
              <td>
                <button
                  type="button"
                  onClick={() => setChosen(d.id)}
                  aria-label={`Show problems of ${d.name} v${d.version}`}
                >
                  Problems
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {chosen && <ProblemsSection datasetId={chosen} />}
    </div>
  );
}

/** The first problems of the chosen dataset version. */
function ProblemsSection({ datasetId }: { datasetId: string }) {
  const trpc = useTRPC();
  const problems = useQuery(trpc.datasets.problems.queryOptions({ datasetId, limit: 20 }));
  return (
    <section aria-label="Problems">
      <h2>Problems</h2>
      {problems.error && (
        <p className="error" role="alert">
          {problems.error.message}
        </p>
      )}
      {problems.data && (
        <table aria-label="Dataset problems">
          <thead>
            <tr>
              <th>#</th>
              <th>Split</th>
              <th>Problem</th>
              <th>Answer</th>
            </tr>
          </thead>
          <tbody>
            {problems.data.items.map((p) => (
              <tr key={p.id}>
                <td>{p.index}</td>
                <td>{p.split}</td>
                <td>{p.question.slice(0, 300)}</td>
                <td>{p.answer}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
