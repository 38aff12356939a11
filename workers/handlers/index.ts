import type { JobHandler } from '../types.ts';
import { diagnostics } from './diagnostics.ts';
import { testHandlers } from './testing.ts';

/** Job kinds this worker can run. Later issues add "train", "eval", ... here. */
export function handlers(): Record<string, JobHandler> {
  return {
    diagnostics,
    ...(process.env.TOOLSMITH_TEST_JOBS === '1' ? testHandlers : {}),
  };
}
