/**
 * Which format a folder holds, from the paths of its files (relative, '/'-separated) alone: each framework writes
 * its own layout (FOREIGN_FORMATS). Pure.
 */
import type { ForeignFormat } from './foreign.ts';

/** Each format's files, as the framework names them. */
export const LAYOUTS: Record<ForeignFormat, RegExp> = {
  'prime-rl':
    /(^|\/)(rollouts\/step_\d+\/(train|eval)\/(all|effective)\/traces\.jsonl|monitors\/file\/traces\/stream\.jsonl)$/,
  verl: /(^|\/)\d+\.jsonl$/,
  'nemo-rl': /(^|\/)(train|val)_data_step\d+\.jsonl$/,
  trl: /(^|\/)completions\/completions_\d{5}\.parquet$/,
  // `{step:04d}`: five digits and more from step 10000.
  art: /(^|\/)trajectories\/[^/]+\/\d{4,}\.parquet$/,
  // Beside the episodes, each step folder holds a `batch_summary.json` that is none.
  rllm: /(^|\/)episodes\/[^/]+_step_\d+_epoch_\d+\/(?!batch_summary\.json$)[^/]+\.json$/,
  atif: /(^|\/)(agent\/trajectory\.json|[^/]*trajectory[^/]*\.json)$/,
};

export type Detected = { ok: true; format: ForeignFormat; files: string[] } | { ok: false; reason: string };

/** The one format whose files the folder holds, with those files in order; else why not. */
export function detectFormat(paths: string[]): Detected {
  const found = (Object.keys(LAYOUTS) as ForeignFormat[])
    .map((format) => ({ format, files: paths.filter((p) => LAYOUTS[format].test(p)).sort(naturalOrder) }))
    .filter((f) => f.files.length > 0);
  if (found.length === 1) return { ok: true, ...found[0]! };
  if (found.length === 0)
    return {
      ok: false,
      reason: `no rollout files of a known format (${Object.keys(LAYOUTS).join(', ')}) in ${paths.length} files: name the format with --format`,
    };
  return {
    ok: false,
    reason: `files of several formats (${found.map((f) => `${f.format}: ${f.files[0]}`).join('; ')}): name one with --format`,
  };
}

/** Numbers inside names compare as numbers: step_9 before step_10. */
export function naturalOrder(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}
