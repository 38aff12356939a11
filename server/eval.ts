import type { Database } from './db/client.ts';
import { parseUserInput } from '../contracts/errors.ts';
import { enqueue } from './jobs/queue.ts';
import { createRun } from './store/runs.ts';
import { EvalSpecSchema, type EvalSpecInput } from '../contracts/eval.ts';

/** Start an evaluation: validate the spec (errors name the field), create its run and the job a worker picks up. */
export async function launchEval(db: Database, input: EvalSpecInput, name?: string) {
  const spec = parseUserInput(EvalSpecSchema, input, 'eval spec');
  const what = spec.engine.kind === 'embedded' ? spec.engine.checkpoint.split('/').filter(Boolean).pop() : spec.engine.model;
  const run = await createRun(db, { name: name ?? `eval ${what} on ${spec.datasets.join(', ')}`, kind: 'eval', recipeSpec: spec, seed: spec.seed });
  const jobId = await enqueue(db, { kind: 'eval', runId: run.id, payload: spec, maxAttempts: 3 });
  return { runId: run.id, jobId, spec };
}
