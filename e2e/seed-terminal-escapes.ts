/**
 * Seeds the e2e server's database for security.spec.ts: a trajectory whose tool output (model-written, so hostile)
 * carries an OSC 8 hyperlink, a window-title OSC, cursor movement and an erase, between coloured text. Prints the
 * trajectory id as JSON. Run by the spec: `node --import tsx e2e/seed-terminal-escapes.ts`.
 */
import type { Trajectory } from '../contracts/trajectory.ts';
import { EMBEDDED_TEMPLATE_SETTINGS as S } from '../workers/rollout/template.ts';
import { appendAssistantTurn, finishTrajectory, newTrajectory } from '../workers/rollout/trajectory.ts';
import { seedOneTrajectory, withPythonCall } from './seed-store.ts';

export const HOSTILE =
  'before \u001b]8;;https://evil.example/phish\u0007click me\u001b]8;;\u0007 \u001b[31mred\u001b[0m\u001b]0;forged title\u0007\n\u001b[2A\u001b[2Kforged line\n';
const call = `Run it.</reason>\n<tool_call>\n${JSON.stringify({ name: 'python', arguments: { code: 'print("x")', input: '' } })}\n</tool_call>`;
let t: Trajectory = newTrajectory('What is x?', 10);
t = appendAssistantTurn(
  t,
  { text: call, tokens: call.length, engineFinish: 'stop', genStartedAt: 1, genFinishedAt: 2 },
  S,
);
t = withPythonCall(t, { code: 'print("x")', text: 'x', stdout: HOSTILE, at: 2 });
t = finishTrajectory(t, 'max_turns', 4);

await seedOneTrajectory('e2e-terminal-escapes', 'tr_esc', t);
