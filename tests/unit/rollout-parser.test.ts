import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  parseTurn,
  scanJsonObject,
  stoppedInsideCall,
  countAnswerBlocks,
  lastAnswerBlock,
} from '../../workers/rollout/parser.ts';
import type { ParseResult } from '../../contracts/trajectory.ts';
import { templateSettings } from '../../workers/rollout/template.ts';

const TOOL = 'execute_python_code_with_standard_io';
const call = (args: unknown, name = TOOL) => `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;
const asCall = (r: ParseResult) => {
  assert.equal(r.kind, 'call', JSON.stringify(r));
  return r as Extract<ParseResult, { kind: 'call' }>;
};
const asErr = (r: ParseResult) => {
  assert.equal(r.kind, 'parse_error', JSON.stringify(r));
  return r as Extract<ParseResult, { kind: 'parse_error' }>;
};

test('no tool call → none', () => {
  assert.deepEqual(parseTurn('I think </reason><answer>\\boxed{2}</answer>'), { kind: 'none' });
  assert.deepEqual(parseTurn('a stray </tool_call> closing tag only'), { kind: 'none' });
});

test('simple call; raw is the tag-to-tag text', () => {
  const text = `Let me compute.\n${call({ code: 'print(1+1)', input: '' })}`;
  const r = asCall(parseTurn(text));
  assert.equal(r.name, TOOL);
  assert.deepEqual(r.arguments, { code: 'print(1+1)', input: '' });
  assert.equal(r.raw, call({ code: 'print(1+1)', input: '' }));
});

test('braces and </tool_call> inside code strings', () => {
  const code = 'print("</tool_call>")\nd = {"a": "}"}\nprint(d["a"], "{", \'\\\\\')';
  const r = asCall(parseTurn(call({ code, input: '}{' })));
  assert.equal(r.arguments.code, code);
  assert.equal(r.arguments.input, '}{');
  // literal JSON text as a model would write it
  const lit =
    '<tool_call>{"name": "' +
    TOOL +
    '", "arguments": {"code": "x = {\\"a\\": \\"}\\"}\\nprint(\\"</tool_call>\\")", "input": ""}}</tool_call> trailing';
  assert.equal(asCall(parseTurn(lit)).arguments.code, 'x = {"a": "}"}\nprint("</tool_call>")');
});

test('two calls in one turn: only the first', () => {
  const text = `${call({ code: 'print(1)', input: '' })}\nand also\n${call({ code: 'print(2)', input: '' })}`;
  const r = asCall(parseTurn(text));
  assert.equal(r.arguments.code, 'print(1)');
  assert.ok(!r.raw.includes('print(2)'));
  // first one broken: error, the second one does not run
  const bad = `<tool_call>{"name": oops}</tool_call>${call({ code: 'print(2)', input: '' })}`;
  assert.match(asErr(parseTurn(bad)).message, /^Failed to decode tool call: /);
});

test('whitespace and newlines around the JSON (hermes style)', () => {
  const text = `<tool_call>\n  {"name": "${TOOL}", "arguments": {"code": "print(3)", "input": "5\\n"}}  \n\n</tool_call>`;
  const r = asCall(parseTurn(text));
  assert.deepEqual(r.arguments, { code: 'print(3)', input: '5\n' });
  assert.equal(r.raw, text);
});

test('unterminated call: generation stopped mid-call', () => {
  const inString = asErr(parseTurn(`<tool_call>{"name": "${TOOL}", "arguments": {"code": "for i in ra`));
  assert.equal(inString.unterminated, 'in_string');
  assert.match(inString.message, /^Failed to decode tool call: unterminated tool call/);
  assert.equal(asErr(parseTurn(`<tool_call>{"name": "${TOOL}", "arguments": {`)).unterminated, 'in_object');
  assert.equal(
    asErr(parseTurn(`<tool_call>{"name": "${TOOL}", "arguments": {"code": "1"}}`)).unterminated,
    'no_close_tag',
  );
  assert.equal(asErr(parseTurn('<tool_call>\n')).unterminated, 'no_close_tag');
  assert.equal(asErr(parseTurn('<tool_call>not json and no end')).unterminated, 'no_close_tag');
});

test('stop string trimmed by the engine: end of text stands for </tool_call>', () => {
  const r = asCall(
    parseTurn(`<tool_call>{"name": "${TOOL}", "arguments": {"code": "1"}}\n`, undefined, { stopTrimmed: true }),
  );
  assert.deepEqual(r.arguments, { code: '1', input: '' });
});

test('false stop on </tool_call> inside the code string is detected', () => {
  const text = `<tool_call>{"name": "${TOOL}", "arguments": {"code": "print(\\"</tool_call>`;
  assert.equal(stoppedInsideCall(text), true);
  assert.equal(stoppedInsideCall(call({ code: '1' })), false);
  assert.equal(stoppedInsideCall('no call'), false);
});

