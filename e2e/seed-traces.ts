/**
 * Seeds the e2e server's database (TOOLSMITH_DATA_DIR) for traces-side-by-side.spec.ts: two runs that both sampled
 * problem `e2e:7` — the base run twice at step 1 (sample 0 wrong after a tool call, sample 1 right), the tuned run
 * once at step 2 (right; its first turn word for word the base's) — and a trace-view share link to them. Prints the
 * ids and the link's token as JSON. Run by the spec: `node --import tsx e2e/seed-traces.ts`.
 */
import { openDatabase } from '../server/db/client.ts';
import { createRun, setRunStatus } from '../server/store/runs.ts';
import { insertTrajectories, type TrajectoryInput } from '../server/store/trajectories.ts';
import { createShareLink } from '../server/share/links.ts';
import type { StoredTrajectoryContent, StoredTurn } from '../contracts/trajectory.ts';

const T0 = Date.UTC(2026, 11, 7, 12);
const PROMPT = 'What is 17 * 23? Use Python if it helps.';

function turn(index: number, text: string, code: string | null, stdout = ''): StoredTurn {
  const at = T0 + index * 2000;
  return {
    index,
    text,
    tokens: text.length,
    engineFinish: 'stop',
    parse:
      code === null ? { kind: 'none' } : { kind: 'call', name: 'python', arguments: { code, input: '' }, raw: text },
    tool:
      code === null
        ? null
        : {
            name: 'python',
            arguments: { code, input: '' },
            status: 'ok',
            text: stdout,
            appended: true,
            appendedText: `<output>${stdout}</output>`,
            tokens: 4,
            queuedAt: at + 1000,
            startedAt: at + 1010,
            finishedAt: at + 1100,
            durationMs: 90,
            queueMs: 10,
            stdout,
            stderr: '',
            exitCode: 0,
            errorType: null,
          },
    genStartedAt: at,
    genFinishedAt: at + 1000,
  };
}

function trajectory(
  id: string,
  runId: string,
  step: number,
  sampleIndex: number,
  turns: StoredTurn[],
  answer: string,
): TrajectoryInput {
  const correct = answer === '391';
  const content: StoredTrajectoryContent = {
    prompt: PROMPT,
    turns,
    finishReason: 'no_tool_call',
    finishedAt: T0 + turns.length * 2000,
    error: null,
    modelTokens: 50,
    verdict: { correct, method: 'exact', extracted: answer, reason: correct ? 'matches 391' : 'expected 391' },
  };
  return {
    id,
    runId,
    step,
    stage: 0,
    problemId: 'e2e:7',
    groupId: `g${step}`,
    sampleIndex,
    reward: correct ? 1 : 0,
    correct,
    turns: turns.length,
    finishReason: 'no_tool_call',
    answer,
    content,
    toolCalls: [],
  };
}

const db = await openDatabase();
try {
  const base = await createRun(db, { name: 'e2e-traces base', kind: 'train', recipeSpec: { note: 'base' } });
  const tuned = await createRun(db, { name: 'e2e-traces tuned', kind: 'train', recipeSpec: { note: 'tuned' } });
  const first = 'Let me compute it.';
  const ids = {
    base0: `tr_tr_b0_${base.id.slice(4)}`,
    base1: `tr_tr_b1_${base.id.slice(4)}`,
    tuned0: `tr_tr_t0_${tuned.id.slice(4)}`,
  };
  await insertTrajectories(db, [
    trajectory(
      ids.base0,
      base.id,
      1,
      0,
      [turn(0, first, 'print(17 * 32)', '544\n'), turn(1, 'So it is 544.', null)],
      '544',
    ),
    trajectory(ids.base1, base.id, 1, 1, [turn(0, 'Seventeen times twenty-three is 391.', null)], '391'),
    trajectory(
      ids.tuned0,
      tuned.id,
      2,
      0,
      [turn(0, first, 'print(17 * 23)', '391\n'), turn(1, 'The product is 391.', null)],
      '391',
    ),
  ]);
  for (const r of [base, tuned]) await setRunStatus(db, r.id, 'succeeded');
  const link = await createShareLink(db, {
    scope: 'traces',
    target: { runIds: [base.id, tuned.id], problemId: 'e2e:7' },
  });
  console.log(JSON.stringify({ base: base.id, tuned: tuned.id, ...ids, token: link.token }));
} finally {
  await db.close();
}
