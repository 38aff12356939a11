import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../db/client.ts';
import { parseUserInput, UserError } from '../../contracts/errors.ts';
import { listMetricKeys, readSeries, type SeriesPoint } from '../store/metrics.ts';
import { lastEventSeq, readEvents } from '../store/events.ts';
import { getImportSource } from '../store/imports.ts';
import { getRunPublicSummary, runExists } from '../store/runs.ts';
import { sharedRecipeSpec, sharedText, sharedValue } from './private-parts.ts';
import { getTrajectoryRun, getTrajectoryWithToolCalls, readStep, readTrajectoryTokens } from '../store/trajectories.ts';
import { tokenRecordToWire } from '../store/token-codec.ts';
import { anyTrajectoryOfProblem, listProblemAcrossRuns } from '../store/problem-across-runs.ts';
import type { RunProblemColumn } from '../../contracts/traces.ts';
import { readStepTimeline } from '../store/step-timeline.ts';
import {
  getShareLinkByTokenHash,
  getShareLinkRevocation,
  insertShareLink,
  listShareLinkRows,
  setShareLinkRevoked,
} from '../store/share-links.ts';
import type { RunEvent } from '../../contracts/events.ts';
import {
  createShareLinkInput,
  SHARE_SCOPES,
  type CreateShareLinkInput,
  type SharedRunFull,
  type SharedRunHeader,
  type ShareLinkListItem,
  type ShareScope,
  type ShareTarget,
} from '../../contracts/share.ts';

/**
 * Share links: a read-only capability naming exactly one run, one step of a run, one trajectory, a comparison
 * of 2–8 runs, or one problem's trajectories in 2–4 runs (the trace view). The token (32 random bytes, base64url) is shown once at creation; only its SHA-256 is stored, so
 * the table (or a backup of it) cannot be turned back into working links. A link that is unknown, revoked or
 * expired, and any request for something the link does not name, fail the same way (ShareLinkNotFound), so a
 * link reveals nothing about what else exists. The shapes (scopes, targets, the create input, the list and the views)
 * are contracts/share.ts's.
 */

/** 32 bytes = 256 random bits; base64url without padding is always 43 characters. */
export const TOKEN_BYTES = 32;
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/** A live link as a token opens it: what it names, its label and its expiry. */
export type ShareLinkInfo = ShareTarget & { id: string; label: string | null; createdAt: Date; expiresAt: Date | null };

