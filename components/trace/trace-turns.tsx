'use client';
import { useEffect, useRef } from 'react';
import type { ReplayState } from './replay.ts';
import { TurnView } from './turn-view.tsx';
import { VerdictView } from './verdict-view.tsx';
import type { TrajectoryDetail } from '../../contracts/trajectory.ts';

/** One trajectory's turns as of the replay position, then its verdict once the replay reaches the end. */
export function TraceTurns({
  t,
  state,
  playing,
  side,
}: {
  t: TrajectoryDetail;
  state: ReplayState;
  playing: boolean;
  side?: string;
}) {
  const refs = useRef(new Map<number, HTMLElement>());
  // Follow the turn being replayed, but only while playing: a reader scrolling a paused trace keeps their place.
  useEffect(() => {
    if (playing && state.current >= 0)
      refs.current.get(state.current)?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }, [playing, state.current]);

  const turns = t.content.turns;
  if (turns.length === 0) {
    return (
      <div className="panel empty" role="status">
        This trajectory has no turns: it ended ({t.finishReason}) before the first generation.
        {t.content.error && <p className="error">Engine error: {t.content.error}</p>}
      </div>
    );
  }
  return (
    <div>
      {state.turns.length === 0 && (
        <div className="panel empty" role="status">
          The replay is at the start: nothing generated yet.
        </div>
      )}
      {state.turns.map((view) => (
        <TurnView
          key={view.turn}
          ref={(el) => {
            if (el) refs.current.set(view.turn, el);
            else refs.current.delete(view.turn);
          }}
          turn={turns[view.turn]}
          replay={view}
          side={side}
          current={!state.finished && view.turn === state.current}
        />
      ))}
      {state.finished && <VerdictView t={t} side={side} />}
    </div>
  );
}
