// @no-database: runs once, not once per database.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { after, before, test } from 'node:test';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import type { SandboxCall } from '../../workers/sandbox/types.ts';
import { descendants, waitFor } from '../helpers/proc.ts';

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

/**
 * A call that runs until the test lets it go, so that the test knows a call is running instead of guessing from a
 * clock: it names its process `ts-held` (the host reads /proc/PID/comm), then waits for its nice value to change,
 * which only the test does, from outside (release). Standard library only: it runs on a light zygote.
 */
const held = (out: string): SandboxCall => ({
  code: `import os, time
start = os.getpriority(os.PRIO_PROCESS, 0)
open('/proc/self/comm', 'w').write('ts-held')
while os.getpriority(os.PRIO_PROCESS, 0) == start:
    time.sleep(0.01)
print(${JSON.stringify(out)})`,
  timeoutS: 60,
});
/** The held calls of this process's pools that are running now. */
function heldCalls() {
  return descendants().filter((p) => {
    try {
      return fs.readFileSync(`/proc/${p.pid}/comm`, 'utf8').trim() === 'ts-held';
    } catch {
      return false; // gone
    }
  });
}
/** Let a held call finish: change its nice value (as root, either way). */
function release(pid: number) {
  try {
    const nice = os.getPriority(pid);
    os.setPriority(pid, nice === 19 ? 18 : nice + 1);
  } catch {
    /* already gone */
  }
}

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
  // Submitted together: the long call starts at once in the light zygote and the short one waits inside it, behind
  // it. The long one runs 2 s from its submission at the earliest, so the short one waits longer than its own 1.5 s
  // timeout: were the wait counted against that timeout, it would time out.
  const long = pool.run({ code: 'import time\ntime.sleep(2.0)\nprint("long")', timeoutS: 30 });
  const short = pool.run({ code: 'import time\ntime.sleep(0.1)\nprint("short")', timeoutS: 1.5 });
  const [a, b] = await Promise.all([long, short]);
  assert.equal(a.status, 'ok');
  assert.equal(b.status, 'ok', `queued call: ${JSON.stringify(b)}`);
  assert.equal(b.stdout, 'short\n');
  assert.ok(b.queueMs > 1500, `queueMs ${b.queueMs} includes the wait behind the long call`);
});

test('a deadline covers the wait: a call that cannot start before it is answered QueueTimeout, never run', async () => {
  // Submitted together: the light zygote is busy with the long call for 1 s from now, past the other's deadline.
  const long = pool.run({ code: 'import time\ntime.sleep(1.0)\nprint("long")', timeoutS: 30 });
  const late = await pool.run({ code: 'print("should not run")' }, { deadline: Date.now() + 300 });
  assert.equal(late.status, 'timeout');
  assert.equal(late.errorType, 'QueueTimeout');
  assert.equal(late.stdout, '');
  assert.equal((await long).status, 'ok');
});

