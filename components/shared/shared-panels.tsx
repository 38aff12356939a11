'use client';
import { errorCode } from '../ui/error-code.ts';
import { formatNumber } from '../ui/format.ts';
import { MetricChart } from '../ui/metric-chart.tsx';
import { SharedError } from './shared-states.tsx';
import { useSharedLog, useSharedMetrics } from './use-shared-view.ts';

const Loading = ({ what }: { what: string }) => (
  <div className="panel empty" role="status">
    Loading {what}…
  </div>
);

/** A shared run's metrics in the run page's chart, polled. */
export function SharedMetrics({ token, runId }: { token: string; runId: string }) {
  const m = useSharedMetrics(token, runId, true);
  if (m.error)
    return errorCode(m.error) === 'NOT_FOUND' ? (
      <div className="panel empty">Metrics are not part of this link.</div>
    ) : (
      <SharedError what="metrics" message={m.error.message} retry={() => void m.refetch()} />
    );
  if (!m.data) return <Loading what="metrics" />;
  return <MetricChart series={m.data.series} title="Shared run metrics chart" />;
}

/** A step link's metrics: each key's last value, in a table. */
export function SharedStepMetrics({ token, runId }: { token: string; runId: string }) {
  const m = useSharedMetrics(token, runId, false);
  if (m.error) return <SharedError what="metrics" message={m.error.message} retry={() => void m.refetch()} />;
  if (!m.data) return <Loading what="metrics" />;
  const entries = Object.entries(m.data.series)
    .filter(([, pts]) => pts.length > 0)
    .sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return <div className="panel empty">No metrics were logged at this step.</div>;
  return (
    // Focusable so that a keyboard can scroll a long table.
    <section className="share-metric-table" aria-label="Metric values" tabIndex={0}>
      <table aria-label="Metrics at this step">
        <thead>
          <tr>
            <th scope="col">Metric</th>
            <th scope="col" className="num">
              Value
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map(([k, pts]) => (
            <tr key={k}>
              <td>
                <code>{k}</code>
              </td>
              <td className="num">{formatNumber(pts[pts.length - 1]!.value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** A run link's latest log lines, polled: plain text, where the run page streams into a terminal. */
export function SharedLog({ token }: { token: string }) {
  const ev = useSharedLog(token);
  if (ev.error) return <SharedError what="the log" message={ev.error.message} retry={() => void ev.refetch()} />;
  if (!ev.data) return <Loading what="the log" />;
  if (ev.data.events.length === 0) return <div className="panel empty">The run has logged nothing yet.</div>;
  return (
    <pre className="share-log" role="log" aria-label="Run log" tabIndex={0}>
      {ev.data.events.map((e) => (
        <div key={e.seq} className={`share-log-${e.level}`}>
          <span className="muted">{new Date(e.time).toISOString().slice(11, 19)}</span> {e.message}
        </div>
      ))}
    </pre>
  );
}