/** A dead link, or a request outside what the link names. Deliberately says nothing more. */
export class ShareLinkNotFound extends Error {
  constructor() {
    super('share link not found');
    this.name = 'ShareLinkNotFound';
  }
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function sharePath(token: string): string {
  return `/s/${token}`;
}

/** Create a link. Returns the token (the only time it exists outside the holder's hands) and the page path. */
export async function createShareLink(db: Database, raw: CreateShareLinkInput, now = new Date()) {
  const input = parseUserInput(createShareLinkInput, raw);
  const stored = await checkTarget(db, input as ShareTarget);
  let expiresAt: Date | null = null;
  if (input.expiresInSeconds !== undefined) expiresAt = new Date(now.getTime() + input.expiresInSeconds * 1000);
  else if (input.expiresAt !== undefined) {
    expiresAt = input.expiresAt instanceof Date ? input.expiresAt : new Date(input.expiresAt);
    if (Number.isNaN(expiresAt.getTime())) throw new UserError('expiresAt: not a valid date', { field: 'expiresAt' });
    if (expiresAt.getTime() <= now.getTime())
      throw new UserError('expiresAt: must be in the future', { field: 'expiresAt' });
  }
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  const row = await insertShareLink(db, {
    tokenHash: hashToken(token),
    scope: input.scope,
    target: stored,
    label: input.label ?? null,
    createdAt: now,
    expiresAt,
  });
  return {
    id: row.id,
    token,
    path: sharePath(token),
    scope: input.scope as ShareScope,
    target: stored,
    label: row.label,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
  };
}

/** Check that what the link names exists; returns the target as stored. Errors name the field. */
async function checkTarget(db: Database, t: ShareTarget): Promise<ShareTarget['target']> {
  const mustExist = async (runId: string, field: string) => {
    if (!(await runExists(db, runId))) throw new UserError(`${field}: run ${runId} not found`, { field });
  };
  switch (t.scope) {
    case 'run':
      await mustExist(t.target.runId, 'target.runId');
      return { runId: t.target.runId };
    case 'step':
      await mustExist(t.target.runId, 'target.runId');
      return { runId: t.target.runId, step: t.target.step };
    case 'trajectory': {
      const tr = await getTrajectoryRun(db, t.target.trajectoryId);
      if (!tr)
        throw new UserError(`target.trajectoryId: trajectory ${t.target.trajectoryId} not found`, {
          field: 'target.trajectoryId',
        });
      return { trajectoryId: tr.id, runId: tr.runId };
    }
    case 'compare':
      for (const [i, runId] of t.target.runIds.entries()) await mustExist(runId, `target.runIds.${i}`);
      return { runIds: [...t.target.runIds] };
    case 'traces': {
      for (const [i, runId] of t.target.runIds.entries()) await mustExist(runId, `target.runIds.${i}`);
      if (!(await anyTrajectoryOfProblem(db, t.target.runIds, t.target.problemId)))
        throw new UserError(`target.problemId: none of these runs has a trajectory of problem ${t.target.problemId}`, {
          field: 'target.problemId',
        });
      return { runIds: [...t.target.runIds], problemId: t.target.problemId };
    }
  }
}

/** Revoke by link id (never by token). Idempotent: revoking a revoked link keeps its first revocation time. */
export async function revokeShareLink(db: Database, linkId: string, now = new Date()) {
  const row = await getShareLinkRevocation(db, linkId);
  if (!row)
    throw new UserError(`id: no share link has this id`, {
      field: 'id',
      fix: 'revoke takes the link id from the list, not its token',
    });
  if (row.revokedAt) return { id: row.id, revokedAt: row.revokedAt };
  const updated = await setShareLinkRevoked(db, linkId, now);
  return { id: updated.id, revokedAt: updated.revokedAt! };
}

/** The owner's list (newest first), optionally only links that name `runId`. Never includes tokens or hashes. */
export async function listShareLinks(
  db: Database,
  opts: { runId?: string; limit?: number } = {},
  now = new Date(),
): Promise<ShareLinkListItem[]> {
  // `targetContains` narrows the scan; the parsed target decides.
  const rows = await listShareLinkRows(db, { targetContains: opts.runId });
  const items: ShareLinkListItem[] = [];
  for (const r of rows) {
    const info = { scope: r.scope, target: JSON.parse(r.target) } as ShareTarget;
    if (opts.runId && !runsOf(info).includes(opts.runId)) continue;
    const state = r.revokedAt
      ? 'revoked'
      : r.expiresAt && r.expiresAt.getTime() <= now.getTime()
        ? 'expired'
        : 'active';
    items.push({
      id: r.id,
      scope: info.scope,
      target: info.target,
      label: r.label,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
      revokedAt: r.revokedAt,
      state,
    });
    if (opts.limit && items.length >= opts.limit) break;
  }
  return items;
}

/** The live link a token opens, or null when the token is malformed, unknown, revoked or expired. */
export async function resolveShareLink(db: Database, token: string, now = new Date()): Promise<ShareLinkInfo | null> {
  if (typeof token !== 'string' || !TOKEN_RE.test(token)) return null;
  const row = await getShareLinkByTokenHash(db, hashToken(token));
  if (!row || row.revokedAt) return null;
  if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) return null;
  if (!(SHARE_SCOPES as readonly string[]).includes(row.scope)) return null;
  return {
    id: row.id,
    scope: row.scope,
    target: JSON.parse(row.target),
    label: row.label,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
  } as ShareLinkInfo;
}

/** The live link, or ShareLinkNotFound. */
export async function assertReadOnlyToken(db: Database, token: string, now = new Date()): Promise<ShareLinkInfo> {
  const link = await resolveShareLink(db, token, now);
  if (!link) throw new ShareLinkNotFound();
  return link;
}

/** Runs whose data a link shows (a trajectory link shows only its trajectory, but its run summary names it). */
export function runsOf(link: ShareTarget): string[] {
  return link.scope === 'compare' || link.scope === 'traces' ? link.target.runIds : [link.target.runId];
}

