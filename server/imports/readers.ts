/**
 * How each format's files are read: line by line (JSONL, followed by byte offsets), by row group (Parquet) or as one
 * document (JSON), and which mapper turns a record into trajectories, with what the file's path says (step,
 * split). Pure.
 */
import type { ForeignFormat, Mapped } from '../../contracts/foreign.ts';
import { checkedNumbers } from './check-numbers.ts';
import { mapArtRow } from './formats/art.ts';
import { mapAtifDocument } from './formats/atif.ts';
import { mapNemoRlLine } from './formats/nemo-rl.ts';
import { mapPrimeRlLine } from './formats/prime-rl.ts';
import { mapRllmEpisode } from './formats/rllm.ts';
import { mapTrlRow } from './formats/trl.ts';
import { mapVerlLine } from './formats/verl.ts';

export interface Where {
  file: string;
  /** 1-based line or row; 0 for a whole-file record. */
  line: number;
  split: 'train' | 'eval';
  /** The step the file's name says, where it says one. */
  step?: number;
  /** What the importer read beside the file: Harbor's verifier/reward.txt for an ATIF trial. */
  reward?: number;
  /** The run's reward weights (TRL's reward_weights), by reward function name. */
  weights?: Record<string, number>;
}

export interface FormatReader {
  kind: 'lines' | 'parquet' | 'json';
  map(record: unknown, where: Where): Mapped;
}

/** Validation and evaluation dumps, by the folder or file names the frameworks give them. */
export function splitOf(file: string): 'train' | 'eval' {
  return /(^|\/|_)(val|valid|validation|eval|evaluation|test)(_|\/|$)/i.test(file) ? 'eval' : 'train';
}

/** Where each format's path names the step: a folder (`step_12/`, `_step_12_epoch_0/`) or the file's own number. */
const STEP_IN_PATH: Record<ForeignFormat, RegExp | null> = {
  'prime-rl': /(?:^|\/)step_(\d+)\//,
  verl: /(\d+)\.jsonl$/,
  'nemo-rl': /_step(\d+)\.jsonl$/,
  trl: /_(\d+)\.parquet$/,
  art: /(\d+)\.parquet$/,
  rllm: /_step_(\d+)_epoch_\d+\//,
  atif: null,
};

/** The step a file's path carries in its format's layout, where it carries one. */
export function stepOf(format: ForeignFormat, file: string): number | undefined {
  const m = STEP_IN_PATH[format]?.exec(file);
  return m ? Number(m[1]) : undefined;
}

const READERS: Record<ForeignFormat, FormatReader> = {
  'prime-rl': { kind: 'lines', map: (r, w) => mapPrimeRlLine(r, w) },
  'nemo-rl': { kind: 'lines', map: (r, w) => mapNemoRlLine(r, w) },
  art: { kind: 'parquet', map: (r, w) => mapArtRow(r, w) },
  rllm: { kind: 'json', map: (r, w) => mapRllmEpisode(r, w) },
  verl: { kind: 'lines', map: (r, w) => mapVerlLine(r, { file: w.file, line: w.line, split: w.split }) },
  trl: {
    kind: 'parquet',
    map: (r, w) => mapTrlRow(r, { file: w.file, line: w.line, ...(w.weights ? { weights: w.weights } : {}) }),
  },
  atif: {
    kind: 'json',
    map: (r, w) =>
      mapAtifDocument(r, { file: w.file, split: w.split, ...(w.reward === undefined ? {} : { reward: w.reward }) }),
  },
};

/** The format's reader; every mapper's trajectories pass the one number check (check-numbers.ts) on the way out. */
export function readerOf(format: ForeignFormat): FormatReader {
  const r = READERS[format];
  return { kind: r.kind, map: (record, where) => checkedNumbers(r.map(record, where)) };
}

/** Where Harbor keeps a trial's reward: `<trial>/verifier/reward.txt` beside `<trial>/agent/trajectory.json`. */
export function harborRewardFile(file: string): string | null {
  const m = /^(.*\/)?agent\/trajectory\.json$/.exec(file);
  return m ? `${m[1] ?? ''}verifier/reward.txt` : null;
}
