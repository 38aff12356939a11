/**
 * The ingest API (docs/importing-runs.md "Ingest API"): what a script that trains elsewhere
 * sends. `POST /api/ingest/runs` opens a run; `POST /api/ingest/runs/{id}/batch` adds trajectories to it, each either
 * an ATIF v1.x document or Toolsmith's own shape (contracts/foreign.ts ForeignTrajectory), idempotent by id.
 */
import { z } from 'zod';

/** Trajectories one batch may carry (the body limit, TOOLSMITH_MAX_BODY_BYTES, applies too). */
export const INGEST_MAX_BATCH = 1000;

export const IngestRunSchema = z.object({
  name: z.string().trim().min(1).max(200),
  /** Which framework trains it, shown with the run (free text: "prime-rl", "my loop"). */
  framework: z.string().trim().max(100).optional(),
  frameworkVersion: z.string().trim().max(100).optional(),
});

const finite = z.number().finite();
const MessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string().max(1_000_000),
  toolCalls: z
    .array(z.object({ id: z.string().max(200).optional(), name: z.string().max(200), arguments: z.string() }))
    .max(100)
    .optional(),
  toolCallId: z.string().max(200).optional(),
  trainable: z.boolean().optional(),
  time: finite.optional(),
});
/** Float arrays carry null where there is no value (JSON has no NaN). */
const floats = z.array(finite.nullable()).max(1_000_000);

/** Toolsmith's own shape of a trajectory (contracts/foreign.ts ForeignTrajectory, without `source`). */
export const IngestTrajectorySchema = z
  .object({
    id: z.string().min(1).max(200),
    step: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1),
    split: z.enum(['train', 'eval']).default('train'),
    groupId: z.string().min(1).max(200),
    messages: z.array(MessageSchema).min(1).max(10_000),
    promptMessages: z.number().int().min(0),
    reward: finite.optional(),
    rewards: z.record(z.string().max(200), finite).optional(),
    advantage: finite.optional(),
    answer: z.string().max(100_000).optional(),
    tokens: z
      .object({
        promptIds: z.array(z.number().int()).max(1_000_000).optional(),
        ids: z.array(z.number().int()).max(1_000_000),
        mask: z.array(z.number().int().min(0).max(1)).optional(),
        rolloutLogprobs: floats.optional(),
        trainerLogprobs: floats.optional(),
        entropies: floats.optional(),
        advantages: floats.optional(),
      })
      .optional(),
    policy: z.object({ start: finite.optional(), end: finite.optional() }).optional(),
    metadata: z.record(z.string(), z.unknown()).default({}),
  })
  .refine((t) => t.promptMessages <= t.messages.length, {
    message: 'promptMessages is more than the messages there are',
    path: ['promptMessages'],
  });

export const IngestBatchSchema = z.object({
  /** Each an ATIF document (it has `schema_version`) or Toolsmith's own shape. */
  trajectories: z.array(z.unknown()).max(INGEST_MAX_BATCH),
  /** The run has finished: it is marked succeeded after this batch. */
  done: z.boolean().default(false),
});

/** What a batch did: stored, already there (same id), and each item refused with its index and reason. */
export interface IngestBatchResult {
  stored: number;
  duplicates: number;
  problems: { index: number; reason: string }[];
}

/**
 * The body of the ingest API's 429 (it comes with a Retry-After header, in seconds): the limit that was reached, per
 * API token (TOOLSMITH_INGEST_RATE_PER_S calls a second, TOOLSMITH_INGEST_RATE_BURST at once).
 */
export interface IngestRateLimited {
  error: {
    message: string;
    limit: { name: 'ingest-rate'; perSecond: number; burst: number; retryAfterS: number };
  };
}
