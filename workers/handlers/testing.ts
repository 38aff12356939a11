import type { JobPayload } from '../../contracts/jobs.ts';
import type { JobHandler } from '../types.ts';

/**
 * Test-only job kinds, registered when TOOLSMITH_TEST_JOBS=1. They exist to inject faults a real job cannot
 * produce on demand: a long job to kill a worker in the middle of, and a job that throws.
 */
export const testHandlers: {
  'test.count': JobHandler<JobPayload<'test.count'>>;
  'test.throw': JobHandler<JobPayload<'test.throw'>>;
} = {
  /** Counts to payload.steps, one event + metric per step, payload.stepMs apart. */
  'test.count': async (ctx) => {
    const { steps, stepMs } = ctx.payload;
    for (let i = 0; i < steps; i++) {
      if (ctx.signal.aborted) throw new Error(`stopped at step ${i}`);
      await ctx.log(`count ${i}`, { data: { i, attempt: ctx.job.attempts, worker: ctx.workerId } });
      await ctx.metrics(i, { count: i });
      await new Promise((r) => setTimeout(r, stepMs));
    }
    return { counted: steps, worker: ctx.workerId };
  },
  /** Throws payload.message (or an uncaught exception from a timer when payload.uncaught). */
  'test.throw': async (ctx) => {
    const { message, uncaught } = ctx.payload;
    if (uncaught) {
      setTimeout(() => {
        throw new Error(message);
      }, 10);
      await new Promise((r) => setTimeout(r, 60000));
    }
    throw new Error(message);
  },
};
