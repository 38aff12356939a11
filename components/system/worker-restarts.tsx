'use client';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc.ts';
import { formatTime } from '../ui/format.ts';

/** The worker `npm start` supervises: whether it runs now and each time it died and was restarted. */
export function WorkerRestarts() {
  const trpc = useTRPC();
  const q = useQuery(trpc.system.supervisor.queryOptions(undefined, { refetchInterval: 5000 }));
  if (q.error)
    return (
      <div className="panel error" role="alert">
        Could not load the worker supervisor: {q.error.message}
      </div>
    );
  if (q.isPending) return <div className="panel empty">Loading…</div>;
  const s = q.data;
  if (!s)
    return (
      <div className="panel empty">
        This web server was not started by <code>npm start</code>, so no worker is supervised here.
      </div>
    );
  const w = s.worker;
  return (
    <div className="panel" aria-label="Worker supervisor">
      <p>
        Worker:{' '}
        {w.state === 'running' ? (
          <>
            running (pid {w.pid}) since {formatTime(w.startedAt)}
          </>
        ) : w.state === 'waiting' ? (
          <>restarting at {formatTime(w.nextStartAt)}</>
        ) : (
          w.state
        )}
        {' · '}
        {s.restarts} restart{s.restarts === 1 ? '' : 's'} since {formatTime(s.startedAt)}
      </p>
      {s.recent.length > 0 && (
        <table aria-label="Worker restarts">
          <thead>
            <tr>
              <th>Died at</th>
              <th>pid</th>
              <th>Exit</th>
              <th>Ran for</th>
              <th>Restarted after</th>
            </tr>
          </thead>
          <tbody>
            {s.recent.map((r) => (
              <tr key={`${r.at}-${r.pid}`}>
                <td>{formatTime(r.at)}</td>
                <td>{r.pid}</td>
                <td>{r.exit}</td>
                <td>{Math.round(r.ranMs / 1000)} s</td>
                <td>{r.delayMs / 1000} s</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
