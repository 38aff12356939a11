'use client';
import type { StepTimeline } from '../../contracts/timeline.ts';
import { durationText, KIND_STYLE, placeBlocks, ticks } from './timeline-layout.ts';

const LANE_H = 18;

/** The lanes, each block a bar placed by its times; hovering names it and its duration; the critical path outlined. */
export function TimelineChart({ t }: { t: StepTimeline }) {
  const placed = placeBlocks(t);
  const span = t.end - t.origin;
  return (
    <figure className="timeline" aria-label={`Timeline of step ${t.step}`} style={{ margin: 0 }}>
      <div className="timeline-legend row">
        {Object.entries(KIND_STYLE).map(([kind, s]) => (
          <span key={kind} className="row" style={{ gap: 4 }}>
            <span aria-hidden="true" style={{ width: 10, height: 10, background: s.colour, display: 'inline-block' }} />
            {s.text}
          </span>
        ))}
        <span className="row" style={{ gap: 4 }}>
          <span aria-hidden="true" className="timeline-critical-swatch" />
          critical path
        </span>
      </div>
      <div style={{ display: 'grid', gridTemplateColumns: '180px 1fr', gap: '2px 8px' }}>
        {t.lanes.map((lane, i) => (
          <div key={lane.id} style={{ display: 'contents' }}>
            <div className="muted timeline-lane-label" title={lane.label}>
              {lane.label}
            </div>
            <div className="timeline-lane" style={{ height: LANE_H }} data-lane={lane.id}>
              {placed
                .filter((b) => b.lane === i)
                .map((b, j) => (
                  <div
                    key={j}
                    className={`timeline-block${b.critical ? ' critical' : ''}`}
                    data-kind={b.kind}
                    data-critical={b.critical}
                    title={b.title}
                    aria-label={b.title}
                    role="img"
                    style={{ left: `${b.left}%`, width: `${b.width}%`, background: KIND_STYLE[b.kind].colour }}
                  />
                ))}
            </div>
          </div>
        ))}
        <div />
        <div className="timeline-axis" aria-hidden="true">
          {ticks(span).map((x) => (
            <span key={x} style={{ left: `${span > 0 ? (x / span) * 100 : 0}%` }}>
              {durationText(x)}
            </span>
          ))}
        </div>
      </div>
    </figure>
  );
}
