import type { Command } from './command.ts';
import { parseFlags } from './args.ts';
import { UserError, errorMessage, zodIssuesText } from '../contracts/errors.ts';
import { JOB_PAYLOADS } from '../contracts/jobs.ts';
import { config } from '../server/config.ts';
import { openDatabase } from '../server/db/client.ts';
import { getJob } from '../server/store/jobs.ts';

/**
 * `npx toolsmith ray-entry --job ID`: the entrypoint of a run's Ray job (workers/handlers/train-on-ray.ts submits
 * it). Runs the job's training here, on the cluster, with the Ray placement (workers/handlers/placement.ts), against
 * the same database: its events, metrics and checkpoints go to the run, its trainer ranks are Ray actors. The worker that submitted it holds
 * the job's lease and settles it; this process only works. Ray's stop (cancel, pause) sends SIGTERM: the run stops
 * at its next step as a local one does. Exit 0: done; 3: failed for good (a bad recipe, a NaN loss); 1: retry.
 */
export const rayEntryCommand: Command = {
  name: 'ray-entry',
  summary: "the run's orchestrator inside its Ray job (started by the worker that submitted it, not by hand)",
  usage: '--job JOB_ID',
  async run(args) {
    const f = parseFlags(args, { job: 'string' });
    if (!f.job) throw new UserError('ray-entry needs --job JOB_ID', { field: '--job' });
    if (!config().onRay) throw new UserError('ray-entry runs inside a Ray job that sets TOOLSMITH_ON_RAY=1');
    const db = await openDatabase(config().databaseUrl);
    const abort = new AbortController();
    process.once('SIGTERM', () => abort.abort('cancelled'));
    process.once('SIGINT', () => abort.abort('cancelled'));
    const { PermanentJobError } = await import('../workers/types.ts');
    const { RAY_PERMANENT_EXIT } = await import('../workers/handlers/train-on-ray.ts');
    try {
      const job = await getJob(db, f.job as string);
      if (!job || job.kind !== 'train' || !job.runId) throw new PermanentJobError(`no train job ${f.job}`);
      const parsed = JOB_PAYLOADS.train.safeParse(job.payload);
      if (!parsed.success) throw new PermanentJobError(`bad train job payload: ${zodIssuesText(parsed.error.issues)}`);
      const { jobContext } = await import('../workers/job-context.ts');
      const { runPlaced } = await import('../workers/handlers/train.ts');
      const { RAY_PLACEMENT } = await import('../workers/handlers/placement.ts');
      await runPlaced(jobContext(db, job, parsed.data, abort.signal, `ray-${process.pid}`), RAY_PLACEMENT);
      console.log(`run ${job.runId}: ${abort.signal.aborted ? 'stopped' : 'done'}`);
      return 0;
    } catch (e) {
      console.error(`ray-entry: ${errorMessage(e)}`);
      return e instanceof PermanentJobError ? RAY_PERMANENT_EXIT : 1;
    } finally {
      await db.close();
    }
  },
};
