import type { JobPayload } from '../../contracts/jobs.ts';
import { UserError } from '../../contracts/errors.ts';
import { FORMAT_FROM_LAYOUT, type ForeignFormat, isForeignFormat } from '../../contracts/foreign.ts';
import { config } from '../../server/config.ts';
import { findImportFiles } from '../../server/imports/launch.ts';
import { getImportSource, setImportFormat } from '../../server/store/imports.ts';
import { followImport, importPass } from '../imports/importer.ts';
import { type JobContext, type JobHandler, PermanentJobError } from '../types.ts';

/**
 * "import" job: read a run trained elsewhere into its imported run: one pass, or (follow) a pass every
 * TOOLSMITH_IMPORT_POLL_MS until the run is cancelled. Offsets are stored per file, so a worker that takes the job
 * over after a restart goes on where the last one stopped. The folder is walked here, never on the web app's request:
 * a run started without a format gets the one its layout shows, and a folder that holds none fails the run with why.
 */
export const importRun: JobHandler<JobPayload<'import'>> = async (ctx) => {
  const runId = ctx.job.runId;
  if (!runId) throw new PermanentJobError('an import job needs a run');
  const source = await getImportSource(ctx.db, runId);
  if (!source) throw new PermanentJobError(`run ${runId} is not an imported run`);
  const format = await formatOf(ctx, runId, source);
  const target = {
    db: ctx.db,
    runId,
    folder: source.path,
    format,
    signal: ctx.signal,
    ...(ctx.payload.weights ? { weights: ctx.payload.weights } : {}),
  };
  const follow = async () => {
    await ctx.log(`following ${format} rollouts in ${source.path} (new lines every ${config().importPollMs} ms)`);
    await followImport({ ...target, pollMs: config().importPollMs });
    stoppedEarly(ctx.signal);
    return { followed: true };
  };
  if (ctx.payload.follow) return follow();
  const r = await importPass(target);
  stoppedEarly(ctx.signal);
  // Follow switched on while this pass ran: the switch queued no second job (one at a time), so this one follows.
  if ((await getImportSource(ctx.db, runId))?.follow) return follow();
  await ctx.log(
    `imported ${r.trajectories} trajectories from ${r.lines} records${r.problemCount ? `; ${r.problemCount} malformed, skipped (see the warnings above)` : ''}`,
  );
  return { lines: r.lines, trajectories: r.trajectories, problems: r.problemCount };
};

/**
 * The run's format, checked against the folder: found from the layout when the run was started without one (and
 * stored, so the run page names it), and a folder without its files refused for good (a retry would find the same).
 */
async function formatOf(
  ctx: JobContext<JobPayload<'import'>>,
  runId: string,
  source: { path: string; format: string },
): Promise<ForeignFormat> {
  const named = source.format === FORMAT_FROM_LAYOUT ? undefined : source.format;
  if (named !== undefined && !isForeignFormat(named)) throw new PermanentJobError(`unknown format "${named}"`);
  let found: ForeignFormat;
  try {
    found = findImportFiles(source.path, named, ctx.payload.follow).format;
  } catch (e) {
    if (e instanceof UserError) throw new PermanentJobError(e.message);
    throw e;
  }
  if (named === undefined) {
    await setImportFormat(ctx.db, runId, found);
    await ctx.log(`${found} rollouts, from the folder's layout`);
  }
  return found;
}

/**
 * A follow ends only when its signal aborts, and a pass stops early then: the job must not read as done. Throwing
 * lets the worker settle it by the reason: released for the next worker on shutdown (it goes on from the stored
 * offsets), cancelled on cancel.
 */
function stoppedEarly(signal: AbortSignal) {
  if (signal.aborted) throw new Error(`import stopped (${String(signal.reason?.message ?? signal.reason)})`);
}
