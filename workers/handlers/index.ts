import type { JobHandler } from '../types.ts';
import { diagnostics } from './diagnostics.ts';
import { evaluation } from './eval.ts';
import { testHandlers } from './testing.ts';

/** Job kinds this worker can run. Later issues add "train" here. */
export function handlers(): Record<string, JobHandler> {
  return {
    diagnostics,
    eval: evaluation,
    ...(process.env.TOOLSMITH_TEST_JOBS === '1' ? testHandlers : {}),
  };
}
