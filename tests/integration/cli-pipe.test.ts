// @no-database: runs once, not once per database.
// A command's output arrives whole through a pipe: writes to a pipe are asynchronous, and
// the CLI used to exit before they drained, so `sandbox run` piped into another program lost most of a 1 MiB result.
// Real processes, a real pipe (`| cat`), results of 1 MiB (sandbox) and several MiB (verify --jsonl).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/toolsmith.mjs');
const piped = (args: string, input: string) =>
  spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" ${args} | cat`], {
    cwd: ROOT,
    input,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });

test('sandbox run: a 1 MiB result piped into another program is whole, valid JSON', () => {
  for (let i = 0; i < 3; i++) {
    const r = piped('sandbox run', 'print("x" * 3_000_000)\n');
    const result = JSON.parse(r.stdout) as { status: string; stdout: string };
    assert.equal(result.status, 'output_limit');
    assert.equal(result.stdout.length, 1 << 20);
  }
});

test('verify --jsonl: 60,000 verdicts (several MiB) through a pipe, one line each', () => {
  const input =
    Array.from({ length: 60_000 }, (_, i) => JSON.stringify({ gold: String(i), pred: String(i % 3 ? i : i + 1) })).join(
      '\n',
    ) + '\n';
  const r = piped('verify --jsonl -', input);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(r.stdout.length > 3_000_000, `${r.stdout.length} bytes`);
  const lines = r.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { correct: boolean });
  assert.equal(lines.length, 60_000);
  assert.equal(lines.filter((l) => !l.correct).length, 20_000);
});
