/**
 * Starting an imported run from the CLI or the web app: the folder checked (after symlinks, against the import roots
 * unless the caller is the operator's shell), then the run and, unless the caller reads the folder itself, its job.
 * Whoever reads the folder walks it: its format detected from the layout or named, pickled training batches refused.
 */
import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';
import { FOREIGN_FORMATS, FORMAT_FROM_LAYOUT, type ForeignFormat, isForeignFormat } from '../../contracts/foreign.ts';
import { detectFormat, LAYOUTS } from '../../contracts/foreign-layouts.ts';
import type { Database } from '../db/client.ts';
import { createImportRun } from '../store/imports.ts';
import { enqueue } from '../store/jobs.ts';
import { listFiles, PICKLED, resolveImportFolder } from './folder.ts';

export interface ImportRequest {
  path: string;
  format?: string;
  name?: string;
  follow?: boolean;
  frameworkVersion?: string;
  /** TRL's reward_weights by reward function name. */
  weights?: Record<string, number>;
  createdBy?: string | null;
}

export interface PreparedImport {
  folder: string;
  format: ForeignFormat;
  files: string[];
}

/** The folder and the format named, checked without reading the folder (no walk: the web app's request path). */
export function checkImportRequest(
  req: Pick<ImportRequest, 'path' | 'format'>,
  roots: string[] | null,
): { folder: string; format: ForeignFormat | undefined } {
  if (typeof req.path !== 'string' || req.path.trim() === '')
    throw new UserError('path: name the folder the run writes its rollouts to', { field: 'path' });
  const folder = resolveImportFolder(req.path.trim(), roots);
  if (req.format !== undefined && !isForeignFormat(req.format))
    throw new UserError(`format "${req.format}" is not one of ${FOREIGN_FORMATS.join(', ')}`, { field: 'format' });
  return { folder, format: req.format };
}

/**
 * The folder's rollout files and its format (the one named, or the one its layout shows): a bounded walk
 * (server/imports/folder.ts listFiles), done by whoever reads the folder — the import job, or the operator's CLI.
 */
export function findImportFiles(folder: string, format: ForeignFormat | undefined, follow: boolean): PreparedImport {
  const { files } = listFiles(folder);
  const pickled = files.filter((f) => PICKLED.test(f));
  const refusePickles = () =>
    new UserError(
      `${folder} holds pickled training batches (${pickled.slice(0, 3).join(', ')}${pickled.length > 3 ? ', …' : ''}) and no rollout files Toolsmith reads: loading a pickle runs whatever code it names, so .pt/.pkl files (slime's and SkyRL's dumps) are never read — export the rollouts as JSONL or Parquet, or push them through the ingest API (docs/importing-runs.md "Open runs trained elsewhere")`,
      { field: 'path' },
    );
  if (format) {
    const own = files.filter((f) => LAYOUTS[format].test(f));
    // A followed run may not have written its first file yet.
    if (own.length === 0 && pickled.length > 0) throw refusePickles();
    if (own.length === 0 && !follow)
      throw new UserError(`no ${format} rollout files in ${folder} (expected names like ${LAYOUTS[format].source})`, {
        field: 'path',
      });
    return { folder, format, files: own };
  }
  const found = detectFormat(files);
  if (!found.ok) {
    if (pickled.length > 0) throw refusePickles();
    throw new UserError(`${folder}: ${found.reason}`, { field: 'format' });
  }
  return { folder, format: found.format, files: found.files };
}

/** Check the folder and find its format; every refusal names the field and says what to do. */
export function prepareImport(req: ImportRequest, roots: string[] | null): PreparedImport {
  const { folder, format } = checkImportRequest(req, roots);
  return findImportFiles(folder, format, Boolean(req.follow));
}

interface Launched {
  runId: string;
  jobId: string | null;
  folder: string;
}

/**
 * Create the imported run. Without `enqueue` the caller reads the folder itself, so it is walked here and its format
 * found; with `enqueue` the job a worker reads (or follows) it with walks it and finds the format (`format` is null
 * unless named), so a request never waits on a folder's tree.
 */
export async function launchImport(
  db: Database,
  req: ImportRequest,
  opts: { roots: string[] | null; enqueue: false },
): Promise<Launched & PreparedImport>;
export async function launchImport(
  db: Database,
  req: ImportRequest,
  opts: { roots: string[] | null; enqueue: true },
): Promise<Launched & { format: ForeignFormat | null }>;
export async function launchImport(
  db: Database,
  req: ImportRequest,
  opts: { roots: string[] | null; enqueue: boolean },
): Promise<Launched & { format: ForeignFormat | null; files?: string[] }> {
  const p = opts.enqueue ? checkImportRequest(req, opts.roots) : prepareImport(req, opts.roots);
  const name = req.name?.trim() || `${p.format ?? 'import'} ${path.basename(p.folder)}`;
  if (name.length > 200) throw new UserError('name: at most 200 characters', { field: 'name' });
  const run = await createImportRun(db, {
    name,
    format: p.format ?? FORMAT_FROM_LAYOUT,
    path: p.folder,
    frameworkVersion: req.frameworkVersion ?? null,
    follow: Boolean(req.follow),
    createdBy: req.createdBy ?? null,
    queued: opts.enqueue,
  });
  const jobId = opts.enqueue
    ? await enqueue(db, {
        kind: 'import',
        runId: run.id,
        payload: { follow: Boolean(req.follow), ...(req.weights ? { weights: req.weights } : {}) },
        maxAttempts: 3,
      })
    : null;
  return { runId: run.id, jobId, ...p, format: p.format ?? null };
}
