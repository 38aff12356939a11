import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { verifyCommand } from '../../cli/verify.ts';

async function capture(fn: () => Promise<number | void>): Promise<{ code: number | void; out: string }> {
  const origLog = console.log;
  let out = '';
  console.log = (...a: unknown[]) => {
    out += `${a.join(' ')}\n`;
  };
  try {
    return { code: await fn(), out };
  } finally {
    console.log = origLog;
  }
}

test('verify --gold --pred prints the verdict and exits 0 / 1', async () => {
  const a = await capture(() =>
    verifyCommand.run(['--gold', '\\frac{1}{2}', '--pred', '<answer>\\boxed{0.5}</answer>']),
  );
  assert.equal(a.code, 0);
  assert.deepEqual(JSON.parse(a.out), {
    correct: true,
    method: 'numeric',
    extracted: '0.5',
    reason: '0.5 ≈ 0.5 (within rel 1e-8, abs 1e-9)',
  });
  const b = await capture(() => verifyCommand.run(['--gold', '3', '--pred', 'x = 4']));
  assert.equal(b.code, 1);
  assert.equal(JSON.parse(b.out).correct, false);
});

test('verify --jsonl FILE writes one verdict per line', async () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'verify-')), 'in.jsonl');
  fs.writeFileSync(
    file,
    [
      { gold: '3', pred: 'x=3' },
      { gold: 'x^2-1', pred: '(x-1)(x+1)' },
      { gold: '4', pred: '<think>no</think>' },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  // --timeout-ms: the symbolic check's limit (2 s by default) is not what this tests; generous, so that a check stalled
  // on a busy machine is still decided by what it computes.
  const r = await capture(() => verifyCommand.run(['--jsonl', file, '--timeout-ms', '60000']));
  assert.equal(r.code, 0);
  const lines = r.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(lines, [
    { correct: true, method: 'exact', extracted: 'x=3' },
    { correct: true, method: 'symbolic', extracted: '(x-1)(x+1)' },
    { correct: false, method: 'none', extracted: null },
  ]);
});

test('verify rejects bad options', async () => {
  await assert.rejects(verifyCommand.run([]), /needs --gold/);
  await assert.rejects(verifyCommand.run(['--gold', '1']), /go together/);
  await assert.rejects(verifyCommand.run(['--gold', '1', '--pred', '1', '--mode', 'x']), /--mode/);
});

test('verify --explain: every step of the cascade with its decision, after the verdict', async () => {
  const r = await capture(() =>
    verifyCommand.run(['--gold', '1000000007', '--pred', '<answer>\\boxed{1000000008}</answer>', '--explain']),
  );
  assert.equal(r.code, 1);
  const [json, ...lines] = r.out.trimEnd().split('\n');
  const v = JSON.parse(json!) as { correct: boolean; steps: { step: string; detail: string }[] };
  assert.equal(v.correct, false);
  assert.deepEqual(
    v.steps.map((s) => s.step),
    ['extract', 'normalise', 'exact', 'verdict'],
  );
  assert.match(v.steps[2]!.detail, /not equal: 1000000007 ≠ 1000000008 \(integers compare exactly\)/);
  assert.deepEqual(
    lines.map((l) => l.trim().split(/\s+/)[0]),
    ['extract', 'normalise', 'exact', 'verdict'],
  );
  const sym = await capture(() =>
    verifyCommand.run(['--gold', 'x^2-1', '--pred', '(x-1)(x+1)', '--explain', '--timeout-ms', '60000']),
  );
  assert.deepEqual(
    (JSON.parse(sym.out.split('\n')[0]!) as { steps: { step: string }[] }).steps.map((s) => s.step),
    ['extract', 'normalise', 'symbolic', 'verdict'],
  );
});