test('a zygote killed with two calls in it: both are retried on its replacement and answered once each', async () => {
  const before = pool.status();
  // The first call runs in the light zygote and the second waits inside it (one busy at a time); both are held until
  // released, so the zygote is killed with them in it however slowly the machine runs them.
  const calls = [0, 1].map((i) => pool.run(held(String(i))));
  const running = await waitFor(
    'the first call to run',
    () => {
      const h = heldCalls();
      return h.length ? h : null;
    },
    { timeoutMs: 60_000 },
  );
  assert.equal(running.length, 1, 'one call at a time runs in the zygote');
  // Kill the light zygote from outside: the call's parent (the call is pid 1 of a pid namespace the zygote made).
  const zygote = descendants().find((p) => p.pid === running[0]!.ppid);
  assert.ok(
    zygote && /\/run\/toolsmith\/zygote\.py/.test(zygote.args) && !zygote.args.includes('numpy'),
    `the held call's parent is the light zygote: ${JSON.stringify(zygote)}`,
  );
  process.kill(zygote.pid, 'SIGKILL');
  // Each call is retried on a fresh zygote, where it is held again: let every held call go until both are answered.
  let answered = false;
  const all = Promise.all(calls).finally(() => {
    answered = true;
  });
  await waitFor(
    'both calls to be answered',
    () => {
      for (const p of heldCalls()) release(p.pid);
      return answered;
    },
    { timeoutMs: 120_000 },
  );
  const results = await all;
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

/**
 * This process's light zygotes but those in `old`: the Python processes of a light zygote's command whose parent is
 * one too (bwrap's first process forks the zygote and stays behind, with the same command line).
 */
function lightZygotes(old: { pid: number }[] = []) {
  const all = descendants().filter(
    (p) => /^\S*python/.test(p.args) && /\/run\/toolsmith\/zygote\.py/.test(p.args) && !p.args.includes('numpy'),
  );
  return all.filter((p) => all.some((q) => q.pid === p.ppid) && !old.some((o) => o.pid === p.pid));
}

test('a zygote that stops answering is replaced by the health check, and the log says where its processes were; one that dies while a ping is out to it is replaced too', async (t) => {
  const logs: string[] = [];
  // The other pool's, once all of them are up (the test before killed one): the rest are this pool's.
  await waitFor('the other pool up', () => pool.status().alive === pool.status().interpreters);
  const others = lightZygotes();
  const own = await SandboxPool.start({ size: 1, healthIntervalMs: 200, log: (l) => logs.push(l) });
  const allUp = () => own.status().alive === own.status().interpreters;
  try {
    const [zygote] = lightZygotes(others);
    assert.ok(zygote, 'a light zygote runs');
    // Stopped, it cannot answer a ping, as one hung would.
    process.kill(zygote.pid, 'SIGSTOP');
    const line = await waitFor(
      'the health check to replace it',
      () => logs.find((l) => l.includes('did not answer a health check')),
      {
        detail: () =>
          `stopped ${JSON.stringify(zygote)}; other pool's: ${JSON.stringify(others)}; now: ${JSON.stringify(lightZygotes())}; pool: ${JSON.stringify(own.status())}; log: ${logs.join(' | ')}`,
      },
    );
    t.diagnostic(line);
    // Stopped ("T"): the line tells a zygote stopped or blocked in the kernel from one busy in Python.
    assert.match(
      line,
      new RegExp(`its processes: .*\\b${zygote.pid} python3 T nice -?\\d+ (\\(autogroup-\\d+ nice -?\\d+\\) )?wchan `),
    );
    await waitFor('a replacement', () => own.status().restarts >= 1 && allUp());
    assert.equal((await own.run({ code: 'print(6 * 7)' })).stdout, '42\n');

    // The replacement, stopped until a ping is out to it (pings go every 200 ms and wait 5 s), then killed from
    // outside: its exit comes while the health check holds the slot, which must still get a new zygote. (Killed
    // by the health check itself, a later check's ping can be out the same way: how a fresh-clone run left a
    // slot empty for good.)
    const restarts = own.status().restarts;
    const [next] = lightZygotes([...others, zygote]);
    assert.ok(next && next.pid !== zygote.pid, 'a new light zygote runs');
    process.kill(next.pid, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, 1500));
    const bwrap = descendants().find((p) => p.pid === descendants().find((q) => q.pid === next.ppid)?.ppid);
    assert.match(bwrap?.args ?? '', /bwrap/, 'the zygote runs under bwrap');
    process.kill(bwrap!.pid, 'SIGKILL');
    await waitFor('its replacement', () => own.status().restarts > restarts && allUp(), {
      detail: () => `pool: ${JSON.stringify(own.status())}; log: ${logs.join(' | ')}`,
    });
    assert.equal((await own.run({ code: 'print(6 * 7)' })).stdout, '42\n');
  } finally {
    await own.close();
  }
});
