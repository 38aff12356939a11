/**
 * Seeds the e2e server's database for trace-sessions.spec.ts: a trajectory whose three tool calls ran in one real
 * sandbox session (tool.session "trajectory"): the first defines a variable, the second prints it, the third runs
 * past its timeout and so ends the session. The calls' results are the real pool's; the model's turns around them
 * are written here. Prints the trajectory id as JSON. Run by the spec: `node --import tsx e2e/seed-sessions.ts`.
 */
import type { Trajectory } from '../contracts/trajectory.ts';
import { formatToolResult } from '../workers/sandbox/format.ts';
import { SandboxPool } from '../workers/sandbox/pool.ts';
import { seedOneTrajectory } from './seed-store.ts';
import { EMBEDDED_TEMPLATE_SETTINGS as S, toolResponseTurn } from '../workers/rollout/template.ts';
import {
  appendAssistantTurn,
  appendToolResult,
  finishTrajectory,
  newTrajectory,
} from '../workers/rollout/trajectory.ts';

const CALLS = [
  { code: 'x = 6 * 7', timeoutS: 4 },
  { code: 'print(x)', timeoutS: 4 },
  { code: 'import time\ntime.sleep(30)', timeoutS: 0.5 },
];

const pool = await SandboxPool.start({ size: 1, light: false, log: () => {} });
let t: Trajectory = newTrajectory('What is 6 times 7?', 10);
try {
  const session = pool.openSession();
  for (const [i, c] of CALLS.entries()) {
    const text = `Step ${i + 1}.</reason>\n<tool_call>\n${JSON.stringify({ name: 'python', arguments: { code: c.code, input: '' } })}\n</tool_call>`;
    const at = Date.now();
    t = appendAssistantTurn(
      t,
      { text, tokens: text.length, engineFinish: 'stop', genStartedAt: at, genFinishedAt: at },
      S,
    );
    const r = await session.run({ code: c.code, timeoutS: c.timeoutS });
    const shown = formatToolResult(r, undefined, c.timeoutS);
    const appended = toolResponseTurn(shown, S);
    t = appendToolResult(t, {
      name: 'python',
      arguments: { code: c.code, input: '' },
      status: r.status,
      text: shown,
      appendedText: appended,
      tokens: appended.length,
      appended: true,
      queuedAt: at,
      startedAt: at + r.queueMs,
      finishedAt: Date.now(),
      durationMs: r.durationMs,
      queueMs: r.queueMs,
      stdout: r.stdout,
      stderr: r.stderr,
      exitCode: r.exitCode,
      errorType: r.errorType,
      session: { new: Boolean(r.sessionNew), ended: Boolean(r.sessionEnded) },
    });
  }
  await session.close();
} finally {
  await pool.close();
}
t = finishTrajectory(t, 'max_turns', Date.now());

await seedOneTrajectory('e2e-sessions', 'tr_ses', t);
