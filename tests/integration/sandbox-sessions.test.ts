// @no-database: runs once, not once per database.
// Sessions (the recipe's tool.session "trajectory"): a trajectory's calls share one interpreter, its variables,
// imports and files in /tmp, and nothing with any other session or call; a limit ends the session, an exception
// does not; its memory and time limits cover all its calls; and what a session leaves (files, IPC objects, processes,
// chmods) is gone for the next session on the same zygote, as the escape battery checks for calls.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import type { SandboxResult, SandboxSession } from '../../workers/sandbox/types.ts';
import { waitFor } from '../helpers/proc.ts';
import { SNAPSHOT } from '../helpers/sandbox-snapshot.ts';

let pool: SandboxPool;
const logs: string[] = [];
const show = (r: SandboxResult) => JSON.stringify(r).slice(0, 2000);
/** Run `code` in the session and require status ok; returns stdout. */
async function ok(s: SandboxSession, code: string, input?: string) {
  const r = await s.run({ code, input });
  assert.equal(r.status, 'ok', show(r));
  return r.stdout;
}

before(async () => {
  // One zygote for sessions: every session below runs where the one before it ran.
  pool = await SandboxPool.start({ size: 2, maxSessions: 1, log: (l) => logs.push(l) });
});

after(async () => {
  await pool?.close();
});

test('a session keeps variables, imports, functions and files in /tmp across its calls; a fresh call sees none of them', async () => {
  const s = pool.openSession();
  try {
    const first = await s.run({
      code: 'import numpy as np\nx = 41\ndef f(y):\n    return y + 1\nopen("/tmp/keep.txt", "w").write("kept")',
    });
    assert.equal(first.status, 'ok', show(first));
    assert.equal(first.sessionNew, true, 'the first call opens the session');
    assert.equal(first.sessionEnded, false);
    const second = await s.run({ code: 'print(f(x), np.__name__, open("/tmp/keep.txt").read())' });
    assert.equal(second.stdout, '42 numpy kept\n', show(second));
    assert.equal(second.sessionNew, false, 'the second call continues it');
    assert.equal(await ok(s, 'x * 2'), '82\n', 'a last expression is echoed, as in a fresh call');
    assert.equal(await ok(s, 'print(input()[::-1])', 'olleh'), 'hello\n', "each call's input is its stdin");
    assert.equal(
      await ok(s, 'import sys\nprint(sys.stdin.read() == "")'),
      'True\n',
      'a call without input reads nothing',
    );
    // Code larger than a pipe's buffer reaches the session whole.
    assert.equal(await ok(s, `big = "${'a'.repeat(200_000)}"\nprint(len(big), x)`), '200000 41\n');
    const fresh = await pool.run({ code: 'import os\nprint(os.path.exists("/tmp/keep.txt"), "x" in globals())' });
    assert.equal(fresh.stdout, 'False False\n', show(fresh));
    assert.equal(fresh.sessionNew, undefined, 'a fresh call is no session call');
  } finally {
    await s.close();
  }
  const closed = await s.run({ code: 'print(1)' });
  assert.equal(closed.status, 'internal');
  assert.match(closed.stderr, /session is closed/);
});

test('an exception does not end the session; a timeout does, the result says so, and the next call starts a new one', async () => {
  const s = pool.openSession();
  try {
    await ok(s, 'y = 1');
    const err = await s.run({ code: 'z = 2\n1 / 0' });
    assert.equal(err.status, 'error', show(err));
    assert.equal(err.errorType, 'ZeroDivisionError');
    assert.equal(err.errorLine, 2);
    assert.match(err.stderr, /ZeroDivisionError/);
    assert.equal(err.sessionEnded, false);
    assert.equal(await ok(s, 'print(y, z)'), '1 2\n', 'the state before the error is kept');
    const exit = await s.run({ code: 'raise SystemExit(3)' });
    assert.equal(exit.status, 'error', show(exit));
    assert.equal(exit.exitCode, 3);
    assert.equal(await ok(s, 'print(y)'), '1\n', 'SystemExit ends the call, not the session');
    const slow = await s.run({ code: 'import time\ntime.sleep(60)', timeoutS: 0.5 });
    assert.equal(slow.status, 'timeout', show(slow));
    assert.equal(slow.sessionEnded, true);
    const next = await s.run({ code: 'print("y" in globals())' });
    assert.equal(next.stdout, 'False\n', show(next));
    assert.equal(next.sessionNew, true, 'a new session');
  } finally {
    await s.close();
  }
});

test("the session's time covers all its calls: a call gets only the time the session has left", async () => {
  const s = pool.openSession({ timeS: 3 });
  try {
    assert.equal((await s.run({ code: 'import time\ntime.sleep(1)\nprint("slept")', timeoutS: 10 })).stdout, 'slept\n');
    const over = await s.run({ code: 'time.sleep(2.5)\nprint("slept again")', timeoutS: 10 });
    assert.equal(over.status, 'timeout', `2.5 s more is past the session's 3 s: ${show(over)}`);
    assert.equal(over.sessionEnded, true);
  } finally {
    await s.close();
  }
});

