// @postgresql: also on PostgreSQL, because a step's phases are found by a prefix match on the event's JSON text.
// The step timeline as the run page asks for it (runs.timeline) and as the CLI exports it, on stored records: the
// step's own event found among neighbours whose numbers share its digits, steps without records, and the errors that
// name their flag. A real run's timeline is tested with the run (train.test.ts).
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TRPCError } from '@trpc/server';
import { freshDatabase } from '../helpers/db.ts';
import { runCli } from '../helpers/proc.ts';
import type { Database } from '../../server/db/client.ts';
import { createRun } from '../../server/store/runs.ts';
import { appendEvent } from '../../server/store/events.ts';
import { insertTrajectories, type TrajectoryInput } from '../../server/store/trajectories.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { TEST_ADMIN } from '../helpers/principals.ts';
import type { StoredTurn } from '../../contracts/trajectory.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let runId: string;
const T0 = 1_800_000_000_000;
const caller = () => createCallerFactory(appRouter)({ db, principal: TEST_ADMIN });

const turn = (index: number, from: number, to: number): StoredTurn => ({
  index,
  text: 'x',
  tokens: 1,
  engineFinish: 'stop',
  tool: null,
  parse: { kind: 'none' },
  genStartedAt: T0 + from,
  genFinishedAt: T0 + to,
});

function trajectory(step: number, sampleIndex: number, split = 'train'): TrajectoryInput {
  return {
    id: `tr_${step}_${sampleIndex}_${split}`,
    runId,
    step,
    stage: 0,
    split,
    groupId: 'g0',
    sampleIndex,
    reward: 0,
    finishReason: 'no_tool_call',
    content: { prompt: 'p', turns: [turn(0, 0, 100 * (sampleIndex + 1)), turn(1, 500, 600)] },
    toolCalls: [],
  };
}

beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  runId = (await createRun(db, { name: 'timeline', kind: 'train' })).id;
  await insertTrajectories(db, [trajectory(3, 0), trajectory(3, 1), trajectory(3, 0, 'eval'), trajectory(30, 0)]);
  const phase = (name: string, from: number, to: number) => ({ name, start: T0 + from, end: T0 + to });
  // Step 30's event is written last: a prefix without the comma after the number would take it for step 3.
  for (const [step, train] of [
    [3, phase('train', 700, 900)],
    [30, phase('train', 5000, 9000)],
  ] as const)
    await appendEvent(db, runId, {
      message: `step ${step}`,
      type: 'step',
      data: {
        step,
        metrics: { loss: 1 },
        phases: [phase('reward', 600, 650), train, { name: 'bogus', start: 1, end: 2 }],
      },
    });
});
afterEach(async () => {
  await fresh.close();
});

test('runs.timeline: the step training trajectories in lanes, then its own recorded phases', async () => {
  const t = await caller().runs.timeline({ runId, step: 3 });
  assert.deepEqual(
    t.lanes.map((l) => l.id),
    ['t:tr_3_0_train', 't:tr_3_1_train', 'phases'],
  );
  assert.deepEqual(
    t.blocks.filter((b) => b.lane === 2).map((b) => [b.kind, b.start - T0, b.end - T0]),
    [
      ['reward', 600, 650],
      ['train', 700, 900],
    ],
    'the step-3 event, not step 30; a phase of no known name is left out',
  );
  assert.deepEqual([t.origin - T0, t.end - T0, t.phasesRecorded], [0, 900, true]);
  const none = await caller().runs.timeline({ runId, step: 4 });
  assert.deepEqual([none.lanes, none.blocks, none.phasesRecorded], [[], [], false]);
  await assert.rejects(
    caller().runs.timeline({ runId: 'run_missing', step: 3 }),
    (e) => e instanceof TRPCError && e.code === 'NOT_FOUND' && /run_missing/.test(e.message),
  );
});

test('export --format perfetto: errors name the flag; a step without records writes nothing', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-timeline-'));
  const env = { DATABASE_URL: fresh.url };
  const out = path.join(dir, 'trace.json');
  const cases: [string[], RegExp][] = [
    [['--format', 'chrome', '--out', out], /--format: atif \(trajectories\) or perfetto/],
    [['--format', 'perfetto', '--out', out], /--step: the step to export/],
    [['--format', 'perfetto', '--step', '3'], /--out: name the file to write/],
    [['--format', 'perfetto', '--step', '4', '--out', out], /--step: run \S+ recorded no times at step 4/],
  ];
  for (const [args, message] of cases) {
    const r = await runCli(['export', runId, ...args], env);
    assert.notEqual(r.code, 0, args.join(' '));
    assert.match(r.stderr, message);
  }
  assert.equal(fs.existsSync(out), false);
  const ok = await runCli(['export', runId, '--format', 'perfetto', '--step', '30', '--out', out], env);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /2 tracks, 4 slices/);
  fs.rmSync(dir, { recursive: true, force: true });
});
