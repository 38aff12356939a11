'use client';
import Link from 'next/link';
import type { CSSProperties } from 'react';
import { rowAt } from './explorer-window.ts';
import { PAGE, type Row } from './use-rollout-explorer.ts';
import { VirtualRows } from './virtual-rows.tsx';

const ROW = 32;
const VIEW_HEIGHT = 480;
const COLS = [
  'pick',
  'step',
  'group',
  '#',
  'reward',
  'RoC',
  'p_err',
  'length',
  'turns',
  'tools',
  'finish',
  'problem',
  'trace',
];

interface RowProps {
  picked: string[];
  onPick: (id: string) => void;
  onProblem: (problemId: string) => void;
}

/**
 * The trajectories as an ARIA grid of divs, not a <table>: only the rows in view are drawn (VirtualRows), each
 * positioned by style, which table rows cannot be.
 */
export function TrajectoryGrid({
  total,
  pages,
  onRange,
  ...row
}: RowProps & {
  total: number | null;
  pages: Map<number, Row[]>;
  onRange: (range: { start: number; end: number }) => void;
}) {
  const renderRow = (i: number, style: CSSProperties) => {
    const t = rowAt(pages, PAGE, i);
    return t ? (
      <TrajectoryRow key={t.id} i={i} t={t} style={style} {...row} />
    ) : (
      <div key={i} role="row" aria-rowindex={i + 2} className="xrow loading" style={style}>
        <span role="cell" className="muted">
          loading row {i + 1}…
        </span>
      </div>
    );
  };
  return (
    <div role="table" aria-label="Trajectories" aria-rowcount={(total ?? 0) + 1} className="xtable">
      <div role="row" aria-rowindex={1} className="xrow xhead">
        {COLS.map((c, i) => (
          <span key={i} role="columnheader">
            {c}
          </span>
        ))}
      </div>
      {total === 0 ? (
        <div className="panel empty">No trajectories match these filters.</div>
      ) : (
        <VirtualRows
          total={total ?? 0}
          rowHeight={ROW}
          height={VIEW_HEIGHT}
          renderRow={renderRow}
          onRange={onRange}
          label="Trajectory rows"
        />
      )}
    </div>
  );
}

function TrajectoryRow({
  i,
  t,
  style,
  picked,
  onPick,
  onProblem,
}: RowProps & { i: number; t: Row; style: CSSProperties }) {
  const on = picked.includes(t.id);
  return (
    <div
      role="row"
      aria-rowindex={i + 2}
      className={`xrow${on ? ' picked' : ''}${t.selected ? ' kept' : ''}`}
      style={style}
    >
      <span role="cell">
        <input type="checkbox" checked={on} onChange={() => onPick(t.id)} aria-label={`Pick ${t.id} for compare`} />
      </span>
      <span role="cell">{t.step}</span>
      <span role="cell" title={t.groupId} className="clip">
        {t.groupId}
      </span>
      <span role="cell">{t.sampleIndex}</span>
      {/* Green for the trajectory's verdict, not for reward > 0: an imported partial reward is no correct answer. */}
      <span
        role="cell"
        className={t.correct ? 'ok-text' : undefined}
        title={t.correct === true ? 'correct' : t.correct === false ? 'incorrect' : 'no verdict'}
      >
        {t.reward.toFixed(2)}
      </span>
      <span role="cell" title={t.selectReason ?? undefined}>
        {t.selected ? 'kept' : '—'}
      </span>
      <span role="cell">{t.pErr === null ? '—' : `${(100 * t.pErr).toFixed(0)}%`}</span>
      <span role="cell">{t.responseTokens}</span>
      <span role="cell">{t.turns}</span>
      <span role="cell">
        {t.toolCalls}
        {t.toolErrors ? <span className="error"> ({t.toolErrors})</span> : null}
      </span>
      <span role="cell" className="clip">
        {t.finishReason}
      </span>
      <span role="cell" className="clip">
        {t.problemId ? (
          <button
            type="button"
            className="x-linkish"
            onClick={() => onProblem(t.problemId!)}
            aria-label={`Same prompt across steps: ${t.problemId}`}
            title={t.problemId}
          >
            {t.problemId}
          </button>
        ) : (
          '—'
        )}
      </span>
      <span role="cell">
        {/* No prefetch: a page of rows would render every trajectory page on the server before anyone clicks. */}
        <Link
          prefetch={false}
          href={`/trajectories/${encodeURIComponent(t.id)}`}
          aria-label={`Open trajectory ${t.id}`}
        >
          open
        </Link>
      </span>
    </div>
  );
}
