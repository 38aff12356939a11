'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { memo, useEffect, useMemo } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { groupByGroupId, type LiveRollout } from './rollout-board.ts';

const TEXT_TAIL = 1500;
const tail = (s: string, n = TEXT_TAIL) => (s.length > n ? `…${s.slice(-n)}` : s);
const pct = (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${(100 * v).toFixed(0)}%`);

/** One in-flight (or just finished) rollout: its turns' text as it grows, each tool call running then its result. */
const RolloutCard = memo(function RolloutCard({ r }: { r: LiveRollout }) {
  const turns = r.turns.slice(-3);
  const hidden = r.turns.length - turns.length;
  return (
    <article className={`rollout-card ${r.status}`} aria-label={`Rollout ${r.id}`} data-state={r.status}>
      <header className="rollout-card-head">
        <span className={`badge ${r.status === 'finished' ? 'succeeded' : r.status === 'tool' ? 'queued' : 'running'}`}>
          {r.status === 'tool' ? 'tool running' : r.status}
        </span>
        <span className="muted rollout-id" title={r.id}>
          {r.id}
        </span>
        <span className="muted">
          {r.turns.length} turn{r.turns.length === 1 ? '' : 's'}
          {r.finishReason ? ` · ${r.finishReason}` : ''}
        </span>
      </header>
      {hidden > 0 && (
        <div className="muted rollout-more">
          {hidden} earlier turn{hidden === 1 ? '' : 's'}
        </div>
      )}
      {turns.map((t, i) => (
        <div key={hidden + i} className="rollout-turn">
          {t.text && <pre className="rollout-text">{tail(t.text)}</pre>}
          {t.tool && (
            <div className={`rollout-tool ${t.tool.status}`} data-tool-status={t.tool.status}>
              <pre className="rollout-code">{tail(t.tool.code, 600)}</pre>
              {t.tool.status === 'running' ? (
                <div className="rollout-tool-running">running…</div>
              ) : (
                <pre className="rollout-output">
                  <span className="muted">
                    {t.tool.status}
                    {t.tool.ms != null ? ` · ${Math.round(t.tool.ms)} ms` : ''}
                  </span>
                  {'\n'}
                  {tail(t.tool.output ?? '', 600)}
                </pre>
              )}
            </div>
          )}
        </div>
      ))}
      {r.turns.length === 0 && <div className="muted">waiting for the first tokens…</div>}
    </article>
  );
});

/**
 * Live rollouts: the in-flight trajectories streamed by 'rollouts' events (at most MAX_LIVE cards), and the
 * groups of the latest stored step (reward, RoC selection, p_err, p_format, length, turns). `stepTick` changes
 * when a step ends, which refetches the latest step.
 */
export function LiveRollouts({
  runId,
  board,
  stepTick,
  live,
  showGroups,
}: {
  runId: string;
  board: LiveRollout[];
  stepTick: number;
  live: boolean;
  showGroups: boolean;
}) {
  const inFlight = board.filter((r) => r.status !== 'finished').length;
  return (
    <section aria-label="Live rollouts" className="live">
      <div className="row">
        <h2>Live rollouts</h2>
        <span className="muted" aria-live="polite">
          {board.length
            ? `${inFlight} in flight, ${board.length - inFlight} finished this step`
            : live
              ? 'no rollout in flight'
              : 'the run is not generating'}
        </span>
      </div>
      {board.length > 0 ? (
        <div className="rollout-grid">
          {board.map((r) => (
            <RolloutCard key={r.id} r={r} />
          ))}
        </div>
      ) : (
        <div className="panel empty">
          {live ? 'Rollouts appear here while a step is generating.' : 'No rollouts in flight.'}
        </div>
      )}
      {showGroups && <LatestStepGroups runId={runId} stepTick={stepTick} />}
    </section>
  );
}

function LatestStepGroups({ runId, stepTick }: { runId: string; stepTick: number }) {
  const trpc = useTRPC();
  const steps = useQuery(trpc.trajectories.steps.queryOptions({ runId }, { retry: false }));
  const refetch = steps.refetch;
  useEffect(() => {
    if (stepTick > 0) void refetch();
  }, [stepTick, refetch]);
  const latest = steps.data?.length ? steps.data[steps.data.length - 1]! : null;
  const list = useQuery(
    trpc.trajectories.list.queryOptions(
      { runId, step: latest?.step ?? 0, limit: 500, sort: 'index' },
      { enabled: latest !== null, retry: false, staleTime: 60_000 },
    ),
  );
  const groups = useMemo(() => groupByGroupId(list.data?.items ?? []), [list.data]);
  if (steps.error)
    return (
      <p className="error" role="alert">
        Could not load the stored steps: {steps.error.message}
      </p>
    );
  if (!latest)
    return (
      <div className="panel empty">
        {steps.isLoading
          ? 'Loading stored steps…'
          : 'No trajectories stored yet: the groups of each finished step appear here.'}
      </div>
    );
  return (
    <div className="latest-step">
      <div className="row">
        <h3>
          Step {latest.step}: {groups.length} group{groups.length === 1 ? '' : 's'}
        </h3>
        <span className="muted">
          accuracy {pct(latest.accuracy)} · kept {latest.selected}/{latest.count}
        </span>
        {list.data && list.data.total > list.data.items.length && (
          <span className="muted">
            showing {list.data.items.length} of {list.data.total}
          </span>
        )}
        <Link href={`/runs/${encodeURIComponent(runId)}/explorer?step=${latest.step}`}>Explore step {latest.step}</Link>
      </div>
      {list.error && (
        <p className="error" role="alert">
          Could not load step {latest.step}: {list.error.message}
        </p>
      )}
      {list.isLoading && <div className="muted">Loading…</div>}
      <div className="group-list">
        {groups.map((g) => (
          <GroupTable key={g.groupId} g={g} />
        ))}
      </div>
    </div>
  );
}

type Group = ReturnType<typeof groupByGroupId>[number];

/** One group of the step: its samples with reward, RoC's verdict and reason, and each a link to its trace. */
function GroupTable({ g }: { g: Group }) {
  return (
    <table className="group-table" aria-label={`Group ${g.groupId}`}>
      <caption>
        <span>group {g.groupId}</span>
        {g.problemId && <span className="muted"> · problem {g.problemId}</span>}
        <span className="muted">
          {' '}
          · mean reward {g.meanReward.toFixed(2)} · kept {g.kept}/{g.items.length}
        </span>
      </caption>
      <thead>
        <tr>
          <th>#</th>
          <th>reward</th>
          <th>RoC</th>
          <th>p_err</th>
          <th>p_format</th>
          <th>length</th>
          <th>turns</th>
          <th>tools</th>
          <th>finish</th>
        </tr>
      </thead>
      <tbody>
        {g.items.map((t) => (
          <tr key={t.id} className={t.selected ? 'kept' : undefined}>
            <td>
              <Link
                prefetch={false}
                href={`/trajectories/${encodeURIComponent(t.id)}`}
                aria-label={`Open trajectory ${t.id}`}
              >
                {t.sampleIndex}
              </Link>
            </td>
            <td className={t.reward > 0 ? 'ok-text' : undefined}>{t.reward.toFixed(2)}</td>
            <td title={t.selectReason ?? undefined}>
              {t.selected ? 'kept' : 'dropped'}
              {t.selectReason ? <span className="muted"> · {t.selectReason}</span> : null}
            </td>
            <td>{pct(t.pErr)}</td>
            <td>{pct(t.pFormat)}</td>
            <td>{t.responseTokens}</td>
            <td>{t.turns}</td>
            <td>
              {t.toolCalls}
              {t.toolErrors ? <span className="error"> ({t.toolErrors} err)</span> : null}
            </td>
            <td>{t.finishReason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
