// @no-database: runs once, not once per database.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import { descendants } from '../helpers/proc.ts';

/**
 * Scheduling inside the pool: light and heavy zygotes, a call queued inside a busy zygote behind another,
 * and deadlines that cover all waiting. A pool of size 1: one heavy and one light zygote, one busy at a time.
 */
let pool: SandboxPool;
before(async () => {
  pool = await SandboxPool.start({ size: 1, log: () => {} });
});
after(async () => {
  await pool.close();
});

test('light and heavy calls both run, each with its modules', async () => {
  assert.equal(pool.status().interpreters, 2);
  const [light, heavy, dynamic] = await pool.runBatch([
    { code: 'import math, sys\nprint(math.comb(10, 3), "numpy" in sys.modules)' },
    { code: 'import numpy, sys\nprint(int(numpy.arange(5).sum()), "sympy" in sys.modules)' },
    { code: 'np = __import__("numpy")\nprint(np.int64(7) * 6)' },
  ]);
  // The light zygote never imported numpy; the heavy one had sympy preloaded.
  assert.equal(light.stdout, '120 False\n');
  assert.equal(heavy.stdout, '10 True\n');
  assert.equal(dynamic.stdout, '42\n');
});

test('a call queued inside a zygote behind a long one still gets its whole timeout, and its wait counts as queue time', async () => {
  const long = pool.run({ code: 'import time\ntime.sleep(1.0)\nprint("long")', timeoutS: 3 });
  await new Promise((r) => setTimeout(r, 100));
  const short = pool.run({ code: 'import time\ntime.sleep(0.3)\nprint("short")', timeoutS: 0.6 });
  const [a, b] = await Promise.all([long, short]);
  assert.equal(a.status, 'ok');
  assert.equal(b.status, 'ok', `queued call: ${JSON.stringify(b)}`);
  assert.equal(b.stdout, 'short\n');
  assert.ok(b.queueMs >= 700, `queueMs ${b.queueMs} includes the wait behind the long call`);
});

test('a deadline covers the wait: a call that cannot start before it is answered QueueTimeout, never run', async () => {
  const long = pool.run({ code: 'import time\ntime.sleep(1.0)\nprint("long")', timeoutS: 3 });
  await new Promise((r) => setTimeout(r, 100));
  const late = await pool.run({ code: 'print("should not run")' }, { deadline: Date.now() + 300 });
  assert.equal(late.status, 'timeout');
  assert.equal(late.errorType, 'QueueTimeout');
  assert.equal(late.stdout, '');
  assert.equal((await long).status, 'ok');
});

test('a zygote killed with two calls in it: both are retried on its replacement and answered once each', async () => {
  const before = pool.status();
  const calls = [0, 1].map((i) => pool.run({ code: `import os, time\ntime.sleep(0.5)\nprint(${i})`, timeoutS: 3 }));
  await new Promise((r) => setTimeout(r, 200));
  // Kill the light zygote from outside (it is busy with the first call; the second waits inside it).
  // This pool's light zygote: a descendant of this process running zygote.py without numpy preloaded.
  const pids = descendants()
    .filter(
      (p) =>
        p.args.startsWith('/usr/bin/python3 -I -c ') &&
        p.args.includes('/run/toolsmith/zygote.py') &&
        !p.args.includes('numpy'),
    )
    .map((p) => p.pid);
  assert.ok(pids.length >= 1, 'found the light zygote');
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  const results = await Promise.all(calls);
  assert.deepEqual(
    results.map((r) => [r.status, r.stdout]),
    [
      ['ok', '0\n'],
      ['ok', '1\n'],
    ],
  );
  const now = pool.status();
  assert.ok(now.retries >= before.retries + 1, 'retried');
  assert.ok(now.restarts > before.restarts, 'replaced');
});
