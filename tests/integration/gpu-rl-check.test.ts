// @no-database: runs once (the check's CLI gets a SQLite file of its own). `npm run check:gpu-rl`
// (scripts/check-gpu-rl.ts) as a researcher runs it: without a GPU it refuses before training, naming what is
// missing; --cpu-smoke trains the micro recipe through `npx toolsmith train` on the CPU and prints the one JSON line
// a GPU run prints; a run past --timeout-s is stopped and reported as such.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { trainerPython } from '../../workers/trainer/python.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PY = trainerPython();
const ready = spawnSync(PY, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
const skip = ready ? false : `needs ${PY} with torch (node scripts/setup.mjs builds it)`;
const hasGpu =
  ready && spawnSync(PY, ['-c', 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)']).status === 0;

let dir = '';
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpu-rl-check-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function check(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/check-gpu-rl.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, TOOLSMITH_DATA_DIR: dir, DATABASE_URL: '' },
    encoding: 'utf8',
    timeout: 240_000,
  });
  const lines = r.stdout.trim().split('\n').filter(Boolean);
  return { code: r.status, lines, err: r.stderr };
}

test('without a GPU it refuses before training, exit 2, naming what is missing', {
  skip: skip || (hasGpu ? 'this machine has a GPU' : false),
}, () => {
  const r = check();
  assert.equal(r.code, 2, r.err);
  assert.deepEqual(r.lines, [], 'no JSON line: nothing was trained');
  assert.match(r.err, /refused: no CUDA GPU/);
  assert.match(r.err, /torch\.cuda\.is_available\(\) is False/);
  // The worker's preflight too, on this fresh data folder: the model and the dataset, each with its fix.
  assert.match(
    r.err,
    /refused: model\.name: no model "smollm2-135m-instruct" .*npx toolsmith model fetch smollm2-135m-instruct/,
  );
  assert.match(r.err, /refused: dataset "rg-arithmetic": not stored here .*npx toolsmith dataset add rg-arithmetic/);
  assert.ok(!fs.existsSync(path.join(dir, 'runs')), 'no run was started');
});

test('--cpu-smoke: the same path on the CPU, one JSON line with each stage and the RL rates', { skip }, () => {
  const r = check('--cpu-smoke');
  assert.equal(r.code, 0, r.err.slice(-3000));
  assert.equal(r.lines.length, 1, `one JSON line on stdout, got:\n${r.lines.join('\n')}`);
  const out = JSON.parse(r.lines[0]!) as Record<string, unknown> & { stages: Record<string, unknown>[] };
  assert.equal(out.check, 'gpu-rl');
  assert.equal(out.device, 'cpu');
  assert.equal(out.status, 'succeeded');
  assert.equal(out.withinLimit, true);
  assert.ok(Number(out.wallS) > 0 && Number(out.wallS) <= 600, `wall ${out.wallS}`);
  // The micro recipe shortened to 16 demonstrations of 4 = 4 SFT steps, then its 2 RL steps.
  assert.deepEqual(
    out.stages.map((s) => [s.name, s.type, s.steps]),
    [
      ['sft', 'sft', 4],
      ['rl', 'rl', 2],
    ],
  );
  for (const s of out.stages) {
    assert.ok(Number(s.pass1) >= 0 && Number(s.pass1) <= 1, `${s.name} pass@1 ${s.pass1}`);
    assert.ok(Array.isArray(s.pass1Ci), `${s.name} has its interval`);
    assert.ok(Number(s.wallS) > 0, `${s.name} wall ${s.wallS}`);
  }
  const rl = out.stages[1]!;
  assert.ok(Number(rl.rolloutTokensPerS) > 0, `rollout tokens/s ${rl.rolloutTokensPerS}`);
  assert.ok(Number(rl.meanStepS) > 0, `mean step ${rl.meanStepS}`);
  assert.ok(out.paired !== null, 'the paired difference, SFT → RL');
});

test('a run past --timeout-s is stopped, reported with timedOut, exit 1', { skip }, () => {
  const r = check('--cpu-smoke', '--timeout-s', '3');
  assert.equal(r.code, 1, r.err.slice(-3000));
  const out = JSON.parse(r.lines.at(-1)!) as Record<string, unknown>;
  assert.equal(out.timedOut, true);
  assert.equal(out.withinLimit, false);
  assert.notEqual(out.status, 'succeeded');
});
