import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRecord, nextDelay } from '../../scripts/supervisor.mjs';
import { readSupervisor } from '../../server/system/supervisor.ts';

test('restart back-off: 1 s doubling to 60 s while the worker dies young; reset after a healthy run', () => {
  const delays: number[] = [];
  let d: number | null = null;
  for (let i = 0; i < 9; i++) delays.push((d = nextDelay(d, 500)));
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
  assert.equal(nextDelay(60000, 5 * 60_000), 1000, 'a worker that ran five minutes starts the back-off again');
});

test('the record the start script writes is what the System page reads; a corrupt file reads as none', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-supervisor-'));
  try {
    assert.equal(readSupervisor(dir), null);
    const r = createRecord(dir, 4242, 1000);
    r.started(11, 1100);
    r.died({ pid: 11, exit: 'SIGKILL', ranMs: 900, delayMs: 1000, at: 2000 });
    let s = readSupervisor(dir)!;
    assert.deepEqual(s.worker, { state: 'waiting', pid: null, startedAt: null, nextStartAt: 3000 });
    assert.equal(s.restarts, 1);
    assert.deepEqual(s.recent, [{ at: 2000, pid: 11, exit: 'SIGKILL', ranMs: 900, delayMs: 1000 }]);
    r.started(12, 3000);
    s = readSupervisor(dir)!;
    assert.equal(s.worker.pid, 12);
    assert.equal(s.worker.state, 'running');
    fs.writeFileSync(path.join(dir, 'supervisor.json'), '{"version": 1, "oops"');
    assert.equal(readSupervisor(dir), null);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
