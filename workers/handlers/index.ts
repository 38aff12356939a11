import type { JobHandlers } from '../types.ts';
import { config } from '../../server/config.ts';
import { datasetAdd, modelFetch } from './catalogue.ts';
import { diagnostics } from './diagnostics.ts';
import { evaluation } from './eval.ts';
import { importRun } from './import.ts';
import { train } from './train.ts';
import { testHandlers } from './testing.ts';

/** Job kinds this worker can run (the test-only ones when TOOLSMITH_TEST_JOBS=1).  */
export function handlers(): JobHandlers {
  return {
    diagnostics,
    eval: evaluation,
    import: importRun,
    'model.fetch': modelFetch,
    'dataset.add': datasetAdd,
    train,
    ...(config().testJobs ? testHandlers : {}),
  };
}