test("the session's memory limit covers all its calls: what earlier calls keep counts against later ones", async () => {
  const s = pool.openSession();
  const hold = (n: number) =>
    `import os\nfds = globals().setdefault('fds', [])\nfor i in range(${n}):\n    fd = os.memfd_create('m')\n    for _ in range(64):\n        os.write(fd, b'z' * (1 << 20))\n    fds.append(fd)\nprint(len(fds))`;
  try {
    const first = await s.run({ code: hold(2), memoryMb: 256, timeoutS: 60 });
    assert.equal(first.stdout, '2\n', show(first));
    const second = await s.run({ code: hold(3), memoryMb: 256, timeoutS: 60 });
    assert.equal(second.status, 'memory', `128 MB held and 192 MB more is past 256 MB: ${show(second)}`);
    assert.equal(second.sessionEnded, true);
    // Alone, the second call's 192 MB fits: only the session's total went over.
    assert.equal((await s.run({ code: hold(3), memoryMb: 256, timeoutS: 60 })).stdout, '3\n');
  } finally {
    await s.close();
  }
});

test('two sessions at once share nothing: variables, /tmp, processes, IPC objects', async () => {
  const two = await SandboxPool.start({ size: 2, maxSessions: 2, log: (l) => logs.push(l) });
  const a = two.openSession();
  const b = two.openSession();
  try {
    const planted = await ok(
      a,
      `
import ctypes, os, subprocess, sys
secret = 7
open('/tmp/a.txt', 'w').write('a')
sleeper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])
libc = ctypes.CDLL(None, use_errno=True)
print(libc.shmget(0x7041, 4096, 0o1000 | 0o666) >= 0)`,
    );
    assert.equal(planted, 'True\n');
    const seen = await ok(
      b,
      `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print('secret' in globals(), os.path.exists('/tmp/a.txt'), sorted(int(p) for p in os.listdir('/proc') if p.isdigit()), libc.shmget(0x7041, 0, 0))`,
    );
    assert.equal(seen, 'False False [1] -1\n', 'b sees only itself (pid 1 of its namespace)');
    assert.equal(await ok(a, 'print(sleeper.poll(), secret)'), 'None 7\n', "a's process lives on between its calls");
    assert.equal(two.status().sessions.open, 2);
  } finally {
    await a.close();
    await b.close();
    await two.close();
  }
});

test('a session beyond maxSessions waits for one to end', async () => {
  const a = pool.openSession();
  const b = pool.openSession();
  try {
    await ok(a, 'v = "a"');
    let bDone = false;
    const bRun = b.run({ code: 'print("v" in globals())' }).then((r) => {
      bDone = true;
      return r;
    });
    await waitFor('the second session to wait for a zygote', () => pool.status().sessions.waiting === 1);
    assert.equal(bDone, false);
    await a.close();
    const r = await bRun;
    assert.equal(r.stdout, 'False\n', `b runs on the zygote a gave back, from a clean state: ${show(r)}`);
  } finally {
    await a.close();
    await b.close();
  }
});

test('a session idle for idleS ends and gives its zygote back; its next call starts a new one', async () => {
  const s = pool.openSession({ idleS: 0.2 });
  try {
    await ok(s, 'kept = 1');
    await waitFor('the idle session to end', () => pool.status().sessions.open === 0);
    const r = await s.run({ code: 'print("kept" in globals())' });
    assert.equal(r.stdout, 'False\n', show(r));
    assert.equal(r.sessionNew, true);
  } finally {
    await s.close();
  }
});

test('what a session leaves is gone for the next session and for calls: files, chmods, IPC objects, processes, limits', async () => {
  const snapshotIn = async () => {
    const s = pool.openSession();
    try {
      return JSON.parse(await ok(s, SNAPSHOT));
    } finally {
      await s.close();
    }
  };
  const freshBefore = (await pool.run({ code: SNAPSHOT })).stdout;
  const before = await snapshotIn();
  assert.deepEqual(before.procs, [], 'a session is alone in its pid namespace');
  assert.deepEqual(before.tmp, ['/tmp/work']);
  const restarts = pool.status().restarts;
  const s = pool.openSession();
  try {
    await ok(
      s,
      `
import ctypes, os, resource, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
for base in ('/tmp', '/dev/shm'):
    d = os.path.join(base, 'locked')
    os.mkdir(d)
    open(os.path.join(d, 'secret'), 'w').write('left behind')
    os.chmod(d, 0)
libc.shmget(0x7031, 4096, 0o1000 | 0o666)
libc.msgget(0x7032, 0o1000 | 0o666)
libc.semget(0x7033, 1, 0o1000 | 0o666)
libc.mq_open(b'/toolsmith-planted', os.O_CREAT | os.O_RDWR, 0o666, None)
survivor = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], start_new_session=True)`,
    );
    // A second call builds on the first (the survivor is still there), then spoils what it can of its process.
    await ok(
      s,
      `
assert survivor.poll() is None
resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))
os.chmod('/tmp/work', 0)
os.chmod('/tmp', 0)`,
    );
  } finally {
    await s.close();
  }
  assert.deepEqual(await snapshotIn(), before, 'the next session sees the state of a fresh one');
  assert.equal((await pool.run({ code: SNAPSHOT })).stdout, freshBefore, 'and so does a fresh call');
  assert.equal(pool.status().restarts, restarts, `no zygote was replaced; pool log: ${logs.join(' | ')}`);
});
