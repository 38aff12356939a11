/**
 * The shapes one import pass works with, shared by the importer (importer.ts) and each format's side files
 * (side-files.ts): what is read into where, what a pass found, and what a format's hooks are given.
 */
import type { ForeignFormat, ForeignProblem } from '../../contracts/foreign.ts';
import type { Database } from '../../server/db/client.ts';
import { IMPORT_LIMITS, type ImportLimits } from '../../server/imports/bounds.ts';
import type { Where } from '../../server/imports/readers.ts';

export interface ImportTarget {
  db: Database;
  runId: string;
  folder: string;
  format: ForeignFormat;
  /** TRL's reward_weights, where the run's config gives them. */
  weights?: Record<string, number>;
  /** A pass while following leaves a whole-file record that fails to read for a later pass (it may be half written). */
  following?: boolean;
  signal?: AbortSignal;
  /** Tighter limits than IMPORT_LIMITS (tests). */
  limits?: Partial<ImportLimits>;
}

export interface PassResult {
  lines: number;
  trajectories: number;
  /** The first IMPORT_LIMITS.problemsKept malformed records, with their place. */
  problems: ForeignProblem[];
  /** All malformed records, kept or not. */
  problemCount: number;
  /** Steps (by split) that gained trajectories. */
  steps: { train: Set<number>; eval: Set<number> };
}

export const limitsOf = (t: ImportTarget): ImportLimits => ({ ...IMPORT_LIMITS, ...t.limits });

/** Where problems go: a pass's Problems (counted, the first ones kept). */
export interface ProblemSink {
  add(p: ForeignProblem): void;
}

/** What a side file's records go to, one at a time, with their place. */
export type SideRecordTaker = (
  record: unknown,
  where: { file: string; line: number },
  problems: ProblemSink,
) => Promise<void>;

/** What the importer lends a format's hooks for one pass. */
export interface SideIO {
  t: ImportTarget;
  result: PassResult;
  /** The folder's files (relative, in natural order) whose path matches. */
  filesMatching(re: RegExp): string[];
  /** A JSONL file read by byte offsets like the rollouts (contained, bounded, its offset stored); the lines read. */
  readSideFile(file: string, take: SideRecordTaker): Promise<number>;
}

/**
 * A format's files beside its rollouts, read through hooks so that the importer names no format: `before` the
 * rollouts (metrics by step), `after` them (what joins stored trajectories), and `beside` each whole-file record
 * (what its Where gains, e.g. a reward kept in a file of its own).
 */
export interface SideFiles {
  before?(io: SideIO): Promise<void>;
  after?(io: SideIO): Promise<void>;
  beside?(t: ImportTarget, file: string, problems: ProblemSink): Promise<Partial<Where>>;
}
