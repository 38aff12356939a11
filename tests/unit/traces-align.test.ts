import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  alignRuns,
  columnLetter,
  defaultPick,
  effectivePicks,
  parsePicks,
  sampleLabel,
} from '../../components/traces/align-runs.ts';
import { tracesHref } from '../../components/compare/selection.ts';
import type { ProblemTrajectoryRow, RunProblemColumn } from '../../contracts/traces.ts';
import type { StoredTurn } from '../../contracts/trajectory.ts';

function turn(index: number, text: string, code: string | null): StoredTurn {
  return {
    index,
    text,
    tokens: text.length,
    engineFinish: 'stop',
    tool: null,
    parse:
      code === null ? { kind: 'none' } : { kind: 'call', name: 'python', arguments: { code, input: '' }, raw: text },
    genStartedAt: 0,
    genFinishedAt: 1,
  };
}

function row(
  id: string,
  step: number,
  sampleIndex: number,
  over: Partial<ProblemTrajectoryRow> = {},
): ProblemTrajectoryRow {
  return {
    id,
    runId: 'r',
    step,
    split: 'train',
    groupId: `g${step}`,
    sampleIndex,
    reward: 1,
    correct: true,
    turns: 1,
    toolCalls: 0,
    toolErrors: 0,
    finishReason: 'no_tool_call',
    ...over,
  };
}

test('alignRuns: turn k of every column in one row, with how far the row agrees', () => {
  const a = [turn(0, 'same', 'print(1)'), turn(1, 'think A', 'print(2)'), turn(2, 'A only', null)];
  const b = [turn(0, 'same', 'print(1)'), turn(1, 'think B', 'print(2)')];
  const c = [turn(0, 'same', 'print(1)'), turn(1, 'think C', 'print(3)')];
  const rows = alignRuns([a, b, c]);
  assert.deepEqual(
    rows.map((r) => [r.index, r.agreement, r.cells.map((t) => t?.text ?? null)]),
    [
      [0, 'same', ['same', 'same', 'same']],
      [1, 'different', ['think A', 'think B', 'think C']],
      [2, 'partial', ['A only', null, null]],
    ],
  );
  assert.deepEqual(
    alignRuns([a, b]).map((r) => r.agreement),
    ['same', 'same_code', 'partial'],
  );
  // Two turns without a call and different text: different, not "same code" (no code is not the same code).
  assert.equal(alignRuns([[turn(0, 'x', null)], [turn(0, 'y', null)]])[0].agreement, 'different');
  assert.deepEqual(alignRuns([[], []]), []);
});

test('defaultPick: the latest step, training before evaluation, the lowest sample', () => {
  assert.equal(defaultPick([]), null);
  assert.equal(defaultPick([row('a', 1, 0), row('b', 3, 2), row('c', 3, 1), row('d', 2, 0)]), 'c');
  assert.equal(defaultPick([row('e', 5, 0, { split: 'eval' }), row('t', 5, 3)]), 't');
  assert.equal(defaultPick([row('e', 6, 0, { split: 'eval' }), row('t', 5, 0)]), 'e');
});

test('effectivePicks: a pick the column lists stands; an unknown or missing one falls back to the default', () => {
  const cols: RunProblemColumn[] = [
    {
      run: { id: 'r1', name: 'one', kind: 'train', status: 'succeeded' },
      items: [row('a', 1, 0), row('b', 2, 0)],
      truncated: false,
    },
    { run: { id: 'r2', name: 'two', kind: 'train', status: 'succeeded' }, items: [row('c', 1, 0)], truncated: false },
    { run: { id: 'r3', name: 'three', kind: 'train', status: 'succeeded' }, items: [], truncated: false },
  ];
  assert.deepEqual(effectivePicks(cols, ['a', 'b', 'c']), ['a', 'c', null]);
  assert.deepEqual(effectivePicks(cols, []), ['b', 'c', null]);
});

test('labels, letters and the page URL round-trip', () => {
  assert.equal(
    sampleLabel(row('a', 4, 2, { reward: 0.5, correct: false })),
    'step 4 · sample 2 · reward 0.50 · incorrect',
  );
  assert.equal(
    sampleLabel(row('a', 4, 0, { split: 'eval', correct: null })),
    'step 4 eval · sample 0 · reward 1.00 · no verdict',
  );
  assert.deepEqual([0, 1, 2, 3].map(columnLetter), ['A', 'B', 'C', 'D']);
  assert.equal(tracesHref([]), '/compare/traces');
  assert.equal(tracesHref(['a', 'b', 'c', 'd', 'e']), '/compare/traces?runs=a,b,c,d');
  const href = tracesHref(['a', 'b'], 'gsm8k:12 & more', [null, 't2']);
  assert.equal(href, '/compare/traces?runs=a,b&problem=gsm8k%3A12+%26+more&pick=,t2');
  const q = new URL(href, 'http://x').searchParams;
  assert.equal(q.get('problem'), 'gsm8k:12 & more');
  assert.deepEqual(parsePicks(q.get('pick'), 2), [null, 't2']);
  assert.deepEqual(parsePicks(undefined, 3), [null, null, null]);
  assert.deepEqual(parsePicks(['x,y', 'z'], 9), ['x', 'y', 'z', null]);
});
