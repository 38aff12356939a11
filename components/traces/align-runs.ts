/**
 * Several runs' trajectories of one prompt, side by side (pure): the turn rows, how far each row agrees, which
 * trajectory each column shows first, and the picks in the URL. Turn k of each beside the others, as the two-trace compare
 * does (trace/diff.ts): all start from the same prompt, so turn k is each run's k-th attempt.
 */
import type { StoredTurn } from '../../contracts/trajectory.ts';
import { MAX_TRACE_RUNS, type ProblemTrajectoryRow, type RunProblemColumn } from '../../contracts/traces.ts';
import { codeOf } from '../trace/diff.ts';

/** same: identical text in every column; same_code: the same tool code; partial: some columns have no such turn. */
export type RowAgreement = 'same' | 'same_code' | 'different' | 'partial';

export interface TurnRow {
  index: number;
  cells: (StoredTurn | null)[];
  agreement: RowAgreement;
}

export function alignRuns(columns: StoredTurn[][]): TurnRow[] {
  const n = Math.max(0, ...columns.map((c) => c.length));
  return Array.from({ length: n }, (_, index) => {
    const cells = columns.map((c) => c[index] ?? null);
    return { index, cells, agreement: agreementOf(cells) };
  });
}

function agreementOf(cells: (StoredTurn | null)[]): RowAgreement {
  if (cells.some((c) => c === null)) return 'partial';
  const turns = cells as StoredTurn[];
  if (turns.every((t) => t.text === turns[0].text)) return 'same';
  const code = codeOf(turns[0]);
  if (code !== null && turns.every((t) => codeOf(t) === code)) return 'same_code';
  return 'different';
}

/**
 * The trajectory a column shows until one is picked: the latest step's lowest sample (training over evaluation at one
 * step), so each run shows where it ended up on this prompt.
 */
export function defaultPick(items: ProblemTrajectoryRow[]): string | null {
  let best: ProblemTrajectoryRow | null = null;
  for (const t of items) {
    if (!best) best = t;
    else if (t.step !== best.step) best = t.step > best.step ? t : best;
    else if (t.split !== best.split) best = t.split === 'train' ? t : best;
    else if (t.sampleIndex < best.sampleIndex) best = t;
  }
  return best?.id ?? null;
}

/** The picks a page shows: the one in the URL or chosen, when that run lists it; otherwise the column's default. */
export function effectivePicks(columns: RunProblemColumn[], picks: (string | null)[]): (string | null)[] {
  return columns.map((c, i) => {
    const p = picks[i];
    return p && c.items.some((t) => t.id === p) ? p : defaultPick(c.items);
  });
}

/** What a column's picker says of one trajectory. */
export function sampleLabel(t: ProblemTrajectoryRow): string {
  const verdict = t.correct === null ? 'no verdict' : t.correct ? 'correct' : 'incorrect';
  const split = t.split === 'train' ? '' : ` ${t.split}`;
  return `step ${t.step}${split} · sample ${t.sampleIndex} · reward ${t.reward.toFixed(2)} · ${verdict}`;
}

/** Column letters, the accessible prefix of each column's turns ("B turn 3"). */
export const columnLetter = (i: number) => String.fromCharCode(65 + i);

/** `?pick=t1,,t3` → one entry per column (null: the default), at most MAX_TRACE_RUNS. */
export function parsePicks(param: string | string[] | null | undefined, columns: number): (string | null)[] {
  const raw = (Array.isArray(param) ? param.join(',') : (param ?? '')).split(',');
  return Array.from({ length: Math.min(columns, MAX_TRACE_RUNS) }, (_, i) => {
    const id = raw[i]?.trim();
    return id && id.length <= 100 ? id : null;
  });
}
