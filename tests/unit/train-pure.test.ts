import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CharTokenizer, embeddedTokenizerSpec } from '../../workers/engines/tokenizer.ts';
import { mulberry32 } from '../../workers/engines/sampling.ts';
import { EMBEDDED_TEMPLATE_SETTINGS as S, buildPrompt, toolResponseTurn } from '../../workers/rollout/template.ts';
import {
  appendAssistantTurn,
  appendToolResult,
  newTrajectory,
  parseErrorRecord,
} from '../../workers/rollout/trajectory.ts';
import { samplePrompts } from '../../workers/train/rl-stage.ts';
import { policySample } from '../../workers/train/policy-batch.ts';
import { sftSteps } from '../../workers/train/sft.ts';

const tok = new CharTokenizer(embeddedTokenizerSpec());

test('policy sample: prompt ids, then model tokens (mask 1, engine logprobs) and appended tool text (mask 0, null)', () => {
  const prompt = buildPrompt('What is 2+3?', S);
  const call =
    'Add.</reason>\n<tool_call>\n{"name": "python", "arguments": {"code": "print(2+3)", "input": ""}}\n</tool_call>';
  let t = newTrajectory(prompt, tok.encode(prompt).length);
  const ids1 = tok.encode(call);
  t = appendAssistantTurn(
    t,
    {
      text: call,
      tokens: ids1.length,
      tokenIds: ids1,
      logprobs: ids1.map(() => -0.5),
      engineFinish: 'stop',
      genStartedAt: 0,
      genFinishedAt: 1,
    },
    S,
  );
  const appended = toolResponseTurn('5\n', S);
  t = appendToolResult(t, {
    ...parseErrorRecord('x', appended, tok.encode(appended).length, 2),
    status: 'ok',
    name: 'python',
    arguments: { code: 'print(2+3)', input: '' },
  });
  const fin = '5.</reason>\n<answer>\\boxed{5}</answer><|im_end|>';
  const ids2 = tok.encode(fin);
  t = appendAssistantTurn(
    t,
    {
      text: fin,
      tokens: ids2.length,
      tokenIds: ids2,
      logprobs: null,
      engineFinish: 'stop',
      genStartedAt: 3,
      genFinishedAt: 4,
    },
    S,
  );

  const p = policySample(t, tok);
  assert.equal(p.responseStart, tok.encode(prompt).length);
  assert.deepEqual(p.ids, tok.encode(prompt + call + appended + fin));
  const toolLen = tok.encode(appended).length;
  assert.deepEqual(p.responseMask, [...ids1.map(() => 1), ...Array(toolLen).fill(0), ...ids2.map(() => 1)]);
  assert.deepEqual(p.engineLogprobs, [...ids1.map(() => -0.5), ...Array(toolLen).fill(null), ...ids2.map(() => null)]);
  assert.equal(p.ids.length - p.responseStart, p.responseMask.length);
});

test('a tool response that was not appended (overflow) adds no tokens', () => {
  const prompt = buildPrompt('Q', S);
  let t = newTrajectory(prompt, tok.encode(prompt).length);
  const call = '<tool_call>\n{"name": "python", "arguments": {"code": "1"}}\n</tool_call>';
  t = appendAssistantTurn(
    t,
    { text: call, tokens: tok.encode(call).length, engineFinish: 'stop', genStartedAt: 0, genFinishedAt: 1 },
    S,
  );
  t = appendToolResult(t, { ...parseErrorRecord('x', toolResponseTurn('1', S), 99, 2), status: 'ok', appended: false });
  assert.equal(policySample(t, tok).responseMask.length, tok.encode(call).length);
});

test('samplePrompts: distinct, seeded, all of a small pool', () => {
  const pool = Array.from({ length: 50 }, (_, i) => i);
  const a = samplePrompts(pool, 8, mulberry32(3));
  assert.equal(new Set(a).size, 8);
  assert.deepEqual(a, samplePrompts(pool, 8, mulberry32(3)));
  assert.notDeepEqual(a, samplePrompts(pool, 8, mulberry32(4)));
  assert.deepEqual(samplePrompts([1, 2, 3], 8, mulberry32(1)).sort(), [1, 2, 3]);
});

test('SFT steps: epochs × ⌈n / batch⌉, capped by maxSteps', () => {
  assert.equal(sftSteps(100, { epochs: 3, batch: 8 }), 39);
  assert.equal(sftSteps(100, { epochs: 3, batch: 8, maxSteps: 10 }), 10);
});
