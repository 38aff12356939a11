import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  afterGeneration,
  afterTool,
  decideTurn,
  maxTokensForNextTurn,
  formatPenalty,
  type StopLimits,
} from '../../workers/rollout/stop.ts';
import {
  newTrajectory,
  appendAssistantTurn,
  appendToolResult,
  finishTrajectory,
  parseErrorRecord,
  usedTokens,
  responseMask,
  trajectoryMask,
  responseLogprobs,
  responseText,
  segments,
  toolStats,
  answerFacts,
} from '../../workers/rollout/trajectory.ts';
import type { ToolCallRecord, Trajectory, ParseResult } from '../../contracts/trajectory.ts';
import { buildPrompt, toolResponseTurn } from '../../workers/rollout/template.ts';

const L: StopLimits = { maxResponseTokens: 100, maxTurns: 3 };
const CALL: ParseResult = { kind: 'call', name: 't', arguments: { code: '1', input: '' }, raw: '' };
const NONE: ParseResult = { kind: 'none' };
const PERR: ParseResult = {
  kind: 'parse_error',
  message: 'Failed to decode tool call: x',
  raw: '<tool_call>x</tool_call>',
};
const TOOL = 'execute_python_code_with_standard_io';
const callText = (code: string) =>
  `step </reason><tool_call>{"name": "${TOOL}", "arguments": {"code": "${code}", "input": ""}}</tool_call>`;

test('afterGeneration: each stop reason, in priority order', () => {
  const g = { usedTokens: 10, turns: 1, engineFinish: 'stop' as const, parse: CALL };
  assert.deepEqual(afterGeneration(L, g), { action: 'continue' });
  assert.deepEqual(afterGeneration(L, { ...g, engineFinish: 'error' }), { action: 'stop', reason: 'engine_error' });
  assert.deepEqual(afterGeneration(L, { ...g, engineFinish: 'abort', parse: NONE }), {
    action: 'stop',
    reason: 'engine_error',
  });
  assert.deepEqual(afterGeneration(L, { ...g, engineFinish: 'length' }), { action: 'stop', reason: 'length' });
  // truncated mid-call: a parse error, but the reason is length and no tool response is produced
  assert.deepEqual(afterGeneration(L, { ...g, usedTokens: 100, parse: PERR }), { action: 'stop', reason: 'length' });
  assert.deepEqual(afterGeneration(L, { ...g, usedTokens: 100, parse: NONE }), { action: 'stop', reason: 'length' });
  assert.deepEqual(afterGeneration(L, { ...g, parse: NONE }), { action: 'stop', reason: 'no_tool_call' });
  assert.deepEqual(afterGeneration(L, { ...g, turns: 3, parse: NONE }), { action: 'stop', reason: 'no_tool_call' });
  assert.deepEqual(afterGeneration(L, { ...g, turns: 3 }), { action: 'stop', reason: 'max_turns' });
  assert.deepEqual(afterGeneration(L, { ...g, turns: 2 }), { action: 'continue' });
  // a parse error gets a tool response (the error text) like a call
  assert.deepEqual(afterGeneration(L, { ...g, parse: PERR }), { action: 'continue' });
});

test('afterTool: overflow when appending leaves no room for a generated token (verl >= rule)', () => {
  assert.deepEqual(afterTool(L, 50, 49), { action: 'continue' });
  assert.deepEqual(afterTool(L, 50, 50), { action: 'stop', reason: 'tool_overflow' });
  assert.deepEqual(afterTool(L, 50, 51), { action: 'stop', reason: 'tool_overflow' });
  assert.deepEqual(decideTurn(L, { usedTokens: 75, turns: 2, engineFinish: 'stop', parse: CALL, toolTokens: 25 }), {
    action: 'stop',
    reason: 'tool_overflow',
  });
  assert.deepEqual(decideTurn(L, { usedTokens: 75, turns: 2, engineFinish: 'stop', parse: NONE }), {
    action: 'stop',
    reason: 'no_tool_call',
  });
  assert.throws(() => decideTurn(L, { usedTokens: 7, turns: 1, engineFinish: 'stop', parse: CALL }));
  assert.equal(maxTokensForNextTurn(L, 50), 50);
  assert.equal(maxTokensForNextTurn(L, 120), 0);
});

function rec(text: string, tokens: number, appended: boolean, status: ToolCallRecord['status'] = 'ok'): ToolCallRecord {
  return {
    name: TOOL,
    arguments: { code: '1', input: '' },
    status,
    text,
    appendedText: toolResponseTurn(text),
    tokens,
    appended,
    queuedAt: 1000,
    startedAt: 1002,
    finishedAt: 1010,
    durationMs: 8,
    queueMs: 2,
  };
}

