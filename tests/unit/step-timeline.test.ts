import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildStepTimeline, type PhaseSpan, timeByKind, type TimelineTrajectory } from '../../contracts/timeline.ts';
import { perfettoFileName, toPerfettoTrace } from '../../contracts/perfetto-trace.ts';
import { durationText, placeBlocks, ticks } from '../../components/timeline/timeline-layout.ts';
import { TIMELINE_REFRESH_MS, timelineIsFinal, timelineRefresh } from '../../components/timeline/timeline-refresh.ts';
import type { StoredTurn, ToolCallRecord } from '../../contracts/trajectory.ts';

const T0 = 1_800_000_000_000;

function tool(queued: number, started: number, finished: number, over: Partial<ToolCallRecord> = {}): ToolCallRecord {
  return {
    name: 'python',
    arguments: { code: 'print(1)', input: '' },
    status: 'ok',
    text: '1',
    appendedText: '1',
    tokens: 1,
    appended: true,
    queuedAt: T0 + queued,
    startedAt: T0 + started,
    finishedAt: T0 + finished,
    durationMs: finished - started,
    queueMs: started - queued,
    ...over,
  };
}

function turn(
  index: number,
  gen: [number, number],
  t: ToolCallRecord | null = null,
  over: Partial<StoredTurn> = {},
): StoredTurn {
  return {
    index,
    text: 'x',
    tokens: 1,
    engineFinish: 'stop',
    tool: t,
    parse: { kind: 'none' },
    genStartedAt: T0 + gen[0],
    genFinishedAt: T0 + gen[1],
    ...over,
  };
}

// g1 sample 0 ends at 900 (a queued tool call, then a second turn); g0 sample 1 at 500; g0 sample 0 at 300.
const trajectories: TimelineTrajectory[] = [
  { id: 'b', groupId: 'g1', sampleIndex: 0, turns: [turn(0, [0, 200], tool(200, 250, 400)), turn(1, [400, 900])] },
  { id: 'a1', groupId: 'g0', sampleIndex: 1, turns: [turn(0, [0, 500])] },
  { id: 'a0', groupId: 'g0', sampleIndex: 0, turns: [turn(0, [10, 300], tool(300, 300, 300))] },
];
const phases: PhaseSpan[] = [
  { name: 'reward', start: T0 + 900, end: T0 + 950 },
  { name: 'roc', start: T0 + 950, end: T0 + 951 },
  { name: 'train', start: T0 + 951, end: T0 + 1500 },
  { name: 'sync', start: T0 + 1500, end: T0 + 1600 },
  { name: 'storage', start: T0 + 1600, end: T0 + 1620 },
];

test('buildStepTimeline: a lane per trajectory by group and sample, then the phases; the critical path', () => {
  const t = buildStepTimeline('run_1', 7, trajectories, phases);
  assert.deepEqual(
    t.lanes.map((l) => [l.id, l.label]),
    [
      ['t:a0', 'g0 · sample 0'],
      ['t:a1', 'g0 · sample 1'],
      ['t:b', 'g1 · sample 0'],
      ['phases', 'step phases'],
    ],
  );
  assert.deepEqual([t.origin, t.end, t.phasesRecorded, t.untimed], [T0, T0 + 1620, true, 0]);
  assert.deepEqual(
    t.blocks.filter((b) => b.lane === 2).map((b) => [b.kind, b.label, b.start - T0, b.end - T0, b.critical]),
    [
      ['generate', 'turn 1 generation', 0, 200, true],
      ['tool_queue', 'turn 1 tool call queued', 200, 250, true],
      ['tool', 'turn 1 tool call (ok)', 250, 400, true],
      ['generate', 'turn 2 generation', 400, 900, true],
    ],
  );
  // The trajectory that finished last (b, at 900) and every phase are on the critical path; the others are not.
  assert.ok(t.blocks.filter((b) => b.lane < 2).every((b) => !b.critical));
  assert.ok(t.blocks.filter((b) => b.lane === 3).every((b) => b.critical));
  // A call that never waited has no queue block.
  assert.deepEqual(
    t.blocks.filter((b) => b.lane === 0).map((b) => b.kind),
    ['generate', 'tool'],
  );
  assert.deepEqual(timeByKind(t), {
    generate: 200 + 500 + 500 + 290,
    tool_queue: 50,
    tool: 150,
    reward: 50,
    roc: 1,
    train: 549,
    sync: 100,
    storage: 20,
  });
});