// ---- the read-only view a link opens -------------------------------------------------------------------------

/**
 * The run as a link shows it. A step or trajectory link names a part of the run, not the run: it gets the
 * header only (no recipe, seed, code version or error text), so a link to one trajectory does not hand out the
 * recipe that produced it.
 */
async function runSummary(db: Database, runId: string, whole: boolean): Promise<SharedRunHeader | SharedRunFull> {
  const run = await getRunPublicSummary(db, runId);
  if (!run) throw new ShareLinkNotFound();
  const { seed, codeVersion, recipeSpec, error, ...header } = run;
  if (!whole) return header;
  const folder = await importedFolder(db, runId);
  return {
    ...header,
    seed,
    codeVersion,
    error: error === null ? null : sharedText(error, folder),
    recipeSpec: sharedRecipeSpec(JSON.parse(recipeSpec) as unknown, folder),
  };
}

/** An imported run's folder on the server, kept out of what its share links show (private-parts.ts). */
async function importedFolder(db: Database, runId: string): Promise<string | null> {
  return (await getImportSource(db, runId))?.path ?? null;
}

/** Whether a link names whole runs (run, compare) rather than a part of one (step, trajectory). */
export function namesWholeRun(link: ShareTarget): boolean {
  return link.scope === 'run' || link.scope === 'compare';
}

/** What the shared page draws first: the link's scope and label and the run(s) it names. */
export async function sharedView(db: Database, token: string, now = new Date()) {
  const link = await assertReadOnlyToken(db, token, now);
  const runs = [];
  for (const runId of runsOf(link)) runs.push(await runSummary(db, runId, namesWholeRun(link)));
  return {
    scope: link.scope,
    label: link.label,
    createdAt: link.createdAt,
    expiresAt: link.expiresAt,
    runs,
    step: link.scope === 'step' ? link.target.step : null,
    trajectoryId: link.scope === 'trajectory' ? link.target.trajectoryId : null,
    problemId: link.scope === 'traces' ? link.target.problemId : null,
  };
}

/**
 * Metric series of a run the link names. A run or compare link shows whole series; a step link only the points
 * of its step; a trajectory or trace-view link shows no metrics.
 */
export async function sharedMetrics(
  db: Database,
  token: string,
  q: { runId: string; keys?: string[] },
  now = new Date(),
) {
  const link = await assertReadOnlyToken(db, token, now);
  if (link.scope === 'trajectory' || link.scope === 'traces' || !runsOf(link).includes(q.runId))
    throw new ShareLinkNotFound();
  const [from, to] = link.scope === 'step' ? [link.target.step, link.target.step] : [undefined, undefined];
  const all = await listMetricKeys(db, q.runId);
  const keys = q.keys ? all.filter((k) => q.keys!.includes(k)) : all;
  const series: Record<string, SeriesPoint[]> = {};
  for (const key of keys) series[key] = await readSeries(db, q.runId, key, from, to);
  return { runId: q.runId, series };
}

/** Trajectory rows (without content) of one step the link covers, in group order; `cursor` is an offset. */
export async function sharedTrajectories(
  db: Database,
  token: string,
  q: { runId: string; step: number; limit?: number; cursor?: number },
  now = new Date(),
) {
  const link = await assertReadOnlyToken(db, token, now);
  const limit = Math.min(Math.max(q.limit ?? 50, 1), 500);
  const offset = Math.max(q.cursor ?? 0, 0);
  let only: string | undefined;
  switch (link.scope) {
    case 'run':
      if (q.runId !== link.target.runId) throw new ShareLinkNotFound();
      break;
    case 'step':
      if (q.runId !== link.target.runId || q.step !== link.target.step) throw new ShareLinkNotFound();
      break;
    case 'trajectory':
      if (q.runId !== link.target.runId) throw new ShareLinkNotFound();
      only = link.target.trajectoryId;
      break;
    default:
      throw new ShareLinkNotFound();
  }
  const rows = await readStep(db, q.runId, q.step, { trajectoryId: only, offset, limit: limit + 1 });
  // A trajectory link asked about another step of its run sees nothing there, the same as an unknown link.
  if (link.scope === 'trajectory' && rows.length === 0) throw new ShareLinkNotFound();
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? offset + limit : null };
}