/** Hand-computed run: budget 100, 3 turns. T1 30 tok + tool 20 (→50); T2 25 tok (→75) + tool 25 → 100 ≥ 100: overflow. */
test('trajectory: budget accounting, tool_overflow not appended, mask and logprobs', () => {
  let t: Trajectory = newTrajectory(buildPrompt('Q'), 400);
  const lp = (n: number, v: number) => Array.from({ length: n }, () => v);
  t = appendAssistantTurn(t, {
    text: callText('print(1)'),
    tokens: 30,
    logprobs: lp(30, -0.5),
    engineFinish: 'stop',
    genStartedAt: 0,
    genFinishedAt: 900,
  });
  assert.equal(t.turns[0].parse.kind, 'call');
  assert.deepEqual(
    afterGeneration(L, {
      usedTokens: usedTokens(t),
      turns: t.turns.length,
      engineFinish: 'stop',
      parse: t.turns[0].parse,
    }),
    { action: 'continue' },
  );
  assert.deepEqual(afterTool(L, usedTokens(t), 20), { action: 'continue' });
  t = appendToolResult(t, rec('1\n', 20, true));
  assert.equal(usedTokens(t), 50);
  assert.equal(maxTokensForNextTurn(L, usedTokens(t)), 50);

  t = appendAssistantTurn(t, {
    text: callText('print(2)'),
    tokens: 25,
    logprobs: lp(25, -1),
    engineFinish: 'stop',
    genStartedAt: 1100,
    genFinishedAt: 1500,
  });
  assert.equal(usedTokens(t), 75);
  const d = afterTool(L, usedTokens(t), 25);
  assert.deepEqual(d, { action: 'stop', reason: 'tool_overflow' });
  t = appendToolResult(t, rec('2\n', 25, false));
  t = finishTrajectory(t, 'tool_overflow', 1600);
  assert.equal(usedTokens(t), 75);
  assert.equal(t.modelTokens, 55);
  assert.equal(t.toolTokens, 20);

  const mask = trajectoryMask(t);
  assert.equal(mask.length, 75);
  assert.deepEqual(mask, [...lp(30, 1), ...lp(20, 0), ...lp(25, 1)]);
  assert.equal(
    mask.reduce((a, b) => a + b, 0),
    55,
  );
  const lps = responseLogprobs(t)!;
  assert.equal(lps.length, 75);
  assert.equal(lps[29], -0.5);
  assert.equal(lps[30], null);
  assert.equal(lps[50], -1);
  assert.deepEqual(
    segments(t).map((s) => [s.kind, s.tokens]),
    [
      ['model', 30],
      ['tool', 20],
      ['model', 25],
    ],
  );
  assert.equal(responseText(t), callText('print(1)') + toolResponseTurn('1\n') + callText('print(2)'));
  assert.deepEqual(toolStats(t), { calls: 2, errors: 0, parseErrors: 0 });
  assert.equal(t.turns[1].tool?.appended, false);
  assert.throws(() =>
    appendAssistantTurn(t, { text: 'x', tokens: 1, engineFinish: 'stop', genStartedAt: 0, genFinishedAt: 0 }),
  );
});

test('trajectory: parse error as tool response, no-call finish, answer facts, p_format', () => {
  let t = newTrajectory('P', 10);
  t = appendAssistantTurn(t, {
    text: '<tool_call>{bad}</tool_call>',
    tokens: 8,
    engineFinish: 'stop',
    genStartedAt: 0,
    genFinishedAt: 5,
  });
  const p = t.turns[0].parse;
  assert.equal(p.kind, 'parse_error');
  const msg = (p as { message: string }).message;
  t = appendToolResult(t, parseErrorRecord(msg, toolResponseTurn(msg), 12, 6));
  t = appendAssistantTurn(t, {
    text: 'ok </reason><answer>\\boxed{2}</answer>',
    tokens: 10,
    engineFinish: 'stop',
    genStartedAt: 7,
    genFinishedAt: 9,
  });
  assert.deepEqual(
    afterGeneration(L, { usedTokens: usedTokens(t), turns: 2, engineFinish: 'stop', parse: t.turns[1].parse }),
    { action: 'stop', reason: 'no_tool_call' },
  );
  t = finishTrajectory(t, 'no_tool_call', 10);
  assert.equal(usedTokens(t), 30);
  assert.deepEqual(trajectoryMask(t), [...Array(8).fill(1), ...Array(12).fill(0), ...Array(10).fill(1)]);
  assert.equal(responseLogprobs(t), null); // the engine gave none
  assert.deepEqual(toolStats(t), { calls: 1, errors: 1, parseErrors: 1 });
  assert.deepEqual(answerFacts(t), { answerBlocks: 1, turns: 2 });
  assert.equal(formatPenalty(1, 2), 0);
  assert.equal(formatPenalty(0, 2), 1);
  assert.equal(formatPenalty(3, 4), 0.5);
  assert.equal(formatPenalty(5, 2), 1);
  assert.throws(() => appendToolResult(t, rec('x', 1, true)));
});

test('trajectory: guards and the mask helper', () => {
  const t = newTrajectory('P', 1);
  assert.throws(() => appendToolResult(t, rec('x', 1, true)), /no assistant turn/);
  assert.throws(
    () =>
      appendAssistantTurn(t, {
        text: 'x',
        tokens: 2,
        logprobs: [0],
        engineFinish: 'stop',
        genStartedAt: 0,
        genFinishedAt: 0,
      }),
    /logprobs length/,
  );
  const t2 = appendAssistantTurn(t, {
    text: 'no call',
    tokens: 2,
    engineFinish: 'stop',
    genStartedAt: 0,
    genFinishedAt: 0,
  });
  assert.throws(() => appendToolResult(t2, rec('x', 1, true)), /made no tool call/);
  assert.deepEqual(
    responseMask([
      { kind: 'model', tokens: 2 },
      { kind: 'tool', tokens: 3 },
      { kind: 'model', tokens: 1 },
    ]),
    [1, 1, 0, 0, 0, 1],
  );
  assert.deepEqual(responseMask([]), []);
  // tool output containing <answer> does not count as an answer block
  let t3 = appendAssistantTurn(newTrajectory('P', 1), {
    text: callText('print(1)'),
    tokens: 3,
    engineFinish: 'stop',
    genStartedAt: 0,
    genFinishedAt: 0,
  });
  t3 = appendToolResult(t3, rec('<answer>1</answer>', 5, true));
  assert.equal(answerFacts(t3).answerBlocks, 0);
});
