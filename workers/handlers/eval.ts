import { createEngine } from '../engines/create.ts';
import { formatEvalTable, runEvaluation } from '../eval/run.ts';
import { verifierFromSettings } from './verifier.ts';
import { publishLiveRollouts } from './live.ts';
import { createSandbox } from '../sandbox/index.ts';
import { PermanentJobError, type JobHandler } from '../types.ts';
import type { JobPayload } from '../../contracts/jobs.ts';

/**
 * "eval" job: the payload is an EvalSpec. Streams progress and in-flight rollouts as run events, stores every
 * trajectory and one EvalResult per benchmark; a retried attempt resumes where the stored trajectories end.
 */
export const evaluation: JobHandler<JobPayload<'eval'>> = async (ctx) => {
  const spec = ctx.payload;
  if (!ctx.job.runId) throw new PermanentJobError('an eval job needs a run');
  const engine = await createEngine(spec.engine);
  const sandbox = await createSandbox();
  const verifier = verifierFromSettings(undefined, sandbox);
  const live = publishLiveRollouts(ctx);
  try {
    await ctx.log(
      `evaluating ${spec.engine.kind === 'embedded' ? spec.engine.checkpoint : spec.engine.urls.join(',')} on ${spec.datasets.join(', ')} (k=${spec.k}, T=${spec.temperature})`,
    );
    const rows = await runEvaluation(
      {
        db: ctx.db,
        engine,
        sandbox,
        verifier,
        runId: ctx.job.runId,
        signal: ctx.signal,
        log: (m) => ctx.log(m),
        metrics: (s, v) => ctx.metrics(s, v),
        onEvent: live.onEvent,
      },
      spec,
    );
    await live.stop();
    await ctx.log(`\n${formatEvalTable(rows)}`, { type: 'eval_table', data: rows });
    return { rows };
  } finally {
    await live.stop();
    await verifier.close();
    await sandbox.close();
    await engine.close();
  }
};
