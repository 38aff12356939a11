import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildPrompt,
  toolResponseTurn,
  stopStrings,
  pyJson,
  templateSettings,
  COMPACT_TEMPLATE_SETTINGS,
  toolSchema,
} from '../../workers/rollout/template.ts';

const SCHEMA =
  '{"type": "function", "function": {"name": "execute_python_code_with_standard_io", "description": "Execute Python code with standard input and capture standard output. This function takes a Python code string and an input string, provides the input string through standard input (stdin) to the code, and captures and returns any output produced through standard output (stdout). If the executed code raises an exception, the error message will be captured and returned instead.", ' +
  '"parameters": {"type": "object", "properties": {"code": {"type": "string", "description": "A string containing Python code to be executed. The code can read from standard input using the input() function."}, "input": {"type": "string", "description": "A string that will be provided as standard input to the code when it calls input()."}}, "required": ["code", "input"]}, ' +
  '"return": {"type": "string", "description": "str: The output produced by the executed code through standard output. If an error occurs during execution, the error message will be returned."}}}';

const GOLDEN =
  '<|im_start|>system\n' +
  'A conversation between User and Assistant. The user asks a question, and the Assistant solves it. The Assistant first thinks about the reasoning process in the mind and then provides the user with the answer. The reasoning process and answer are enclosed within <reason> </reason> and <answer> </answer> tags, respectively, i.e., <reason> reasoning process here </reason><answer> answer here </answer>.\n' +
  '\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
  SCHEMA +
  '\n</tools>\n\n' +
  'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' +
  '<|im_start|>user\nYou must put your answer inside <answer> </answer> tags, i.e., <answer> answer here </answer>. And your final answer will be extracted automatically by the \\boxed{} tag.\n' +
  'This is the problem:\nWhat is 1+1?<|im_end|>\n' +
  '<|im_start|>assistant\n<reason>';

test('prompt: golden string with the defaults', () => {
  assert.equal(buildPrompt('What is 1+1?'), GOLDEN);
});

test('prompt: ends with the assistant prefix', () => {
  assert.ok(buildPrompt('x').endsWith('<|im_start|>assistant\n<reason>'));
});

test('prompt: tool name, tags and schema are settings', () => {
  const s = templateSettings({ toolName: 'python_code_with_standard_io', reasonTag: 'think', callTag: 'call' });
  const p = buildPrompt('Q', s);
  assert.ok(p.includes('"name": "python_code_with_standard_io"'));
  assert.ok(p.includes('<think> </think>'));
  assert.ok(p.includes('<call>\n{"name": <function-name>'));
  assert.ok(p.endsWith('<|im_start|>assistant\n<think>'));
  assert.ok(!p.includes('execute_python_code_with_standard_io'));
  const custom = buildPrompt(
    'Q',
    templateSettings({ toolSchema: { type: 'function', function: { name: 'f' } }, systemPrompt: 'SYS' }),
  );
  assert.ok(custom.startsWith('<|im_start|>system\nSYS\n\n# Tools'));
  assert.ok(custom.includes('<tools>\n{"type": "function", "function": {"name": "f"}}\n</tools>'));
});

test('prompt: compact variant is shorter and keeps the layout', () => {
  const full = buildPrompt('Q');
  const compact = buildPrompt('Q', COMPACT_TEMPLATE_SETTINGS);
  assert.ok(compact.length < full.length / 2, `${compact.length} vs ${full.length}`);
  assert.ok(compact.includes('<tools>\n{"type": "function"'));
  assert.ok(compact.includes('"required": ["code", "input"]'));
  assert.ok(compact.endsWith('This is the problem:\nQ<|im_end|>\n<|im_start|>assistant\n<reason>'));
  assert.equal((toolSchema(COMPACT_TEMPLATE_SETTINGS) as any).function.name, 'execute_python_code_with_standard_io');
});

test('tool response turn: Qwen hermes whitespace', () => {
  assert.equal(
    toolResponseTurn('42\n'),
    '<|im_end|>\n<|im_start|>user\n<tool_response>\n42\n\n</tool_response><|im_end|>\n<|im_start|>assistant\n<reason>',
  );
  assert.equal(
    toolResponseTurn('ok', templateSettings({ responseTag: 'output', reasonTag: 'think' })),
    '<|im_end|>\n<|im_start|>user\n<output>\nok\n</output><|im_end|>\n<|im_start|>assistant\n<think>',
  );
});

test('stop strings', () => {
  assert.deepEqual(stopStrings(), ['</tool_call>', '<|im_end|>', '<|endoftext|>']);
});

test('pyJson matches json.dumps separators and keeps non-ASCII', () => {
  assert.equal(
    pyJson({ a: [1, 'x', null, true], b: { c: 'é"\n' } }),
    '{"a": [1, "x", null, true], "b": {"c": "é\\"\\n"}}',
  );
});
