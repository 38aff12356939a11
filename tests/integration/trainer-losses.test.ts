// @no-database: runs once, not once per database.
// The trainer's losses and policy metrics (workers/trainer/losses.py) on hand-computed values: the Python unittest
// file tests/python/test_losses.py, run by the interpreter the trainer runs under. Skipped without torch there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { trainerPython } from '../../workers/trainer/python.ts';

const TRAINER_PYTHON = trainerPython();

const ROOT = path.resolve(import.meta.dirname, '../..');
const hasTorch = spawnSync(TRAINER_PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;

test('losses.py: python -m unittest tests/python/test_losses.py passes', { skip: hasTorch ? false : `needs ${TRAINER_PYTHON} with torch` }, () => {
  const r = spawnSync(TRAINER_PYTHON, ['-m', 'unittest', '-v', 'tests/python/test_losses.py'], {
    cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  assert.equal(r.status, 0, `unittest exited ${r.status ?? r.signal}:\n${r.stdout}${r.stderr}`);
  const ran = Number(/^Ran (\d+) tests? /m.exec(r.stderr)?.[1] ?? 0); // unittest reports on stderr
  assert.ok(ran > 0, `no test ran:\n${r.stderr}`); // Python 3.11 calls an empty run OK
});
