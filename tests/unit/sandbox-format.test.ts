import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatToolResult, middleTruncate } from '../../workers/sandbox/format.ts';
import type { SandboxResult } from '../../workers/sandbox/types.ts';

const base: SandboxResult = {
  status: 'ok',
  stdout: '',
  stderr: '',
  exitCode: 0,
  errorType: null,
  errorLine: null,
  errorMessage: null,
  durationMs: 123,
  queueMs: 0,
  stdoutTruncated: false,
  stderrTruncated: false,
};
const tb =
  'Traceback (most recent call last):\n  File "main.py", line 1, in <module>\nZeroDivisionError: division by zero\n';
const err: SandboxResult = {
  ...base,
  status: 'error',
  exitCode: 1,
  stderr: tb,
  errorType: 'ZeroDivisionError',
  errorLine: 1,
  errorMessage: 'division by zero',
};

test('paper style: success is the raw stdout', () => {
  assert.equal(formatToolResult({ ...base, stdout: '42\n' }), '42\n');
});

test('paper style: an error is "tool call failed" with the traceback', () => {
  assert.equal(formatToolResult(err), `tool call failed\n${tb}`);
});

test('paper style: a timeout names the limit and keeps partial output', () => {
  const text = formatToolResult(
    { ...base, status: 'timeout', stdout: 'partial\n', exitCode: -9 },
    { style: 'paper' },
    4,
  );
  assert.equal(text, 'tool call failed\ntimeout: execution exceeded the time limit of 4 s\npartial\n');
});

test('released style: success and failure, empty fields omitted', () => {
  assert.equal(
    formatToolResult({ ...base, stdout: '2' }, { style: 'released' }),
    'Tool call success\nstdout: 2\nexecution time: 0.12s',
  );
  assert.equal(
    formatToolResult(err, { style: 'released' }),
    `Tool call failure\nreason: ZeroDivisionError: division by zero\nstderr: ${tb}\nexecution time: 0.12s`,
  );
});

test('per-field truncation (code-judge: 1000 chars each)', () => {
  const text = formatToolResult({ ...base, stdout: 'x'.repeat(1500) }, { style: 'released', maxFieldChars: 1000 });
  assert.match(text, /^Tool call success\nstdout: x{1000}…\[truncated 500 chars\]\nexecution time/);
});

test('middle truncation keeps head and tail of the whole text (verl: 128 + 128)', () => {
  const s = 'a'.repeat(128) + 'b'.repeat(1000) + 'c'.repeat(128);
  const out = middleTruncate(s, { head: 128, tail: 128 });
  assert.equal(out, `${'a'.repeat(128)}\n...(1000 characters truncated)...\n${'c'.repeat(128)}`);
  assert.equal(middleTruncate('short', { head: 128, tail: 128 }), 'short');
  assert.equal(formatToolResult({ ...base, stdout: s }, { style: 'paper', middle: { head: 128, tail: 128 } }), out);
});

test('memory, output limit and internal failures say what happened', () => {
  assert.match(
    formatToolResult({ ...base, status: 'memory', stderr: 'Traceback...\nMemoryError\n', errorType: 'MemoryError' }),
    /^tool call failed\nTraceback/,
  );
  assert.match(
    formatToolResult({ ...base, status: 'output_limit', stdout: 'xxx' }),
    /^tool call failed\noutput limit exceeded/,
  );
  assert.match(
    formatToolResult({ ...base, status: 'internal', errorMessage: 'interpreter died' }),
    /internal error of the code environment: interpreter died/,
  );
  assert.match(formatToolResult({ ...base, status: 'timeout', errorType: 'QueueTimeout' }), /queue timeout/);
});
