import { createEngine } from '../engines/create.ts';
import { formatEvalTable, runEvaluation } from '../eval/run.ts';
import { EvalSpecSchema } from '../eval/spec.ts';
import { Verifier } from '../reward/verifier.ts';
import { LiveBoard } from '../rollout/live.ts';
import { createSandbox } from '../sandbox/index.ts';
import { PermanentJobError, type JobContext, type JobHandler } from '../types.ts';
import { zodIssuesText } from '../../server/errors.ts';

/** How often in-flight rollouts are published to the run's event stream (the live view). */
const LIVE_MS = 1000;

/**
 * "eval" job: the payload is an EvalSpec. Streams progress and in-flight rollouts as run events, stores every
 * trajectory and one EvalResult per benchmark; a retried attempt resumes where the stored trajectories end.
 */
export const evaluation: JobHandler = async (ctx: JobContext) => {
  const parsed = EvalSpecSchema.safeParse(ctx.job.payload);
  if (!parsed.success) throw new PermanentJobError(`bad eval spec: ${zodIssuesText(parsed.error.issues)}`);
  const spec = parsed.data;
  if (!ctx.job.runId) throw new PermanentJobError('an eval job needs a run');
  const engine = await createEngine(spec.engine);
  const sandbox = await createSandbox();
  const verifier = new Verifier({ sandbox });
  const board = new LiveBoard();
  const publish = async () => {
    const changed = board.drain();
    if (changed.length) await ctx.log(`${changed.length} rollout(s) updated`, { type: 'rollouts', level: 'debug', data: changed });
  };
  const timer = setInterval(() => void publish().catch(() => {}), LIVE_MS);
  try {
    await ctx.log(`evaluating ${spec.engine.kind === 'embedded' ? spec.engine.checkpoint : spec.engine.urls.join(',')} on ${spec.datasets.join(', ')} (k=${spec.k}, T=${spec.temperature})`);
    const rows = await runEvaluation({
      db: ctx.db, engine, sandbox, verifier, runId: ctx.job.runId, signal: ctx.signal,
      log: (m) => ctx.log(m), metrics: (s, v) => ctx.metrics(s, v), onEvent: board.onEvent,
    }, spec);
    await publish();
    await ctx.log(`\n${formatEvalTable(rows)}`, { type: 'eval_table', data: rows });
    return { rows };
  } finally {
    clearInterval(timer);
    await verifier.close();
    await sandbox.close();
    await engine.close();
  }
};