test('bad JSON → Failed to decode tool call', () => {
  const cases = [
    `<tool_call>{"name": "${TOOL}", "arguments": {"code": 'print(1)'}}</tool_call>`, // single quotes
    `<tool_call>{"name": "${TOOL}", "arguments": {"code": "1",}}</tool_call>`, // trailing comma
    `<tool_call>{"name": "${TOOL}", "arguments": {"code": "1"}}}</tool_call>`, // extra brace
    '<tool_call>print(1)</tool_call>', // not JSON at all
    '<tool_call>[1, 2]</tool_call>',
    `<tool_call>{"name": "${TOOL}", "arguments": {"code": "a\nb"}}</tool_call>`, // raw newline in a string
  ];
  for (const c of cases) {
    const e = asErr(parseTurn(c));
    assert.match(e.message, /^Failed to decode tool call: /, c);
    assert.equal(e.unterminated, undefined);
    assert.ok(e.raw.startsWith('<tool_call>') && e.raw.endsWith('</tool_call>'), e.raw);
  }
});

test('lenient mode accepts raw newlines inside strings', () => {
  const text = `<tool_call>{"name": "${TOOL}", "arguments": {"code": "a = 1\nprint(a)\t# x"}}</tool_call>`;
  const r = asCall(parseTurn(text, templateSettings({ lenientJson: true })));
  assert.equal(r.arguments.code, 'a = 1\nprint(a)\t# x');
});

test('unknown tool → Error when executing tool', () => {
  const e = asErr(parseTurn(call({ code: '1' }, 'python')));
  assert.match(e.message, /^Error when executing tool: unknown tool "python"/);
  assert.ok(e.message.includes(TOOL));
  // the tool name is a setting
  const s = templateSettings({ toolName: 'python' });
  assert.equal(asCall(parseTurn(call({ code: '1' }, 'python'), s)).name, 'python');
});

test('missing or malformed keys', () => {
  const msg = (t: string) => asErr(parseTurn(t)).message;
  assert.match(
    msg(`<tool_call>{"arguments": {"code": "1"}}</tool_call>`),
    /Failed to decode tool call: missing key "name"/,
  );
  assert.match(
    msg(`<tool_call>{"name": "${TOOL}"}</tool_call>`),
    /Failed to decode tool call: missing key "arguments"/,
  );
  assert.match(msg(call({ input: '3' })), /^Error when executing tool: missing required argument "code"/);
  assert.match(msg(call({ code: 5 })), /argument "code" must be a string/);
  assert.match(msg(call({ code: '1', input: 5 })), /argument "input" must be a string/);
  assert.match(msg(call([1])), /"arguments" must be a JSON object/);
  assert.match(msg(`<tool_call>{"name": 3, "arguments": {}}</tool_call>`), /"name" must be a string/);
  // input is optional
  assert.deepEqual(asCall(parseTurn(call({ code: '1' }))).arguments, { code: '1', input: '' });
});

test('arguments as a JSON-encoded string (OpenAI style)', () => {
  const args = JSON.stringify({ code: 'print("}{")', input: 'x' });
  const r = asCall(parseTurn(`<tool_call>${JSON.stringify({ name: TOOL, arguments: args })}</tool_call>`));
  assert.deepEqual(r.arguments, { code: 'print("}{")', input: 'x' });
  const e = asErr(parseTurn(`<tool_call>${JSON.stringify({ name: TOOL, arguments: '{code: 1' })}</tool_call>`));
  assert.match(e.message, /^Failed to decode tool call: "arguments" is a string that is not valid JSON/);
});

test('scanJsonObject is string-aware', () => {
  const s = 'xx{"a": "}\\"}", "b": [1, {"c": "]"}]} tail';
  const r = scanJsonObject(s, 2);
  assert.equal(s.slice(2, r.end), '{"a": "}\\"}", "b": [1, {"c": "]"}]}');
  assert.deepEqual(scanJsonObject('{"a": "x', 0), { end: -1, inString: true });
});

test('answer blocks', () => {
  assert.equal(countAnswerBlocks('no answer'), 0);
  assert.equal(countAnswerBlocks('<answer>\\boxed{1}</answer>'), 1);
  assert.equal(countAnswerBlocks('<answer>a</answer><reason>r</reason><answer>\\boxed{2}</answer>'), 2);
  assert.equal(lastAnswerBlock('<answer>a</answer> <answer>\\boxed{2}</answer>'), '\\boxed{2}');
  assert.equal(lastAnswerBlock('<answer>unterminated'), null);
});
