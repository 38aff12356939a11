'use client';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc.ts';
import { formatDifference, formatWithInterval } from '../../contracts/intervals.ts';

interface Side {
  runId: string;
  step?: number;
}

/** Two evaluations on the same problems, per benchmark: pass@1 of each with its interval and the paired difference
 *  b − a with its 95% interval (bootstrap over the problems both scored). */
export function PairedTable({ a, b, labelA, labelB }: { a: Side; b: Side; labelA: string; labelB: string }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.evals.compare.queryOptions({ a, b }, { retry: false }));
  if (q.error)
    return (
      <div className="panel error" role="alert">
        Could not compare the evaluations: {q.error.message}
      </div>
    );
  if (!q.data)
    return (
      <div className="panel empty" role="status">
        Comparing evaluations…
      </div>
    );
  if (q.data.benchmarks.length === 0)
    return (
      <div className="panel empty">
        No benchmark was evaluated in both {labelA} and {labelB}.
      </div>
    );
  return (
    <table aria-label={`Paired comparison: ${labelB} against ${labelA}`} className="ev-table">
      <thead>
        <tr>
          <th scope="col">Benchmark</th>
          <th scope="col" className="num">
            {labelA} pass@1
          </th>
          <th scope="col" className="num">
            {labelB} pass@1
          </th>
          <th scope="col" className="num">
            Difference (95% CI)
          </th>
          <th scope="col" className="num">
            Shared problems
          </th>
        </tr>
      </thead>
      <tbody>
        {q.data.benchmarks.map((r) => (
          <tr key={r.benchmark}>
            <th scope="row">{r.benchmark}</th>
            <td className="num">{formatWithInterval(r.a.pass1, r.a.ci)}</td>
            <td className="num">{formatWithInterval(r.b.pass1, r.b.ci)}</td>
            <td className="num">
              {r.paired ? (
                <>
                  <strong>{formatDifference(r.paired)}</strong>
                  <div className="muted ev-sub">
                    {r.paired.excludesZero ? 'the interval excludes 0' : 'the interval includes 0: no clear difference'}
                  </div>
                </>
              ) : (
                <span className="muted">{r.why}</span>
              )}
            </td>
            <td className="num">{r.paired?.problems ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
