/**
 * Seeds the e2e server's database (TOOLSMITH_DATA_DIR) for share-scope.spec.ts: a failed run with an error text
 * and a seed, one trajectory at step 1, and a run, a step and a trajectory share link to it. Prints the ids, the
 * tokens and the secrets the step and trajectory pages must not show, as JSON.
 * Run by the spec: `node --import tsx e2e/seed-share-scope.ts`.
 */
import { openDatabase } from '../server/db/client.ts';
import { createRun, setRunStatus } from '../server/store/runs.ts';
import { insertTrajectories } from '../server/store/trajectories.ts';
import { createShareLink } from '../server/share/links.ts';

const db = await openDatabase();
try {
  const error = 'e2e-share-scope: secret error text';
  const run = await createRun(db, {
    name: 'e2e-share-scope',
    kind: 'train',
    seed: 987654,
    recipeSpec: { note: 'e2e-share-scope recipe' },
  });
  await setRunStatus(db, run.id, 'failed', { error });
  const trajectoryId = `tr_scope_${run.id.slice(4)}`;
  await insertTrajectories(db, [
    {
      id: trajectoryId,
      runId: run.id,
      step: 1,
      stage: 0,
      groupId: 'g000',
      sampleIndex: 0,
      reward: 1,
      correct: true,
      finishReason: 'stop',
      answer: '42',
      content: { turns: [{ role: 'assistant', text: 'The answer is 42.' }] },
      toolCalls: [],
    },
  ]);
  const runLink = await createShareLink(db, { scope: 'run', target: { runId: run.id } });
  const stepLink = await createShareLink(db, { scope: 'step', target: { runId: run.id, step: 1 } });
  const trajectoryLink = await createShareLink(db, { scope: 'trajectory', target: { trajectoryId } });
  console.log(
    JSON.stringify({
      runId: run.id,
      trajectoryId,
      run: runLink.token,
      step: stepLink.token,
      trajectory: trajectoryLink.token,
      error,
      seed: 987654,
    }),
  );
} finally {
  await db.close();
}
