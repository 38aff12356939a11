'use client';
import Link from 'next/link';
import { errorCode } from '../ui/error-code.ts';
import { formatNumber } from '../ui/format.ts';
import { SharedError } from './shared-states.tsx';
import { TRAJECTORY_PAGE, useSharedTrajectories } from './use-shared-view.ts';

type Trajectories = ReturnType<typeof useSharedTrajectories>;
type Item = NonNullable<Trajectories['q']['data']>['items'][number];

/** A shared run's trajectories at a step, a page at a time; a run link may pick the step, a step link may not. */
export function SharedTrajectories({
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
  const t = useSharedTrajectories(token, runId, initialStep);
  const { q, step, cursor } = t;
  return (
    <section aria-label="Trajectories">
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h2>Trajectories at step {step}</h2>
        {pickStep && <StepPicker t={t} />}
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
          <TrajectoryTable token={token} step={step} items={q.data.items} />
          <Pager t={t} count={q.data.items.length} nextCursor={q.data.nextCursor} />
        </>
      )}
    </section>
  );
}

function StepPicker({ t }: { t: Trajectories }) {
  return (
    <form
      className="row"
      onSubmit={(e) => {
        e.preventDefault();
        const n = Number(t.draft);
        if (Number.isFinite(n)) t.go(n);
      }}
    >
      <button type="button" onClick={() => t.go(t.step - 1)} disabled={t.step <= 0} aria-label="Previous step">
        ◀
      </button>
      <label>
        Step{' '}
        <input
          type="number"
          min={0}
          value={t.draft}
          onChange={(e) => t.setDraft(e.target.value)}
          aria-label="Trajectory step"
          style={{ width: 90 }}
        />
      </label>
      <button type="button" onClick={() => t.go(t.step + 1)} aria-label="Next step">
        ▶
      </button>
      <button type="submit">Show step</button>
    </form>
  );
}

/** One row per trajectory; each opens under the link (/s/<token>/t/<id>), never in the app. */
function TrajectoryTable({ token, step, items }: { token: string; step: number; items: Item[] }) {
  return (
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
        {items.map((t) => (
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
  );
}

function Pager({ t, count, nextCursor }: { t: Trajectories; count: number; nextCursor: number | null | undefined }) {
  return (
    <div className="row" style={{ marginTop: 8 }}>
      <button
        type="button"
        onClick={() => t.setCursor(Math.max(0, t.cursor - TRAJECTORY_PAGE))}
        disabled={t.cursor === 0}
      >
        Previous page
      </button>
      <span className="muted">
        {t.cursor + 1}–{t.cursor + count}
      </span>
      <button type="button" onClick={() => nextCursor != null && t.setCursor(nextCursor)} disabled={nextCursor == null}>
        Next page
      </button>
    </div>
  );
}
