/** Where the timeline chart draws each block and tick (pure): positions in percent of the step's span. */
import type { BlockKind, StepTimeline, TimelineBlock } from '../../contracts/timeline.ts';

/** One colour per kind of block, apart on the dark background; the legend lists them in this order. */
export const KIND_STYLE: Record<BlockKind, { colour: string; text: string }> = {
  generate: { colour: '#6aa9ff', text: 'generation' },
  tool_queue: { colour: '#8b949e', text: 'tool call queued' },
  tool: { colour: '#f0883e', text: 'tool call' },
  reward: { colour: '#3fb950', text: 'reward' },
  roc: { colour: '#39c5cf', text: 'RoC selection' },
  train: { colour: '#d2a8ff', text: 'training' },
  sync: { colour: '#e3b341', text: 'weight sync' },
  storage: { colour: '#ff7bc0', text: 'storage' },
};

export interface PlacedBlock extends TimelineBlock {
  left: number;
  width: number;
  /** What hovering says: the block and its duration. */
  title: string;
}

export function durationText(ms: number): string {
  if (ms === 0) return '0';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** Blocks placed along the step (percent), at least a sliver wide so that a 1 ms call can still be hovered. */
export function placeBlocks(t: StepTimeline): PlacedBlock[] {
  const span = Math.max(1, t.end - t.origin);
  return t.blocks.map((b) => ({
    ...b,
    left: ((b.start - t.origin) / span) * 100,
    width: Math.max(0.15, ((b.end - b.start) / span) * 100),
    title: `${b.label} · ${durationText(b.end - b.start)}${b.critical ? ' · critical path' : ''}`,
  }));
}

/** About `n` round-valued ticks across the step: offsets from its start, ms. */
export function ticks(spanMs: number, n = 6): number[] {
  if (spanMs <= 0) return [0];
  const raw = spanMs / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let x = 0; x <= spanMs + 1e-9; x += step) out.push(x);
  return out;
}
