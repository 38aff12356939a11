'use client';
import { formatClock, SPEEDS, type Speed } from './replay.ts';

interface Props {
  t: number;
  duration: number;
  playing: boolean;
  speed: Speed;
  /** e.g. "turn 2 of 5 · tool running"; announced politely as the replay moves. */
  status: string;
  onPlayPause(): void;
  onStepBack(): void;
  onStepForward(): void;
  onSeek(t: number): void;
  onSpeed(s: Speed): void;
}

/** Play/pause, step a turn back or forward, scrub, and pick the speed of the recorded timeline. */
export function ReplayControls({
  t,
  duration,
  playing,
  speed,
  status,
  onPlayPause,
  onStepBack,
  onStepForward,
  onSeek,
  onSpeed,
}: Props) {
  const empty = duration <= 0;
  return (
    <section
      className="panel row"
      aria-label="Replay"
      style={{ position: 'sticky', top: 0, zIndex: 2, marginBottom: 12 }}
    >
      <button
        type="button"
        onClick={onStepBack}
        disabled={empty || t <= 0}
        aria-label="Step back a turn"
        title="Step back a turn"
      >
        « turn
      </button>
      <button
        type="button"
        onClick={onPlayPause}
        disabled={empty}
        aria-label={playing ? 'Pause replay' : 'Play replay'}
        style={{ minWidth: 72 }}
      >
        {playing ? 'Pause' : t >= duration ? 'Replay' : 'Play'}
      </button>
      <button
        type="button"
        onClick={onStepForward}
        disabled={empty || t >= duration}
        aria-label="Step forward a turn"
        title="Step forward a turn"
      >
        turn »
      </button>
      <input
        type="range"
        min={0}
        max={Math.max(1, duration)}
        step={10}
        value={Math.min(t, duration)}
        onChange={(e) => onSeek(Number(e.target.value))}
        disabled={empty}
        aria-label="Replay position"
        aria-valuetext={`${formatClock(t)} of ${formatClock(duration)}`}
        style={{ flex: '1 1 240px', minWidth: 160 }}
      />
      <span style={{ fontVariantNumeric: 'tabular-nums' }} aria-hidden="true">
        {formatClock(t)} / {formatClock(duration)}
      </span>
      <label className="row" style={{ gap: 6 }}>
        <span className="muted">Speed</span>
        <select value={speed} onChange={(e) => onSpeed(Number(e.target.value) as Speed)} aria-label="Replay speed">
          {SPEEDS.map((s) => (
            <option key={s} value={s}>
              {s}×
            </option>
          ))}
        </select>
      </label>
      <span className="muted" role="status" aria-live="polite" style={{ minWidth: 160 }}>
        {status}
      </span>
    </section>
  );
}
