/**
 * Where a step's time went: a lane per trajectory with its generation turns and tool calls, then the step's phases
 * (reward, RoC selection, training, weight sync, storage), from the times the run recorded (epoch ms). Built here,
 * pure, so the run page, the CLI's Perfetto export and the tests share one reading of the records.
 */
import type { StoredTurn } from './trajectory.ts';

/** The phases the RL loop times after generation (workers/train/rl-stage.ts), in the order a synchronous step runs them. */
export const STEP_PHASES = ['reward', 'roc', 'train', 'sync', 'storage'] as const;
export type StepPhase = (typeof STEP_PHASES)[number];

/** One recorded phase, epoch ms. A phase may run more than once in a step (a reward pass per dynamic-sampling round). */
export interface PhaseSpan {
  name: StepPhase;
  start: number;
  end: number;
}

export type BlockKind = 'generate' | 'tool_queue' | 'tool' | StepPhase;

export interface TimelineLane {
  /** `t:<trajectory id>` or `phases`. */
  id: string;
  label: string;
  trajectoryId: string | null;
}

export interface TimelineBlock {
  lane: number;
  kind: BlockKind;
  /** What hovering it says: "turn 2 generation", "turn 2 tool call (ok)", "train". */
  label: string;
  /** Epoch ms. */
  start: number;
  end: number;
  /** On the step's critical path: the last trajectory to finish, then every phase after generation. */
  critical: boolean;
}

export interface StepTimeline {
  runId: string;
  step: number;
  /** Epoch ms of the earliest block; 0 when there is none. */
  origin: number;
  end: number;
  lanes: TimelineLane[];
  blocks: TimelineBlock[];
  /** False for runs that recorded no phase times (before they were recorded, or imported): trajectory lanes only. */
  phasesRecorded: boolean;
  /** Turns or calls whose source kept no times (imports): left out, counted. */
  untimed: number;
}

/** What the builder reads of each trajectory of the step. */
export interface TimelineTrajectory {
  id: string;
  groupId: string;
  sampleIndex: number;
  turns: StoredTurn[];
}

const finite = (...xs: (number | null | undefined)[]) => xs.every((x) => typeof x === 'number' && Number.isFinite(x));

/**
 * The step's timeline. Lanes: one per trajectory in group then sample order, then one for the phases. Critical path:
 * generation ends when its last trajectory does, so that trajectory's blocks are on it, and so is every phase (each
 * waits for the one before; overlapping ones, such as a weight sync hidden behind the next rollouts, are still marked,
 * since the step's end waits for them).
 */
export function buildStepTimeline(
  runId: string,
  step: number,
  trajectories: TimelineTrajectory[],
  phases: PhaseSpan[] | null,
): StepTimeline {
  const sorted = [...trajectories].sort(
    (a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0) || a.sampleIndex - b.sampleIndex,
  );
  const lanes: TimelineLane[] = [];
  const blocks: TimelineBlock[] = [];
  let untimed = 0;
  let lastLane = -1;
  let lastEnd = Number.NEGATIVE_INFINITY;
  for (const t of sorted) {
    const lane = lanes.length;
    const first = blocks.length;
    lanes.push({ id: `t:${t.id}`, label: `${t.groupId} · sample ${t.sampleIndex}`, trajectoryId: t.id });
    for (const turn of t.turns) {
      const n = turn.index + 1;
      if (turn.absent?.timing || !finite(turn.genStartedAt, turn.genFinishedAt)) untimed++;
      else blocks.push(block(lane, 'generate', `turn ${n} generation`, turn.genStartedAt, turn.genFinishedAt));
      const tool = turn.tool;
      if (!tool) continue;
      if (tool.absent?.timing || !finite(tool.queuedAt, tool.startedAt, tool.finishedAt)) {
        untimed++;
        continue;
      }
      if (tool.startedAt > tool.queuedAt)
        blocks.push(block(lane, 'tool_queue', `turn ${n} tool call queued`, tool.queuedAt, tool.startedAt));
      blocks.push(block(lane, 'tool', `turn ${n} tool call (${tool.status})`, tool.startedAt, tool.finishedAt));
    }
    let end = Number.NEGATIVE_INFINITY;
    for (let i = first; i < blocks.length; i++) end = Math.max(end, blocks[i].end);
    if (end > lastEnd) [lastEnd, lastLane] = [end, lane];
  }
  for (const b of blocks) if (b.lane === lastLane) b.critical = true;
  if (phases?.length) {
    const lane = lanes.length;
    lanes.push({ id: 'phases', label: 'step phases', trajectoryId: null });
    for (const p of phases)
      if (finite(p.start, p.end)) blocks.push({ ...block(lane, p.name, p.name, p.start, p.end), critical: true });
  }
  // A reduce, not Math.min(...): a large step has more blocks than a call's arguments may be.
  const origin = blocks.length ? blocks.reduce((m, b) => Math.min(m, b.start), Number.POSITIVE_INFINITY) : 0;
  const end = blocks.length ? blocks.reduce((m, b) => Math.max(m, b.end), Number.NEGATIVE_INFINITY) : 0;
  return { runId, step, origin, end, lanes, blocks, phasesRecorded: !!phases?.length, untimed };
}

function block(lane: number, kind: BlockKind, label: string, start: number, end: number): TimelineBlock {
  return { lane, kind, label, start, end: Math.max(start, end), critical: false };
}

/** Total time per block kind, ms (the blocks of one kind may overlap across lanes: this is work, not wall time). */
export function timeByKind(t: StepTimeline): Partial<Record<BlockKind, number>> {
  const out: Partial<Record<BlockKind, number>> = {};
  for (const b of t.blocks) out[b.kind] = (out[b.kind] ?? 0) + (b.end - b.start);
  return out;
}
