/**
 * The ingest API: a script that trains elsewhere opens an imported run and pushes its trajectories in
 * batches, each an ATIF document or Toolsmith's own shape (contracts/ingest.ts). A batch is idempotent by trajectory
 * id; an item that does not read is refused with its index and reason and the rest stored. The route handlers
 * (app/api/ingest/) check the caller (an API token or a session, researcher or above) and the request limits.
 */
import { parseUserInput } from '../../contracts/errors.ts';
import type { Principal } from '../../contracts/access.ts';
import type { ForeignTrajectory } from '../../contracts/foreign.ts';
import {
  IngestBatchSchema,
  type IngestBatchResult,
  IngestRunSchema,
  IngestTrajectorySchema,
} from '../../contracts/ingest.ts';
import type { Database } from '../db/client.ts';
import { createImportRun, getImportSource } from '../store/imports.ts';
import { getRunCreator, getRunStatus, setRunStatus } from '../store/runs.ts';
import { numberProblem } from './check-numbers.ts';
import { mapAtifDocument } from './formats/atif.ts';
import { refreshSteps, storeForeign } from './store-foreign.ts';

export class IngestDenied extends Error {
  constructor(
    readonly status: 403 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

export async function openIngestRun(db: Database, p: Principal, body: unknown) {
  const req = parseUserInput(IngestRunSchema, body, 'run');
  const run = await createImportRun(db, {
    name: req.name,
    format: 'ingest',
    path: `ingest API${req.framework ? ` (${req.framework})` : ''}`,
    frameworkVersion: req.frameworkVersion ?? null,
    follow: true,
    createdBy: p.userId,
  });
  return { runId: run.id };
}

/** One item as a foreign trajectory, or why not (its numbers checked as a folder's are). */
export function ingestItem(item: unknown, index: number): ForeignTrajectory | { reason: string } {
  const t = mappedItem(item, index);
  const reason = 'reason' in t ? undefined : numberProblem(t);
  return reason ? { reason } : t;
}

/** NaN travels as null in the float arrays. */
function mappedItem(item: unknown, index: number): ForeignTrajectory | { reason: string } {
  const where = { file: 'ingest', line: index };
  if (item && typeof item === 'object' && 'schema_version' in item) {
    const m = mapAtifDocument(item, where);
    if (!m.ok) return { reason: m.problem.reason };
    return { ...m.trajectories[0]!, source: where };
  }
  const r = IngestTrajectorySchema.safeParse(item);
  if (!r.success)
    return {
      reason: r.error.issues.map((i) => `${i.path.join('.') || 'the trajectory'}: ${i.message}`).join('; '),
    };
  const { tokens: k, ...t } = r.data;
  const nan = (a?: (number | null)[]) => a?.map((x) => (x === null ? Number.NaN : x));
  const tokens: ForeignTrajectory['tokens'] = k && {
    ...(k.promptIds ? { promptIds: k.promptIds } : {}),
    ids: k.ids,
    ...(k.mask ? { mask: k.mask } : {}),
    ...(k.rolloutLogprobs ? { rolloutLogprobs: nan(k.rolloutLogprobs) } : {}),
    ...(k.trainerLogprobs ? { trainerLogprobs: nan(k.trainerLogprobs) } : {}),
    ...(k.entropies ? { entropies: nan(k.entropies) } : {}),
    ...(k.advantages ? { advantages: nan(k.advantages) } : {}),
  };
  return dropUndefined({ ...t, source: where, ...(tokens ? { tokens } : {}) });
}

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export async function ingestBatch(
  db: Database,
  p: Principal,
  runId: string,
  body: unknown,
): Promise<IngestBatchResult> {
  const creator = await getRunCreator(db, runId);
  const source = creator === undefined ? null : await getImportSource(db, runId);
  if (!source || source.format !== 'ingest') throw new IngestDenied(404, `no ingest run ${runId}`);
  if (p.role !== 'admin' && creator !== p.userId)
    throw new IngestDenied(403, `run ${runId} was opened by someone else: only they or an admin may add to it`);
  const status = await getRunStatus(db, runId);
  if (status !== 'running') throw new IngestDenied(409, `run ${runId} is ${status}: it takes no more trajectories`);
  const batch = parseUserInput(IngestBatchSchema, body, 'batch');
  const mapped: ForeignTrajectory[] = [];
  const problems: IngestBatchResult['problems'] = [];
  batch.trajectories.forEach((item, index) => {
    const t = ingestItem(item, index);
    if ('reason' in t) problems.push({ index, reason: t.reason });
    else mapped.push(t);
  });
  const stored = await storeForeign(db, runId, 'ingest', mapped);
  await refreshSteps(db, runId, stored.steps);
  if (batch.done)
    await setRunStatus(db, runId, 'succeeded', { message: 'the script that pushed this run said it is done' });
  return { stored: stored.stored, duplicates: stored.duplicates, problems };
}
