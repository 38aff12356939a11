import { z } from 'zod';
import { problemIdSchema, traceRunIds } from './traces.ts';

/**
 * Share links as the owner asks for them and the holder sees them: a read-only capability naming exactly one run,
 * one step of a run, one trajectory, a comparison of 2–8 runs, or one problem's trajectories in 2–4 runs (the trace view). What a link may open, and its token, are the
 * server's (server/share/links.ts); the shapes here are what the server and the UI (the Share dialog, the /s/ pages)
 * agree on.
 */

export const SHARE_SCOPES = ['run', 'step', 'trajectory', 'compare', 'traces'] as const;
export type ShareScope = (typeof SHARE_SCOPES)[number];

const MAX_EXPIRY_SECONDS = 10 * 365 * 24 * 3600;

const id = z.string().min(1).max(100);
// Steps are 32-bit INTEGER columns on PostgreSQL.
const stepNumber = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);

export const runTarget = z.object({ runId: id });
export const stepTarget = z.object({ runId: id, step: stepNumber });
export const trajectoryTarget = z.object({ trajectoryId: id });
export const compareTarget = z.object({
  runIds: z
    .array(id)
    .min(2)
    .max(8)
    .refine((ids) => new Set(ids).size === ids.length, { message: 'run ids must be distinct' }),
});
/** Several runs in one trace view: one problem's trajectories in each run, and nothing else of the runs. */
export const tracesTarget = z.object({ runIds: traceRunIds, problemId: problemIdSchema });

const common = {
  label: z.string().trim().min(1).max(200).optional(),
  expiresInSeconds: z.number().int().min(1).max(MAX_EXPIRY_SECONDS).optional(),
  expiresAt: z.union([z.date(), z.iso.datetime({ offset: true }), z.number().int().positive()]).optional(),
};

/** Input of createShareLink (and of the tRPC `share.create` mutation): the scope picks the target's shape. */
export const createShareLinkInput = z
  .discriminatedUnion('scope', [
    z.object({ scope: z.literal('run'), target: runTarget, ...common }),
    z.object({ scope: z.literal('step'), target: stepTarget, ...common }),
    z.object({ scope: z.literal('trajectory'), target: trajectoryTarget, ...common }),
    z.object({ scope: z.literal('compare'), target: compareTarget, ...common }),
    z.object({ scope: z.literal('traces'), target: tracesTarget, ...common }),
  ])
  .refine((v) => v.expiresAt === undefined || v.expiresInSeconds === undefined, {
    message: 'give expiresAt or expiresInSeconds, not both',
    path: ['expiresAt'],
  });
export type CreateShareLinkInput = z.input<typeof createShareLinkInput>;

/** What the owner asks a link to name (share.create's scope and target; the server finds a trajectory's run). */
export type ShareTargetInput =
  | { scope: 'run'; target: { runId: string } }
  | { scope: 'step'; target: { runId: string; step: number } }
  | { scope: 'trajectory'; target: { trajectoryId: string } }
  | { scope: 'compare'; target: { runIds: string[] } }
  | { scope: 'traces'; target: { runIds: string[]; problemId: string } };

/** What a link names, as stored in ShareLink.target (trajectory links also record their run). */
export type ShareTarget =
  | { scope: 'run'; target: { runId: string } }
  | { scope: 'step'; target: { runId: string; step: number } }
  | { scope: 'trajectory'; target: { trajectoryId: string; runId: string } }
  | { scope: 'compare'; target: { runIds: string[] } }
  | { scope: 'traces'; target: { runIds: string[]; problemId: string } };

/** One link of the owner's list (`share.list`): never its token or the token's hash. */
export interface ShareLinkListItem {
  id: string;
  scope: ShareScope;
  target: ShareTarget['target'];
  label: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  state: 'active' | 'expired' | 'revoked';
}

// ---- the read-only view a link opens (share.view.*) -----------------------------------------------------------

/** What a run, step or trajectory link shows about the run it belongs to. */
export interface SharedRunHeader {
  id: string;
  name: string;
  kind: string;
  status: string;
  stage: number;
  stageName: string | null;
  step: number;
  totalSteps: number | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}
/** A run or compare link names the whole run: it also shows the recipe, the seed, the code version and the error. */
export interface SharedRunFull extends SharedRunHeader {
  seed: number;
  codeVersion: string;
  recipeSpec: unknown;
  error: string | null;
}
