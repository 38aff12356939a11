'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useMemo } from 'react';
import { useTRPC } from '@/lib/trpc.ts';

/** One problem across the run's steps: per step, its samples (reward, kept) as links to their traces. */
export function SamePrompt({ runId, problemId, onClose }: { runId: string; problemId: string; onClose: () => void }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.trajectories.samePrompt.queryOptions({ runId, problemId }, { retry: false }));
  const bySteps = useMemo(() => {
    const m = new Map<string, NonNullable<typeof q.data>>();
    for (const t of q.data ?? []) {
      const k = `${t.split} ${t.step}`;
      const g = m.get(k);
      if (g) g.push(t);
      else m.set(k, [t]);
    }
    return [...m.entries()];
  }, [q.data]);
  return (
    <section className="panel same-prompt" aria-label={`Problem ${problemId} across steps`}>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h2>Problem {problemId} across steps</h2>
        <button type="button" onClick={onClose} aria-label="Close same-prompt view">
          Close
        </button>
      </div>
      {q.error ? (
        <p className="error" role="alert">
          Could not load problem {problemId}: {q.error.message}
        </p>
      ) : q.isLoading ? (
        <p className="muted">Loading…</p>
      ) : bySteps.length === 0 ? (
        <p className="muted">No trajectories of this problem are stored.</p>
      ) : (
        <table aria-label="Same problem by step">
          <thead>
            <tr>
              <th>split</th>
              <th>step</th>
              <th>samples</th>
              <th>mean reward</th>
              <th>kept</th>
              <th>trajectories</th>
            </tr>
          </thead>
          <tbody>
            {bySteps.map(([k, items]) => (
              <tr key={k}>
                <td>{items[0]!.split}</td>
                <td>{items[0]!.step}</td>
                <td>{items.length}</td>
                <td>{(items.reduce((a, t) => a + t.reward, 0) / items.length).toFixed(2)}</td>
                <td>{items.filter((t) => t.selected).length}</td>
                <td className="chips">
                  {items.map((t) => (
                    <Link
                      key={t.id}
                      prefetch={false}
                      href={`/trajectories/${encodeURIComponent(t.id)}`}
                      className={`chip ${t.reward > 0 ? 'ok' : 'fail'}`}
                      aria-label={`Open trajectory ${t.id} (step ${t.step}, sample ${t.sampleIndex}, reward ${t.reward})`}
                      title={`sample ${t.sampleIndex} · reward ${t.reward}`}
                    >
                      {t.reward > 0 ? '✓' : '✗'}
                    </Link>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
