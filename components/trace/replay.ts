/**
 * Replay of a recorded trajectory: the timeline (ms from the first generation request) built from the stored
 * timestamps, and the view at any offset. Pure, so the page and the tests share it.
 */
import type { StoredTrajectoryContent } from '../../contracts/trajectory.ts';

export type EventKind = 'gen_start' | 'gen_end' | 'tool_start' | 'tool_end';
export interface TimelineEvent {
  at: number;
  kind: EventKind;
  turn: number;
}

/** One turn's spans, ms from the start. A turn without a tool has tool* = null. */
export interface TurnSpan {
  turn: number;
  genStart: number;
  genEnd: number;
  toolQueued: number | null;
  toolStart: number | null;
  toolEnd: number | null;
  textLength: number;
}

export interface Timeline {
  /** Epoch ms of offset 0 (the first turn's genStartedAt); null when there are no turns. */
  origin: number | null;
  duration: number;
  spans: TurnSpan[];
  events: TimelineEvent[];
}

export const SPEEDS = [1, 2, 4, 8] as const;
export type Speed = (typeof SPEEDS)[number];

/**
 * The timeline of a trajectory. Timestamps come from different clocks (engine client, sandbox) and can be a few ms
 * out of order, so every span is clamped to start no earlier than the one before it: the replay then never shows a
 * tool running before its call was generated, and the events are sorted by construction.
 */
export function buildTimeline(content: Pick<StoredTrajectoryContent, 'turns' | 'finishedAt'>): Timeline {
  const turns = content.turns;
  if (turns.length === 0) return { origin: null, duration: 0, spans: [], events: [] };
  const origin = turns[0].genStartedAt;
  const rel = (epoch: number) => (Number.isFinite(epoch) ? epoch - origin : 0);
  const spans: TurnSpan[] = [];
  const events: TimelineEvent[] = [];
  let cursor = 0;
  const after = (epoch: number) => (cursor = Math.max(cursor, rel(epoch)));
  for (const turn of turns) {
    const genStart = after(turn.genStartedAt);
    const genEnd = after(turn.genFinishedAt);
    events.push(
      { at: genStart, kind: 'gen_start', turn: turn.index },
      { at: genEnd, kind: 'gen_end', turn: turn.index },
    );
    let toolQueued: number | null = null,
      toolStart: number | null = null,
      toolEnd: number | null = null;
    if (turn.tool) {
      toolQueued = after(turn.tool.queuedAt);
      toolStart = after(turn.tool.startedAt);
      toolEnd = after(turn.tool.finishedAt);
      events.push(
        { at: toolQueued, kind: 'tool_start', turn: turn.index },
        { at: toolEnd, kind: 'tool_end', turn: turn.index },
      );
    }
    spans.push({ turn: turn.index, genStart, genEnd, toolQueued, toolStart, toolEnd, textLength: turn.text.length });
  }
  const duration = content.finishedAt !== null ? after(content.finishedAt) : cursor;
  return { origin, duration, spans, events };
}

export type ToolPhase = 'none' | 'pending' | 'queued' | 'running' | 'done';
export interface TurnView {
  turn: number;
  shownChars: number;
  generating: boolean;
  tool: ToolPhase;
}
export interface ReplayState {
  t: number;
  /** The turns that have started by t, in order; later turns are not shown yet. */
  turns: TurnView[];
  /** The last started turn (-1 before any). */
  current: number;
  /** The turn whose tool call is queued or running at t, if any. */
  toolRunning: number | null;
  finished: boolean;
}

export const clampT = (tl: Timeline, t: number) => Math.min(Math.max(0, Number.isFinite(t) ? t : 0), tl.duration);

/**
 * What is visible at offset t: each started turn with the share of its text generated so far (proportional to the
 * time elapsed in its generation: the engine streams at a roughly steady rate) and where its tool call stands.
 */
export function stateAt(tl: Timeline, t: number): ReplayState {
  const at = clampT(tl, t);
  const turns: TurnView[] = [];
  let toolRunning: number | null = null;
  for (const s of tl.spans) {
    if (at < s.genStart) break;
    const span = s.genEnd - s.genStart;
    const frac = span <= 0 || at >= s.genEnd ? 1 : (at - s.genStart) / span;
    let tool: ToolPhase = 'none';
    if (s.toolQueued !== null && s.toolStart !== null && s.toolEnd !== null) {
      // A zero-length call (a parse error) is done the moment it is queued.
      tool = at >= s.toolEnd ? 'done' : at < s.toolQueued ? 'pending' : at < s.toolStart ? 'queued' : 'running';
      if (tool === 'queued' || tool === 'running') toolRunning = s.turn;
    }
    turns.push({ turn: s.turn, shownChars: Math.round(s.textLength * frac), generating: frac < 1, tool });
  }
  return {
    t: at,
    turns,
    current: turns.length ? turns[turns.length - 1].turn : -1,
    toolRunning,
    finished: at >= tl.duration,
  };
}

/** The offsets a step lands on: the start, the moment each turn is complete (text and tool output), the end. */
export function turnBoundaries(tl: Timeline): number[] {
  const ends = tl.spans.map((s) => Math.max(s.genEnd, s.toolEnd ?? 0));
  return [...new Set([0, ...ends, tl.duration])].sort((a, b) => a - b);
}

/** The next turn boundary after t (the end when there is none). */
export function stepForward(tl: Timeline, t: number): number {
  return turnBoundaries(tl).find((b) => b > t) ?? tl.duration;
}

/** The previous turn boundary before t (0 when there is none). */
export function stepBack(tl: Timeline, t: number): number {
  const bs = turnBoundaries(tl).filter((b) => b < t);
  return bs.length ? bs[bs.length - 1] : 0;
}

/** ?t= as an offset, or null (absent or malformed: show the whole trajectory). */
export function parseT(raw: string | null | undefined): number | null {
  if (raw === null || raw === undefined || raw.trim() === '') return null;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? Math.round(n) : null;
}

export function parseSpeed(raw: string | null | undefined): Speed {
  const n = Number(raw);
  return (SPEEDS as readonly number[]).includes(n) ? (n as Speed) : 1;
}

/** A latency: "850 ms", "2.3 s", "1m 05s". */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

/** A replay clock: "m:ss.d". */
export function formatClock(ms: number): string {
  const tenths = Math.floor(Math.max(0, ms) / 100);
  const s = Math.floor(tenths / 10);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}.${tenths % 10}`;
}
