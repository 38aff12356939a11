import type { JobPayload } from '../../contracts/jobs.ts';
import { isForeignFormat } from '../../contracts/foreign.ts';
import { config } from '../../server/config.ts';
import { getImportSource } from '../../server/store/imports.ts';
import { followImport, importPass } from '../imports/importer.ts';
import { type JobHandler, PermanentJobError } from '../types.ts';

/**
 * "import" job: read a run trained elsewhere into its imported run: one pass, or (follow) a pass every
 * TOOLSMITH_IMPORT_POLL_MS until the run is cancelled. Offsets are stored per file, so a worker that takes the job
 * over after a restart goes on where the last one stopped.
 */
export const importRun: JobHandler<JobPayload<'import'>> = async (ctx) => {
  const runId = ctx.job.runId;
  if (!runId) throw new PermanentJobError('an import job needs a run');
  const source = await getImportSource(ctx.db, runId);
  if (!source) throw new PermanentJobError(`run ${runId} is not an imported run`);
  if (!isForeignFormat(source.format)) throw new PermanentJobError(`unknown format "${source.format}"`);
  const target = {
    db: ctx.db,
    runId,
    folder: source.path,
    format: source.format,
    signal: ctx.signal,
    ...(ctx.payload.weights ? { weights: ctx.payload.weights } : {}),
  };
  const follow = async () => {
    await ctx.log(
      `following ${source.format} rollouts in ${source.path} (new lines every ${config().importPollMs} ms)`,
    );
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
 * A follow ends only when its signal aborts, and a pass stops early then: the job must not read as done. Throwing
 * lets the worker settle it by the reason: released for the next worker on shutdown (it goes on from the stored
 * offsets), cancelled on cancel.
 */
function stoppedEarly(signal: AbortSignal) {
  if (signal.aborted) throw new Error(`import stopped (${String(signal.reason?.message ?? signal.reason)})`);
}
