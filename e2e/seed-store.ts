/**
 * What the e2e seeds (e2e/seed-*.ts) share: a trajectory's tool call written the way the rollout loop writes it, and
 * trajectories stored under a new run the way it stores them (workers/rollout/to-store.ts).
 */
import type { Trajectory } from '../contracts/trajectory.ts';
import type { Database } from '../server/db/client.ts';
import { openDatabase } from '../server/db/client.ts';
import { createRun } from '../server/store/runs.ts';
import { insertTrajectories } from '../server/store/trajectories.ts';
import { EMBEDDED_TEMPLATE_SETTINGS as S, toolResponseTurn } from '../workers/rollout/template.ts';
import { toTrajectoryInput } from '../workers/rollout/to-store.ts';
import { appendToolResult } from '../workers/rollout/trajectory.ts';

/** An answer the verifier found nothing in. */
export const NO_ANSWER = {
  reward: 0,
  correct: false,
  verdict: { correct: false, method: 'none' as const, extracted: null, reason: 'no answer' },
};

/** A trajectory's place in its run: step 1 of the first stage, problem p1, group g000. */
export const trainPlace = (runId: string, sampleIndex = 0) => ({
  runId,
  step: 1,
  stage: 0,
  split: 'train',
  problemId: 'p1',
  groupId: 'g000',
  sampleIndex,
});

/** `t` with a python call that ran `code` and printed `stdout` (shown as `text`), between `at` and `at + 1` ms. */
export function withPythonCall(
  t: Trajectory,
  c: { code: string; text: string; stdout: string; at: number; tokens?: (appended: string) => number },
): Trajectory {
  const appended = toolResponseTurn(c.text, S);
  return appendToolResult(t, {
    name: 'python',
    arguments: { code: c.code, input: '' },
    status: 'ok',
    text: c.text,
    appendedText: appended,
    tokens: c.tokens ? c.tokens(appended) : appended.length,
    appended: true,
    queuedAt: c.at,
    startedAt: c.at,
    finishedAt: c.at + 1,
    durationMs: 1,
    queueMs: 0,
    stdout: c.stdout,
    stderr: '',
    exitCode: 0,
    errorType: null,
  });
}

/** Open the e2e database, run `fn` on it, close it. */
export async function withDatabase<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase();
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** A new run named `runName` holding `t` alone (no answer in it), stored as `<idPrefix>_<run id>`; prints {id}. */
export async function seedOneTrajectory(runName: string, idPrefix: string, t: Trajectory): Promise<void> {
  await withDatabase(async (db) => {
    const run = await createRun(db, { name: runName, kind: 'train', seed: 0 });
    const id = `${idPrefix}_${run.id.slice(4)}`;
    await insertTrajectories(db, [{ ...toTrajectoryInput(t, NO_ANSWER, trainPlace(run.id)), id }]);
    console.log(JSON.stringify({ id }));
  });
}
