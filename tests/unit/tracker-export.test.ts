import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  metricsByStep,
  runRecord,
  trajectoryTrace,
  type TrackerTrajectoryRow,
} from '../../contracts/tracker-export.ts';
import type { StoredTurn, ToolCallRecord } from '../../contracts/trajectory.ts';

const T0 = 1_800_000_000_000;

test('metricsByStep: every key logged at a step in one record, steps in order, the latest time of the step', () => {
  const records = metricsByStep({
    'train/loss': [
      { step: 3, value: 0.5, time: T0 + 30 },
      { step: 1, value: 1, time: T0 + 10 },
    ],
    'rollout/accuracy': [{ step: 3, value: 0.75, time: T0 + 31 }],
  });
  assert.deepEqual(records, [
    { type: 'metrics', step: 1, time: T0 + 10, values: { 'train/loss': 1 } },
    { type: 'metrics', step: 3, time: T0 + 31, values: { 'train/loss': 0.5, 'rollout/accuracy': 0.75 } },
  ]);
  assert.deepEqual(metricsByStep({}), []);
});

test('runRecord: named by the run id, grouped by its name, the recipe and the run as config', () => {
  const r = runRecord(
    {
      id: 'run_1',
      name: 'my run',
      kind: 'train',
      status: 'succeeded',
      seed: 3,
      codeVersion: 'abc',
      createdAt: new Date(T0),
      recipeSpec: { rl: { steps: 2 } },
    },
    'proj',
  );
  assert.deepEqual(r, {
    type: 'run',
    project: 'proj',
    name: 'run_1',
    group: 'my run',
    config: {
      toolsmith: {
        runId: 'run_1',
        name: 'my run',
        kind: 'train',
        status: 'succeeded',
        seed: 3,
        codeVersion: 'abc',
        createdAt: new Date(T0).toISOString(),
      },
      recipe: { rl: { steps: 2 } },
    },
  });
});

function turn(index: number, tool: ToolCallRecord | null, over: Partial<StoredTurn> = {}): StoredTurn {
  return {
    index,
    text: `turn ${index} text`,
    tokens: 7,
    engineFinish: 'stop',
    parse: { kind: 'none' },
    tool,
    genStartedAt: T0 + index * 1000,
    genFinishedAt: T0 + index * 1000 + 400,
    ...over,
  };
}

const parseError: ToolCallRecord = {
  name: null,
  arguments: null,
  status: 'parse_error',
  text: 'the tool call is not valid JSON',
  appendedText: 'x',
  tokens: 3,
  appended: true,
  queuedAt: T0 + 400,
  startedAt: T0 + 400,
  finishedAt: T0 + 400,
  durationMs: null,
  queueMs: null,
};

test('trajectoryTrace: messages with tool calls, a span per turn and per call, errors and untimed spans as such', () => {
  const row: TrackerTrajectoryRow = {
    id: 'tr_1',
    step: 4,
    split: 'eval',
    groupId: 'g1',
    reward: 0,
    answer: null,
    content: {
      prompt: 'What is 2+2?',
      finishReason: 'engine_error',
      finishedAt: T0 + 5000,
      error: 'boom',
      modelTokens: 14,
      turns: [turn(0, parseError), turn(1, null, { engineFinish: 'error', absent: { timing: true, tokens: true } })],
      verdict: { correct: null, method: 'none', extracted: null, reason: 'no answer' },
    },
  };
  const t = trajectoryTrace(row);
  assert.equal(t.type, 'trace');
  if (t.type !== 'trace') return;
  assert.equal(t.key, 'trajectories/eval');
  assert.deepEqual(
    t.messages.map((m) => [m.role, m.tool_calls?.[0]?.function.name ?? null, m.tool_call_id ?? null]),
    [
      ['user', null, null],
      ['assistant', 'unparsed', null],
      ['tool', null, 'call_0'],
      ['assistant', null, null],
    ],
  );
  assert.deepEqual(
    t.spans.map((s) => [s.kind, s.name, s.status, s.start_time ?? null, s.usage?.output_tokens ?? null]),
    [
      ['generation', 'turn 0', 'success', new Date(T0).toISOString(), 7],
      ['tool', 'parse error', 'error', new Date(T0 + 400).toISOString(), null],
      ['generation', 'turn 1', 'error', null, null],
    ],
  );
  assert.deepEqual(
    [t.metadata.status, t.metadata.correct, t.metadata.finishReason, t.metadata.trajectoryId],
    ['error', null, 'engine_error', 'tr_1'],
  );
});
