/**
 * Seeds the e2e server's database for security.spec.ts: a trajectory whose tool output (model-written, so hostile)
 * carries an OSC 8 hyperlink, a window-title OSC, cursor movement and an erase, between coloured text. Prints the
 * trajectory id as JSON. Run by the spec: `node --import tsx e2e/seed-terminal-escapes.ts`.
 */
import { openDatabase } from '../server/db/client.ts';
import { createRun } from '../server/store/runs.ts';
import { insertTrajectories } from '../server/store/trajectories.ts';
import type { Trajectory } from '../contracts/trajectory.ts';
import { EMBEDDED_TEMPLATE_SETTINGS as S, toolResponseTurn } from '../workers/rollout/template.ts';
import { toTrajectoryInput } from '../workers/rollout/to-store.ts';
import {
  appendAssistantTurn,
  appendToolResult,
  finishTrajectory,
  newTrajectory,
} from '../workers/rollout/trajectory.ts';

export const HOSTILE =
  'before \u001b]8;;https://evil.example/phish\u0007click me\u001b]8;;\u0007 \u001b[31mred\u001b[0m\u001b]0;forged title\u0007\n\u001b[2A\u001b[2Kforged line\n';
const call = `Run it.</reason>\n<tool_call>\n${JSON.stringify({ name: 'python', arguments: { code: 'print("x")', input: '' } })}\n</tool_call>`;
let t: Trajectory = newTrajectory('What is x?', 10);
t = appendAssistantTurn(
  t,
  { text: call, tokens: call.length, engineFinish: 'stop', genStartedAt: 1, genFinishedAt: 2 },
  S,
);
const appended = toolResponseTurn('x', S);
t = appendToolResult(t, {
  name: 'python',
  arguments: { code: 'print("x")', input: '' },
  status: 'ok',
  text: 'x',
  appendedText: appended,
  tokens: appended.length,
  appended: true,
  queuedAt: 2,
  startedAt: 2,
  finishedAt: 3,
  durationMs: 1,
  queueMs: 0,
  stdout: HOSTILE,
  stderr: '',
  exitCode: 0,
  errorType: null,
});
t = finishTrajectory(t, 'max_turns', 4);

const db = await openDatabase();
try {
  const run = await createRun(db, { name: 'e2e-terminal-escapes', kind: 'train', seed: 0 });
  const id = `tr_esc_${run.id.slice(4)}`;
  const scored = {
    reward: 0,
    correct: false,
    verdict: { correct: false, method: 'none' as const, extracted: null, reason: 'no answer' },
  };
  await insertTrajectories(db, [
    {
      ...toTrajectoryInput(t, scored, {
        runId: run.id,
        step: 1,
        stage: 0,
        split: 'train',
        problemId: 'p1',
        groupId: 'g000',
        sampleIndex: 0,
      }),
      id,
    },
  ]);
  console.log(JSON.stringify({ id }));
} finally {
  await db.close();
}
