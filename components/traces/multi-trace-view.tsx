'use client';
import { useQueries } from '@tanstack/react-query';
import Link from 'next/link';
import { useMemo } from 'react';
import { CorrectBadge } from '../trace/badges.tsx';
import { TurnView } from '../trace/turn-view.tsx';
import { VerdictView } from '../trace/verdict-view.tsx';
import { runColor } from '../ui/run-colors.ts';
import { alignRuns, columnLetter, type RowAgreement, sampleLabel } from './align-runs.ts';
import type { RunProblemColumn } from '../../contracts/traces.ts';
import type { TrajectoryDetail } from '../../contracts/trajectory.ts';

const AGREEMENT: Record<RowAgreement, { text: string; cls: string }> = {
  same: { text: 'identical text in every run', cls: 'ok' },
  same_code: { text: 'same tool code, different reasoning', cls: 'warn' },
  different: { text: 'different', cls: 'fail' },
  partial: { text: 'not in every run', cls: 'cancelled' },
};

/** A stored trajectory never changes: loaded once per id. */
export interface DetailQuery {
  queryKey: readonly unknown[];
  queryFn: () => Promise<TrajectoryDetail>;
}

export interface MultiTraceProps {
  columns: RunProblemColumn[];
  /** The trajectory each column shows (null: none to show). */
  picks: (string | null)[];
  onPick: (column: number, trajectoryId: string) => void;
  /** How to load one trajectory: the viewer's `trajectories.get` or a share link's `share.view.trajectory`. */
  detailQuery: (trajectoryId: string) => DetailQuery;
  /** Where a column's trajectory opens on its own (absent on a share link's page: it stays on the link). */
  trajectoryHref?: (trajectoryId: string) => string;
}

/**
 * One prompt's trajectories from 2–4 runs: a column per run (its picked trajectory, reward and verdict), then turn k
 * of each side by side with how far the row agrees, then each answer and verdict.
 */
export function MultiTraceView({ columns, picks, onPick, detailQuery, trajectoryHref }: MultiTraceProps) {
  const details = useQueries({
    queries: columns.map((_, i) => ({
      ...detailQuery(picks[i] ?? ''),
      enabled: !!picks[i],
      retry: false,
      staleTime: Number.POSITIVE_INFINITY,
      refetchOnWindowFocus: false,
    })),
  });
  const shown = details.map((d, i) => (picks[i] && d.data?.id === picks[i] ? d.data : null));
  const rows = useMemo(() => alignRuns(shown.map((t) => t?.content.turns ?? [])), [shown]);
  const grid = { display: 'grid', gap: 12, gridTemplateColumns: `repeat(${columns.length}, minmax(0, 1fr))` };
  const prompts = new Set(shown.filter((t) => t !== null).map((t) => t!.content.prompt));
  const first = shown.find((t) => t !== null);

  return (
    <section aria-label="Trajectories side by side">
      <div style={grid}>
        {columns.map((c, i) => (
          <ColumnHead
            key={c.run.id}
            index={i}
            column={c}
            pick={picks[i]}
            onPick={(id) => onPick(i, id)}
            detail={shown[i]}
            error={details[i].error?.message ?? null}
            href={trajectoryHref}
          />
        ))}
      </div>
      {first && (
        <details className="panel" style={{ margin: '12px 0' }}>
          <summary>
            Prompt
            {prompts.size > 1 && (
              <span className="badge warn" style={{ marginLeft: 8 }}>
                the runs' prompt texts differ ({prompts.size} versions); this is {columnLetter(shown.indexOf(first))}'s
              </span>
            )}
          </summary>
          <pre style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', margin: '8px 0 0' }}>
            {first.content.prompt}
          </pre>
        </details>
      )}
      {rows.map((r) => (
        <section key={r.index} aria-label={`Turn ${r.index + 1} across runs`} data-agreement={r.agreement}>
          <div className="row" style={{ margin: '8px 0 4px' }}>
            <strong>Turn {r.index + 1}</strong>
            <span className={`badge ${AGREEMENT[r.agreement].cls}`}>{AGREEMENT[r.agreement].text}</span>
          </div>
          <div style={grid}>
            {r.cells.map((turn, i) =>
              turn ? (
                <TurnView key={columns[i].run.id} turn={turn} side={columnLetter(i)} />
              ) : (
                <div key={columns[i].run.id} className="panel empty" style={{ marginBottom: 12 }}>
                  {shown[i] ? `${columnLetter(i)} ended after ${turnsText(shown[i]!.content.turns.length)}.` : '—'}
                </div>
              ),
            )}
          </div>
        </section>
      ))}
      {shown.some((t) => t !== null) && (
        <section aria-label="Answers and verdicts">
          <h2>Answers and verdicts</h2>
          <div style={grid}>
            {shown.map((t, i) =>
              t ? (
                <VerdictView key={columns[i].run.id} t={t} side={columnLetter(i)} />
              ) : (
                <div key={columns[i].run.id} />
              ),
            )}
          </div>
        </section>
      )}
    </section>
  );
}

const turnsText = (n: number) => `${n} turn${n === 1 ? '' : 's'}`;

/** A column's head: its letter and run, the trajectory picker over every step and sample, and the pick's outcome. */
function ColumnHead({
  index,
  column,
  pick,
  onPick,
  detail,
  error,
  href,
}: {
  index: number;
  column: RunProblemColumn;
  pick: string | null;
  onPick: (id: string) => void;
  detail: TrajectoryDetail | null;
  error: string | null;
  href?: (id: string) => string;
}) {
  const letter = columnLetter(index);
  const row = column.items.find((t) => t.id === pick);
  return (
    <section
      className="panel"
      aria-label={`Column ${letter}: ${column.run.name}`}
      style={{ borderTop: `3px solid ${runColor(index)}` }}
    >
      <h2 style={{ margin: '0 0 6px' }}>
        {letter} · {column.run.name} <span className="muted">{column.run.id}</span>
      </h2>
      {column.items.length === 0 ? (
        <p className="muted">This run has no trajectory of this problem.</p>
      ) : (
        <>
          <select
            aria-label={`Trajectory shown for ${letter}`}
            value={pick ?? ''}
            onChange={(e) => onPick(e.target.value)}
            style={{ maxWidth: '100%' }}
          >
            {column.items.map((t) => (
              <option key={t.id} value={t.id}>
                {sampleLabel(t)}
              </option>
            ))}
          </select>
          {column.truncated && <p className="muted">Only the latest {column.items.length} are listed.</p>}
          {row && (
            <div className="row" style={{ marginTop: 6 }} data-testid={`column-${letter}-outcome`}>
              <span>reward {row.reward.toFixed(2)}</span>
              <CorrectBadge correct={row.correct} />
              <span className="muted">
                {turnsText(row.turns)} · {row.toolCalls} calls · {row.toolErrors} tool errors · {row.finishReason}
              </span>
              {href && pick && <Link href={href(pick)}>Open {letter}</Link>}
            </div>
          )}
          {error && (
            <p className="error" role="alert">
              Could not load {letter}'s trajectory: {error}
            </p>
          )}
          {!detail && !error && pick && <p className="muted">Loading…</p>}
        </>
      )}
    </section>
  );
}
