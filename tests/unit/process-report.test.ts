import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { parseStat, stackFrames, whereProcessesAre } from '../../workers/sandbox/process-report.ts';

test('parseStat reads state, parent and nice after a command holding spaces and parentheses', () => {
  const fields = ['S', '41', ...Array.from({ length: 14 }, (_, i) => String(i)), '-20', '1'];
  assert.deepEqual(parseStat(`42 (py (x) y) ${fields.join(' ')}`), {
    comm: 'py (x) y',
    state: 'S',
    ppid: 41,
    nice: -20,
  });
  assert.equal(parseStat('garbage'), null);
});

test('stackFrames keeps the innermost function names', () => {
  const stack = '[<0>] rwsem_down_read_slowpath+0x1a/0x2b\n[<0>] copy_net_ns+0x10/0x20\n[<0>] do_syscall_64+0x1/0x2\n';
  assert.deepEqual(stackFrames(stack, 2), ['rwsem_down_read_slowpath', 'copy_net_ns']);
});

test('whereProcessesAre names a process and the child below it, with their states', {
  skip: process.platform !== 'linux',
}, async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    await new Promise((r) => child.once('spawn', r));
    // Sleeping ("S") once exec'd; read until the child is sleep, not yet the forked node.
    let seen = '';
    for (let i = 0; i < 200 && !/ sleep S /.test(seen); i++) {
      seen = whereProcessesAre(process.pid, 50);
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.match(seen, new RegExp(`^${process.pid} \\S+ [RS] nice -?\\d+ (\\(autogroup-\\d+ nice -?\\d+\\) )?wchan `));
    assert.match(seen, new RegExp(`; ${child.pid} sleep S nice -?\\d+ (\\(autogroup-\\d+ nice -?\\d+\\) )?wchan \\S+`));
    assert.equal(whereProcessesAre(undefined), 'unknown');
  } finally {
    child.kill('SIGKILL');
  }
});