test('buildStepTimeline: no phases recorded, and turns or calls whose source kept no times', () => {
  const imported: TimelineTrajectory[] = [
    {
      id: 'i',
      groupId: 'g0',
      sampleIndex: 0,
      turns: [
        turn(0, [0, 100], tool(100, 100, 100, { absent: { timing: true } })),
        turn(1, [0, 0], null, { absent: { timing: true } }),
      ],
    },
  ];
  const t = buildStepTimeline('run_2', 1, imported, null);
  assert.deepEqual([t.phasesRecorded, t.untimed, t.lanes.length, t.blocks.length], [false, 2, 1, 1]);
  const empty = buildStepTimeline('run_3', 1, [], []);
  assert.deepEqual([empty.origin, empty.end, empty.blocks, empty.phasesRecorded], [0, 0, [], false]);
});

test('toPerfettoTrace: a named thread per lane, a complete event per block in microseconds, critical marked', () => {
  const t = buildStepTimeline('run_1', 7, trajectories, phases);
  const doc = toPerfettoTrace(t, 'toolsmith test');
  // A document any trace-event reader takes: JSON, every event with ph, pid, tid and a numeric ts.
  const back = JSON.parse(JSON.stringify(doc)) as typeof doc;
  assert.equal(back.displayTimeUnit, 'ms');
  const meta = back.traceEvents.filter((e) => e.ph === 'M');
  assert.deepEqual(
    meta.filter((e) => e.name === 'thread_name').map((e) => [e.tid, e.args?.name]),
    [
      [1, 'g0 · sample 0'],
      [2, 'g0 · sample 1'],
      [3, 'g1 · sample 0'],
      [4, 'step phases'],
    ],
  );
  const slices = back.traceEvents.filter((e) => e.ph === 'X');
  assert.equal(slices.length, t.blocks.length);
  for (const e of slices) assert.ok(Number.isInteger(e.ts) && Number.isInteger(e.dur) && e.dur! >= 0, e.name);
  const train = slices.find((e) => e.name === 'train')!;
  assert.deepEqual([train.ts, train.dur, train.tid, train.cat], [(T0 + 951) * 1000, 549_000, 4, 'train,critical']);
  assert.equal(slices.find((e) => e.tid === 1)!.cat, 'generate');
  assert.deepEqual(back.otherData, {
    producer: 'toolsmith test',
    run: 'run_1',
    step: 7,
    phasesRecorded: true,
    untimed: 0,
  });
  assert.equal(perfettoFileName('run_1', 7), 'run_1-step7.perfetto.json');
});

test('layout: blocks placed in percent of the step, a sliver at least; round ticks; durations', () => {
  const t = buildStepTimeline('run_1', 7, trajectories, phases);
  const placed = placeBlocks(t);
  const train = placed.find((b) => b.kind === 'train')!;
  assert.ok(Math.abs(train.left - (951 / 1620) * 100) < 1e-9);
  assert.ok(Math.abs(train.width - (549 / 1620) * 100) < 1e-9);
  assert.equal(train.title, 'train · 549 ms · critical path');
  assert.equal(placed.find((b) => b.kind === 'roc')!.width, 0.15);
  assert.deepEqual(ticks(1620), [0, 500, 1000, 1500]);
  assert.deepEqual(ticks(0), [0]);
  assert.deepEqual(
    [durationText(0), durationText(0.5), durationText(12.4), durationText(1500), durationText(61_000)],
    ['0', '0.50 ms', '12 ms', '1.50 s', '61.0 s'],
  );
});

test('timelineRefresh: the newest step is asked again until its phase times arrive; a final answer is kept', () => {
  const without = buildStepTimeline('run_4', 2, [], null);
  const withPhases = buildStepTimeline('run_4', 2, [], [{ name: 'train', start: T0, end: T0 + 10 }]);
  assert.equal(withPhases.phasesRecorded, true);
  assert.equal(timelineRefresh(undefined, true), TIMELINE_REFRESH_MS);
  assert.equal(timelineRefresh(without, true), TIMELINE_REFRESH_MS);
  assert.equal(timelineRefresh(withPhases, true), false);
  assert.equal(timelineRefresh(without, false), false, 'an older step without phases never gets them');
  assert.deepEqual(
    [
      timelineIsFinal(undefined, false),
      timelineIsFinal(without, true),
      timelineIsFinal(without, false),
      timelineIsFinal(withPhases, true),
    ],
    [false, false, true, true],
  );
});
