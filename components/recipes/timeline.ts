/**
 * The recipe designer's stages as a timeline: new stages with unique names, and each stage's place and size
 * (pure).
 */
import { EMBEDDED_DEFAULTS, REPORT_DEFAULTS } from '../../contracts/recipe.ts';
import type { ModelKind } from './field-def.ts';
import type { Spec } from './path.ts';

const R = REPORT_DEFAULTS;
const E = EMBEDDED_DEFAULTS;

function uniqueName(taken: readonly string[], base: string): string {
  if (!taken.includes(base)) return base;
  for (let i = 2; ; i++) if (!taken.includes(`${base}-${i}`)) return `${base}-${i}`;
}

export function stageNames(spec: Spec): string[] {
  const stages = Array.isArray(spec.stages) ? spec.stages : [];
  return stages.map((s) =>
    s && typeof s === 'object' && typeof (s as { name?: unknown }).name === 'string'
      ? (s as { name: string }).name
      : '',
  );
}

/** A new stage with the fewest fields set (everything else defaults). */
export function newStage(type: 'sft' | 'rl', taken: readonly string[]): Spec {
  if (type === 'sft')
    return { type: 'sft', name: uniqueName(taken, 'sft'), data: { kind: 'generated', n: 1000, seed: 1 } };
  return { type: 'rl', name: uniqueName(taken, 'rl'), data: { kind: 'generated', split: 'train', n: 2000, seed: 11 } };
}

export interface TimelineStage {
  name: string;
  type: string;
  steps: number;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * Steps per stage as the schema counts them (stageSteps: SFT epochs × ⌈demos / batch⌉ capped by maxSteps; RL
 * steps), filling unset values with the defaults for the model kind. Works on an invalid spec (unknowns count 0).
 */
export function timelineOf(spec: Spec): TimelineStage[] {
  const model: ModelKind = (spec.model as { kind?: unknown } | undefined)?.kind === 'model' ? 'model' : 'embedded';
  const stages = Array.isArray(spec.stages) ? (spec.stages as unknown[]) : [];
  return stages.map((raw) => {
    const s = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const type = typeof s.type === 'string' ? s.type : '?';
    const name = typeof s.name === 'string' ? s.name : '';
    if (type === 'rl') return { name, type, steps: num(s.steps) ?? (model === 'model' ? R.rl.steps : E.rl.steps) };
    if (type !== 'sft') return { name, type, steps: 0 };
    const n = num((s.data as { n?: unknown } | undefined)?.n) ?? 0;
    const batch = num(s.batch) ?? (model === 'model' ? R.sft.batch : E.sft.batch);
    const epochs = num(s.epochs) ?? R.sft.epochs;
    const steps = batch > 0 ? epochs * Math.ceil(n / batch) : 0;
    return { name, type, steps: Math.min(num(s.maxSteps) ?? Infinity, steps) };
  });
}
