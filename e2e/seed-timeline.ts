/**
 * Seeds the e2e server's database (TOOLSMITH_DATA_DIR) for step-timeline.spec.ts: a train run whose step 2 has two
 * trajectories (one with a tool call that waited in the queue) and a `step` event with its phases, as the RL loop
 * records them, and a share link to step 2. Prints the run id and the link's token as JSON. Run by the spec: `node --import tsx e2e/seed-timeline.ts`.
 */
import { openDatabase } from '../server/db/client.ts';
import { appendEvent } from '../server/store/events.ts';
import { logMetrics } from '../server/store/metrics.ts';
import { createRun, setRunStatus } from '../server/store/runs.ts';
import { insertTrajectories } from '../server/store/trajectories.ts';
import { createShareLink } from '../server/share/links.ts';
import type { StoredTurn } from '../contracts/trajectory.ts';

const T0 = Date.UTC(2026, 11, 7, 9);

function turn(index: number, from: number, to: number, tool: [number, number, number] | null): StoredTurn {
  return {
    index,
    text: `turn ${index + 1}`,
    tokens: 3,
    engineFinish: 'stop',
    parse: tool
      ? { kind: 'call', name: 'python', arguments: { code: 'print(1)', input: '' }, raw: '' }
      : { kind: 'none' },
    tool: tool && {
      name: 'python',
      arguments: { code: 'print(1)', input: '' },
      status: 'ok',
      text: '1',
      appendedText: '1',
      tokens: 1,
      appended: true,
      queuedAt: T0 + tool[0],
      startedAt: T0 + tool[1],
      finishedAt: T0 + tool[2],
      durationMs: tool[2] - tool[1],
      queueMs: tool[1] - tool[0],
    },
    genStartedAt: T0 + from,
    genFinishedAt: T0 + to,
  };
}

const db = await openDatabase();
try {
  const run = await createRun(db, { name: 'e2e-timeline', kind: 'train', recipeSpec: { note: 'timeline' } });
  const common = {
    runId: run.id,
    step: 2,
    stage: 0,
    groupId: 'g0',
    reward: 0,
    finishReason: 'no_tool_call',
    toolCalls: [],
  };
  await insertTrajectories(db, [
    {
      ...common,
      id: `tr_tl0_${run.id.slice(4)}`,
      sampleIndex: 0,
      content: { prompt: 'p', turns: [turn(0, 0, 800, [800, 900, 1400]), turn(1, 1400, 2000, null)] },
    },
    {
      ...common,
      id: `tr_tl1_${run.id.slice(4)}`,
      sampleIndex: 1,
      content: { prompt: 'p', turns: [turn(0, 0, 600, null)] },
    },
  ]);
  const phase = (name: string, from: number, to: number) => ({ name, start: T0 + from, end: T0 + to });
  await appendEvent(db, run.id, {
    message: 'step 2',
    type: 'step',
    data: {
      step: 2,
      metrics: { 'rollout/reward': 0 },
      phases: [
        phase('reward', 2000, 2100),
        phase('roc', 2100, 2110),
        phase('train', 2110, 3500),
        phase('sync', 3500, 3800),
        phase('storage', 3800, 3850),
      ],
    },
  });
  await logMetrics(db, run.id, 2, { 'rollout/reward': 0 });
  await setRunStatus(db, run.id, 'succeeded');
  const link = await createShareLink(db, { scope: 'step', target: { runId: run.id, step: 2 } });
  console.log(JSON.stringify({ runId: run.id, token: link.token }));
} finally {
  await db.close();
}
