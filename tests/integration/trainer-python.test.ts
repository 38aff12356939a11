// @no-database: runs once, not once per database.
// The trainer's Python unit tests, run by the interpreter the trainer runs under (skipped without torch there):
//   tests/python/test_losses.py  the losses and policy metrics (workers/trainer/losses.py) on hand-computed values;
//   tests/python/test_lora.py    LoRA through peft: adapter-only updates, merged export, adapter checkpoints;
//   and the others in the folder (the checkpoint metadata reader, the sandbox's reading of a call's memory and its
//   OOM reserves against a real cgroup).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { trainerPython } from '../../workers/trainer/python.ts';

const TRAINER_PYTHON = trainerPython();

const ROOT = path.resolve(import.meta.dirname, '../..');
const hasTorch = spawnSync(TRAINER_PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
const FILES = fs
  .readdirSync(path.join(ROOT, 'tests/python'))
  .filter((f) => /^test_.*\.py$/.test(f))
  .sort();

test('there are Python unit tests to run', () =>
  assert.ok(FILES.includes('test_losses.py') && FILES.includes('test_lora.py'), FILES.join(', ')));

for (const f of FILES) {
  test(`python -m unittest tests/python/${f} passes`, {
    skip: hasTorch ? false : `needs ${TRAINER_PYTHON} with torch`,
  }, () => {
    const r = spawnSync(TRAINER_PYTHON, ['-m', 'unittest', '-v', `tests/python/${f}`], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 300_000,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', TOOLSMITH_TRAINER_THREADS: '1' },
    });
    assert.equal(r.status, 0, `unittest exited ${r.status ?? r.signal}:\n${r.stdout}${r.stderr.slice(-4000)}`);
    const ran = Number(/^Ran (\d+) tests? /m.exec(r.stderr)?.[1] ?? 0); // unittest reports on stderr
    assert.ok(ran > 0, `no test ran:\n${r.stderr}`); // Python 3.11 calls an empty run OK
  });
}
