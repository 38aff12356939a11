'use client';
import { useQueries, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useMemo, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { diffSpecs } from '../../contracts/recipe-diff.ts';
import type { SharedRunFull, SharedRunHeader } from '../../contracts/share.ts';
import { MetricChart } from '../ui/metric-chart.tsx';
import { StatusBadge } from '../ui/status-badge.tsx';
import { formatNumber, formatTime } from '../ui/format.ts';
import { defaultCompareKeys, unionKeys, type RunSeries } from '../compare/align.ts';
import { errorCode } from '../ui/error-code.ts';
import { runColor } from '../ui/run-colors.ts';
import { KeyPicker } from '../compare/key-picker.tsx';
import { OverlayChart } from '../compare/overlay-chart.tsx';
import { RecipeDiffTable } from '../compare/recipe-diff-table.tsx';
import { SharedBanner, SharedError, SharedNotFound } from './shared-states.tsx';
import { SharedTrajectory } from './shared-trajectory.tsx';

/**
 * /s/<token>: what a share link opens, read-only. Uses only share.view.* with the token; every answer of
 * NOT_FOUND (dead, expired, revoked or out-of-scope) shows the same not-found state.
 */
export function SharedView({ token }: { token: string }) {
  const trpc = useTRPC();
  const summary = useQuery(
    trpc.share.view.summary.queryOptions({ token }, { retry: false, refetchOnWindowFocus: false }),
  );
  if (summary.error)
    return errorCode(summary.error) === 'NOT_FOUND' ? (
      <SharedNotFound />
    ) : (
      <SharedError what="the shared view" message={summary.error.message} retry={() => void summary.refetch()} />
    );
  if (!summary.data)
    return (
      <div className="panel empty" role="status">
        Opening the shared link…
      </div>
    );
  const s = summary.data;
  const run = s.runs[0];
  return (
    <div className="share-view" data-scope={s.scope}>
      <SharedBanner label={s.label} expiresAt={s.expiresAt} />
      {s.scope === 'compare' ? (
        <SharedCompare token={token} runs={s.runs} />
      ) : !run ? (
        <SharedNotFound />
      ) : (
        <>
          <RunSummary
            run={run}
            heading={
              s.scope === 'step'
                ? `${run.name} · step ${s.step}`
                : s.scope === 'trajectory'
                  ? `${run.name} · one trajectory`
                  : run.name
            }
          />
          {s.scope === 'run' && (
            <>
              <div className="grid2">
                <section aria-label="Run log">
                  <h2>Log (latest)</h2>
                  <SharedLog token={token} />
                </section>
                <section aria-label="Run metrics">
                  <h2>Metrics</h2>
                  <SharedMetrics token={token} runId={run.id} />
                </section>
              </div>
              <SharedTrajectories token={token} runId={run.id} initialStep={Math.max(0, run.step)} pickStep />
            </>
          )}
          {s.scope === 'step' && s.step !== null && (
            <>
              <section aria-label="Metrics at this step">
                <h2>Metrics at step {s.step}</h2>
                <SharedStepMetrics token={token} runId={run.id} />
              </section>
              <SharedTrajectories token={token} runId={run.id} initialStep={s.step} />
            </>
          )}
          {s.scope === 'trajectory' && s.trajectoryId && (
            <SharedTrajectory token={token} trajectoryId={s.trajectoryId} />
          )}
        </>
      )}
    </div>
  );
}

/** A run as the link shows it (contracts/share.ts): the header, and for run and compare links the rest; times arrive as JSON strings. */
type Wire<T> = {
  [K in keyof T]: T[K] extends Date ? string | Date : T[K] extends Date | null ? string | Date | null : T[K];
};
type RunInfo = Wire<SharedRunHeader> & Partial<Omit<SharedRunFull, keyof SharedRunHeader>>;

function RunSummary({ run, heading }: { run: RunInfo; heading: string }) {
  return (
    <section aria-label="Run summary">
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>{heading}</h1>
        <StatusBadge status={run.status} />
      </div>
      <p className="muted">
        {run.kind} · step {run.step}
        {run.totalSteps ? ` / ${run.totalSteps}` : ''}
        {run.stageName ? ` · stage ${run.stageName}` : ''}
        {run.seed != null ? ` · seed ${run.seed}` : ''}
        {run.codeVersion ? ` · code ${run.codeVersion}` : ''} · created {formatTime(run.createdAt)}
        {run.startedAt ? ` · started ${formatTime(run.startedAt)}` : ''}
        {run.finishedAt ? ` · finished ${formatTime(run.finishedAt)}` : ''}
      </p>
      {run.error && <p className="error">Error: {run.error}</p>}
    </section>
  );
}

function SharedMetrics({ token, runId }: { token: string; runId: string }) {
  const trpc = useTRPC();
  const m = useQuery(trpc.share.view.metrics.queryOptions({ token, runId }, { retry: false, refetchInterval: 15_000 }));
  if (m.error)
    return errorCode(m.error) === 'NOT_FOUND' ? (
      <div className="panel empty">Metrics are not part of this link.</div>
    ) : (
      <SharedError what="metrics" message={m.error.message} retry={() => void m.refetch()} />
    );
  if (!m.data)
    return (
      <div className="panel empty" role="status">
        Loading metrics…
      </div>
    );
  return <MetricChart series={m.data.series} title="Shared run metrics chart" />;
}

function SharedStepMetrics({ token, runId }: { token: string; runId: string }) {
  const trpc = useTRPC();
  const m = useQuery(trpc.share.view.metrics.queryOptions({ token, runId }, { retry: false }));
  if (m.error) return <SharedError what="metrics" message={m.error.message} retry={() => void m.refetch()} />;
  if (!m.data)
    return (
      <div className="panel empty" role="status">
        Loading metrics…
      </div>
    );
  const entries = Object.entries(m.data.series)
    .filter(([, pts]) => pts.length > 0)
    .sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return <div className="panel empty">No metrics were logged at this step.</div>;
  return (
    <div className="share-metric-table" role="region" aria-label="Metric values" tabIndex={0}>
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
    </div>
  );
}

function SharedLog({ token }: { token: string }) {
  const trpc = useTRPC();
  const ev = useQuery(
    trpc.share.view.events.queryOptions({ token, limit: 300 }, { retry: false, refetchInterval: 10_000 }),
  );
  if (ev.error) return <SharedError what="the log" message={ev.error.message} retry={() => void ev.refetch()} />;
  if (!ev.data)
    return (
      <div className="panel empty" role="status">
        Loading the log…
      </div>
    );
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

const PAGE = 50;

function SharedTrajectories({
  token,
  runId,
  initialStep,
  pickStep = false,
}: {
  token: string;
  runId: string;
  initialStep: number;
  pickStep?: boolean;
}) {
  const trpc = useTRPC();
  const [step, setStep] = useState(initialStep);
  const [draft, setDraft] = useState(String(initialStep));
  const [cursor, setCursor] = useState(0);
  const q = useQuery(
    trpc.share.view.trajectories.queryOptions({ token, runId, step, limit: PAGE, cursor }, { retry: false }),
  );
  const go = (n: number) => {
    const v = Math.max(0, Math.floor(n));
    setStep(v);
    setDraft(String(v));
    setCursor(0);
  };
  return (
    <section aria-label="Trajectories">
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h2>Trajectories at step {step}</h2>
        {pickStep && (
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              const n = Number(draft);
              if (Number.isFinite(n)) go(n);
            }}
          >
            <button type="button" onClick={() => go(step - 1)} disabled={step <= 0} aria-label="Previous step">
              ◀
            </button>
            <label>
              Step{' '}
              <input
                type="number"
                min={0}
                value={draft}
                onChange={(e) => setDraft(e.target.value)}
                aria-label="Trajectory step"
                style={{ width: 90 }}
              />
            </label>
            <button type="button" onClick={() => go(step + 1)} aria-label="Next step">
              ▶
            </button>
            <button type="submit">Show step</button>
          </form>
        )}
      </div>
      {q.error ? (
        errorCode(q.error) === 'NOT_FOUND' ? (
          <div className="panel empty">No trajectories of step {step} are part of this link.</div>
        ) : (
          <SharedError what="trajectories" message={q.error.message} retry={() => void q.refetch()} />
        )
      ) : !q.data ? (
        <div className="panel empty" role="status">
          Loading trajectories…
        </div>
      ) : q.data.items.length === 0 ? (
        <div className="panel empty">
          {cursor ? 'No more trajectories.' : `No trajectories were stored at step ${step}.`}
        </div>
      ) : (
        <>
          <table aria-label={`Trajectories at step ${step}`}>
            <thead>
              <tr>
                <th scope="col">Trajectory</th>
                <th scope="col">Problem</th>
                <th scope="col">Group · sample</th>
                <th scope="col" className="num">
                  Reward
                </th>
                <th scope="col">Correct</th>
                <th scope="col" className="num">
                  Turns
                </th>
                <th scope="col" className="num">
                  Tool calls (errors)
                </th>
                <th scope="col">Finish</th>
              </tr>
            </thead>
            <tbody>
              {q.data.items.map((t) => (
                <tr key={t.id}>
                  <td>
                    <Link
                      prefetch={false}
                      href={`/s/${encodeURIComponent(token)}/t/${encodeURIComponent(t.id)}`}
                      aria-label={`Open trajectory ${t.id}`}
                    >
                      {t.id}
                    </Link>
                  </td>
                  <td>{t.problemId ?? '—'}</td>
                  <td>
                    {t.groupId} · {t.sampleIndex}
                  </td>
                  <td className="num">{formatNumber(t.reward)}</td>
                  <td>
                    {t.correct === null ? (
                      '—'
                    ) : (
                      <span className={`badge ${t.correct ? 'ok' : 'fail'}`}>{t.correct ? 'yes' : 'no'}</span>
                    )}
                  </td>
                  <td className="num">{t.turns}</td>
                  <td className="num">
                    {t.toolCalls} ({t.toolErrors})
                  </td>
                  <td>{t.finishReason}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="row" style={{ marginTop: 8 }}>
            <button type="button" onClick={() => setCursor(Math.max(0, cursor - PAGE))} disabled={cursor === 0}>
              Previous page
            </button>
            <span className="muted">
              {cursor + 1}–{cursor + q.data.items.length}
            </span>
            <button
              type="button"
              onClick={() => q.data?.nextCursor != null && setCursor(q.data.nextCursor)}
              disabled={q.data.nextCursor == null}
            >
              Next page
            </button>
          </div>
        </>
      )}
    </section>
  );
}

function SharedCompare({ token, runs }: { token: string; runs: RunInfo[] }) {
  const trpc = useTRPC();
  const metrics = useQueries({
    queries: runs.map((r) =>
      trpc.share.view.metrics.queryOptions({ token, runId: r.id }, { retry: false, refetchInterval: 15_000 }),
    ),
  });
  const loaded = metrics.every((m) => m.data);
  const failed = metrics.find((m) => m.error);
  const series: RunSeries = useMemo(
    () => Object.fromEntries(metrics.map((m, i) => [runs[i]!.id, m.data?.series ?? {}])),
    [metrics, runs],
  );
  const keys = useMemo(() => unionKeys(series), [series]);
  const [chosen, setChosen] = useState<string[] | null>(null);
  const shown = (
    chosen ??
    defaultCompareKeys(
      series,
      runs.map((r) => r.id),
    )
  ).filter((k) => keys.includes(k));
  const recipeDiff = useMemo(
    () => runs.slice(1).map((r) => ({ runId: r.id, diff: diffSpecs(runs[0]?.recipeSpec, r.recipeSpec) })),
    [runs],
  );
  return (
    <>
      <h1>Comparison of {runs.length} runs</h1>
      <section aria-label="Compared runs">
        <table aria-label="Compared runs">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Step</th>
              <th scope="col">Created</th>
              <th scope="col">Finished</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r, i) => (
              <tr key={r.id}>
                <td>
                  <span className="cmp-swatch" style={{ background: runColor(i) }} aria-hidden="true" />
                  {r.name} <span className="muted">{r.id}</span>
                  {r.error && <div className="error">{r.error.slice(0, 160)}</div>}
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
                <td>{formatTime(r.finishedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-label="Metrics">
        <h2>Metrics by step</h2>
        {failed?.error ? (
          <SharedError
            what="metrics"
            message={failed.error.message}
            retry={() => metrics.forEach((m) => void m.refetch())}
          />
        ) : !loaded ? (
          <div className="panel empty" role="status">
            Loading metrics…
          </div>
        ) : (
          <>
            <KeyPicker keys={keys} chosen={shown} onChange={setChosen} />
            {keys.length > 0 && shown.length === 0 && (
              <div className="panel empty">Tick a metric above to chart it.</div>
            )}
            <div className="cmp-charts">
              {shown.map((k) => (
                <OverlayChart key={k} metricKey={k} runs={runs} series={series} />
              ))}
            </div>
          </>
        )}
      </section>
      <section aria-label="Recipe">
        <h2>
          Recipe differences <span className="muted">(from {runs[0]?.name})</span>
        </h2>
        <RecipeDiffTable runs={runs} recipeDiff={recipeDiff} />
      </section>
    </>
  );
}
