'use client';
import Link from 'next/link';
import { useMemo } from 'react';
import { alignTurns, type TurnMatch } from './diff.ts';
import { DiffView } from './diff-view.tsx';
import type { ReplayState } from './replay.ts';
import { TraceHeader } from './trace-header.tsx';
import { TurnView } from './turn-view.tsx';
import { VerdictView } from './verdict-view.tsx';
import type { TrajectoryDetail } from '../../contracts/trajectory.ts';

const MATCH: Record<TurnMatch, { text: string; cls: string }> = {
  same: { text: 'identical text', cls: 'ok' },
  same_code: { text: 'same tool code, different reasoning', cls: 'warn' },
  different: { text: 'different', cls: 'fail' },
  left_only: { text: 'only in A', cls: 'cancelled' },
  right_only: { text: 'only in B', cls: 'cancelled' },
};

/** Two trajectories side by side: summaries, the response diff, then turn k of each next to each other. */
export function CompareView({
  a,
  b,
  stateA,
  stateB,
}: {
  a: TrajectoryDetail;
  b: TrajectoryDetail;
  stateA: ReplayState;
  stateB: ReplayState;
}) {
  const pairs = useMemo(() => alignTurns(a.content.turns, b.content.turns), [a, b]);
  const shownA = new Map(stateA.turns.map((v) => [v.turn, v]));
  const shownB = new Map(stateB.turns.map((v) => [v.turn, v]));
  return (
    <div>
      <div className="grid2" style={{ marginBottom: 12 }}>
        <div>
          <h2>A · {a.id}</h2>
          <TraceHeader t={a} side="A" />
        </div>
        <div>
          <h2>
            B · <Link href={`/trajectories/${encodeURIComponent(b.id)}`}>{b.id}</Link>
          </h2>
          <TraceHeader t={b} side="B" />
        </div>
      </div>
      <DiffView a={a} b={b} />
      <h2>Turns, aligned</h2>
      {pairs.length === 0 && <div className="panel empty">Neither trajectory has any turns.</div>}
      {pairs.map((p) => {
        const va = shownA.get(p.index),
          vb = shownB.get(p.index);
        if (!va && !vb) return null;
        return (
          <section key={p.index} aria-label={`Turn ${p.index + 1}, A and B`}>
            <div className="row" style={{ margin: '4px 0' }}>
              <strong>Turn {p.index + 1}</strong>
              <span className={`badge ${MATCH[p.match].cls}`}>{MATCH[p.match].text}</span>
            </div>
            <div className="grid2">
              {p.left && va ? <TurnView turn={p.left} replay={va} side="A" /> : <Missing side="A" ended={!p.left} />}
              {p.right && vb ? <TurnView turn={p.right} replay={vb} side="B" /> : <Missing side="B" ended={!p.right} />}
            </div>
          </section>
        );
      })}
      {(stateA.finished || stateB.finished) && (
        <div className="grid2">
          <div>{stateA.finished && <VerdictView t={a} side="A" />}</div>
          <div>{stateB.finished && <VerdictView t={b} side="B" />}</div>
        </div>
      )}
    </div>
  );
}

function Missing({ side, ended }: { side: string; ended: boolean }) {
  return (
    <div className="panel empty" style={{ marginBottom: 12 }}>
      {ended ? `${side} ended before this turn.` : `${side} has not reached this turn yet.`}
    </div>
  );
}