/** One trajectory with its content and tool calls, if the link covers it. */
export async function sharedTrajectory(db: Database, token: string, trajectoryId: string, now = new Date()) {
  const link = await assertReadOnlyToken(db, token, now);
  if (link.scope === 'compare') throw new ShareLinkNotFound();
  if (link.scope === 'trajectory' && trajectoryId !== link.target.trajectoryId) throw new ShareLinkNotFound();
  const t = await getTrajectoryWithToolCalls(db, trajectoryId);
  if (!t || !inScope(link, t)) throw new ShareLinkNotFound();
  return t;
}

/**
 * Whether a link covers a trajectory: a run/step/trajectory link by its run, step or id, a trace-view link by its runs
 * and problem; compare links cover none.
 */
function inScope(
  link: ShareLinkInfo,
  t: { id: string; runId: string; step: number; problemId: string | null },
): boolean {
  if (link.scope === 'compare') return false;
  if (link.scope === 'traces') return link.target.runIds.includes(t.runId) && t.problemId === link.target.problemId;
  if (link.scope === 'trajectory' && t.id !== link.target.trajectoryId) return false;
  if (t.runId !== link.target.runId) return false;
  return link.scope !== 'step' || t.step === link.target.step;
}

/** A shared trajectory's token record (the token view), under exactly sharedTrajectory's rules. */
export async function sharedTrajectoryTokens(db: Database, token: string, trajectoryId: string, now = new Date()) {
  const link = await assertReadOnlyToken(db, token, now);
  const t = await getTrajectoryRun(db, trajectoryId);
  if (!t || !inScope(link, t)) throw new ShareLinkNotFound();
  const r = await readTrajectoryTokens(db, trajectoryId);
  return { record: r ? tokenRecordToWire(r) : null };
}

/** A step's timeline (its trajectories' times and its phases) for a run link, any step, or a step link, its step. */
export async function sharedTimeline(
  db: Database,
  token: string,
  q: { runId: string; step: number },
  now = new Date(),
) {
  const link = await assertReadOnlyToken(db, token, now);
  if (link.scope !== 'run' && link.scope !== 'step') throw new ShareLinkNotFound();
  if (q.runId !== link.target.runId || (link.scope === 'step' && q.step !== link.target.step))
    throw new ShareLinkNotFound();
  if (!(await runExists(db, q.runId))) throw new ShareLinkNotFound();
  return readStepTimeline(db, q.runId, q.step);
}

/** A trace-view link's columns: its problem's trajectories (no content) in each of its runs, in the link's order. */
export async function sharedProblemTrajectories(db: Database, token: string, now = new Date()) {
  const link = await assertReadOnlyToken(db, token, now);
  if (link.scope !== 'traces') throw new ShareLinkNotFound();
  const columns = await listProblemAcrossRuns(db, link.target);
  // A link outliving one of its runs opens nothing, the same as a dead link (as a compare link's summary does).
  if (columns.some((c) => c === null)) throw new ShareLinkNotFound();
  return columns as RunProblemColumn[];
}

/** A run link's event log (from `afterSeq`, exclusive). Other scopes name no log. */
export async function sharedEvents(
  db: Database,
  token: string,
  q: { afterSeq?: number; limit?: number } = {},
  now = new Date(),
): Promise<{ events: RunEvent[] }> {
  const link = await assertReadOnlyToken(db, token, now);
  if (link.scope !== 'run') throw new ShareLinkNotFound();
  // A link outliving its run (deleted) opens nothing, the same as a dead link.
  if (!(await runExists(db, link.target.runId))) throw new ShareLinkNotFound();
  const limit = Math.min(Math.max(q.limit ?? 500, 1), 1000);
  let after = q.afterSeq;
  if (after === undefined) {
    // The tail: the last `limit` events.
    after = Math.max(0, (await lastEventSeq(db, link.target.runId)) - limit);
  }
  const folder = await importedFolder(db, link.target.runId);
  const events = await readEvents(db, link.target.runId, after, limit);
  return { events: events.map((e) => sharedValue(e, folder)) };
}
