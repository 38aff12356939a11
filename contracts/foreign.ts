/**
 * Runs trained elsewhere: the one shape every format's mapper produces (server/imports/formats/), read by
 * the importer, the viewers and the ATIF export. Types only. A field the source lacks is absent, never zero.
 */

/** The formats Toolsmith reads: each names the framework (or standard) that writes it. */
export const FOREIGN_FORMATS = ['prime-rl', 'verl', 'nemo-rl', 'trl', 'art', 'rllm', 'atif'] as const;
export type ForeignFormat = (typeof FOREIGN_FORMATS)[number];

export interface ForeignToolCall {
  /** The call's id where the source names it (OpenAI-style `tool_calls[].id`, ATIF's `tool_call_id`). */
  id?: string;
  name: string;
  /** The arguments as the source wrote them: a JSON string in OpenAI-style messages. */
  arguments: string;
}

/** One message of a conversation, as chat templates see them. */
export interface ForeignMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls?: ForeignToolCall[];
  /** On a tool message: the call it answers. */
  toolCallId?: string;
  /** False when the source marks an assistant message as not trained on (ART's `trainable`). */
  trainable?: boolean;
  /** Epoch ms, where the source keeps one (ATIF's step timestamps). */
  time?: number;
}

/** Token-level data of a trajectory's completion where the source keeps it; arrays are aligned with `ids`. */
export interface ForeignTokens {
  /** Prompt token ids, where kept apart from the completion. */
  promptIds?: number[];
  ids: number[];
  /** 1 = trained on (model token), 0 = masked (tool or prompt token). */
  mask?: number[];
  rolloutLogprobs?: number[];
  trainerLogprobs?: number[];
  entropies?: number[];
  /** Per-token advantages (prime-rl, token exports). */
  advantages?: number[];
}

/** One sampled trajectory of a foreign run, mapped. */
export interface ForeignTrajectory {
  /** Stable within the run: the source's id, or file + line where it has none (idempotent re-import). */
  id: string;
  step: number;
  split: 'train' | 'eval';
  /** The group the trajectory was sampled in (GRPO's G samples of one prompt). */
  groupId: string;
  /**
   * The conversation: the prompt's messages, then the trajectory's own. A source that keeps only flattened text
   * (verl: `input`, `output`) gives one user message and one assistant message.
   */
  messages: ForeignMessage[];
  /** How many of `messages` are the prompt. */
  promptMessages: number;
  /** The total reward; for sources with components only (TRL), their weighted sum. */
  reward?: number;
  /** Each reward component as the source names it. */
  rewards?: Record<string, number>;
  advantage?: number;
  /** The reference answer where the source keeps it (verl's `gts`). */
  answer?: string;
  tokens?: ForeignTokens;
  /** The policy weight versions the trajectory was generated with (prime-rl's run.work.policy). */
  policy?: { start?: number; end?: number };
  /** Every field of the source the mapping did not use, as it was. */
  metadata: Record<string, unknown>;
  /** Where it came from: file (relative to the imported folder) and 1-based line (0 for a whole-file record). */
  source: { file: string; line: number };
}

/** A record the mapper could not read, reported with where it is and why; the rest is imported. */
export interface ForeignProblem {
  file: string;
  line: number;
  reason: string;
}

/** What one mapper call gives back. */
export type Mapped = { ok: true; trajectories: ForeignTrajectory[] } | { ok: false; problem: ForeignProblem };

export const isForeignFormat = (v: string): v is ForeignFormat => (FOREIGN_FORMATS as readonly string[]).includes(v);

/** Where an imported run's trajectories come from: a folder of one format, or scripts pushing through the ingest API. */
export type ImportOrigin = ForeignFormat | 'ingest';

/**
 * The format an imported run records until its job has walked the folder and found it from the layout: the web app
 * never walks a folder on a request (a deep or wide tree would hold the server), so a run started there without a
 * format names none until a worker reads it.
 */
export const FORMAT_FROM_LAYOUT = 'from-layout';
export type ImportFormat = ImportOrigin | typeof FORMAT_FROM_LAYOUT;
