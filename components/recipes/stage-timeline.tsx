'use client';
import { timelineOf } from './fields.ts';
import type { Spec } from './path.ts';

/** One bar: a segment per stage, as wide as its share of the optimiser steps. */
export function StageTimeline({ spec }: { spec: Spec }) {
  const stages = timelineOf(spec);
  const total = stages.reduce((a, s) => a + s.steps, 0);
  if (stages.length === 0) return <div className="timeline-empty muted">Timeline: no stages yet.</div>;
  return (
    <figure className="timeline" aria-label="Stage timeline">
      <div className="timeline-bar" role="list">
        {stages.map((s, i) => (
          <div
            key={i}
            role="listitem"
            className={`timeline-seg ${s.type === 'rl' ? 'rl' : 'sft'}`}
            style={{ flexGrow: Math.max(s.steps, 0), flexBasis: 0, minWidth: '90px' }}
            title={`${s.name}: ${s.type}, ${s.steps} steps`}
          >
            <span className="timeline-name">
              {i + 1}. {s.name || '(unnamed)'}
            </span>
            <span className="timeline-meta">
              {s.type.toUpperCase()} · {s.steps.toLocaleString()} steps
            </span>
          </div>
        ))}
      </div>
      <figcaption className="muted">
        Total {total.toLocaleString()} optimiser steps over {stages.length} stage{stages.length === 1 ? '' : 's'} (SFT:
        epochs × ⌈demos / batch⌉).
      </figcaption>
    </figure>
  );
}
