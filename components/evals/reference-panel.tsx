'use client';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc.ts';

/** The report's headline table (evals.reference): pass@1 by benchmark and model, average lengths, the protocol. */
export function ReferencePanel() {
  const trpc = useTRPC();
  const ref = useQuery(trpc.evals.reference.queryOptions(undefined, { staleTime: Infinity }));
  return (
    <section className="panel ev-ref" aria-labelledby="ev-ref-title">
      <h2 id="ev-ref-title" style={{ marginTop: 0 }}>
        Reference (rStar2-Agent report)
      </h2>
      {ref.error ? (
        <p className="error" role="alert">
          Could not load the reference table: {ref.error.message}
        </p>
      ) : !ref.data ? (
        <p className="muted" role="status">
          Loading the reference table…
        </p>
      ) : (
        <>
          <p className="muted ev-note">Published numbers for comparison, not results of this workbench. pass@1 in %.</p>
          <table aria-label="Reference pass@1 (rStar2-Agent report)">
            <thead>
              <tr>
                <th scope="col">Model</th>
                {ref.data.benchmarks.map((b) => (
                  <th scope="col" key={b} className="num">
                    {b}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {ref.data.models.map((m) => (
                <tr key={m.name}>
                  <th scope="row">{m.name}</th>
                  {m.scores.map((s, i) => (
                    <td key={ref.data.benchmarks[i]} className="num">
                      {s.toFixed(1)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          <h3 className="ev-h3">Average response length (tokens)</h3>
          <LengthsTable lengths={ref.data.lengths as unknown as Record<string, Record<string, number>>} />
          <p className="ev-protocol">
            <strong>Protocol:</strong> {ref.data.protocol}
          </p>
        </>
      )}
    </section>
  );
}

function LengthsTable({ lengths }: { lengths: Record<string, Record<string, number>> }) {
  const benches = Object.keys(lengths);
  const models = [...new Set(benches.flatMap((b) => Object.keys(lengths[b] ?? {})))];
  if (!benches.length) return <p className="muted">The report gives no lengths.</p>;
  return (
    <table aria-label="Reference average response length (rStar2-Agent report)">
      <thead>
        <tr>
          <th scope="col">Model</th>
          {benches.map((b) => (
            <th scope="col" key={b} className="num">
              {b}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {models.map((m) => (
          <tr key={m}>
            <th scope="row">{m}</th>
            {benches.map((b) => (
              <td key={b} className="num">
                {lengths[b]?.[m]?.toLocaleString('en-US') ?? '—'}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
