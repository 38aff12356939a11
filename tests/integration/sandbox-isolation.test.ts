// @no-database: runs once, not once per database.
// The second escape battery: the ways one call could leave something for a later call, reach its zygote, take
// memory past its limit, forge its result, share its random numbers or learn about the host. Each case runs on
// both zygote kinds (light: standard library only; heavy: numpy and sympy preloaded) and is followed by normal
// calls on both kinds and by a snapshot of everything a call can see of the sandbox's state, which must equal the
// snapshot taken before any case ran.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { config } from '../../server/config.ts';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import type { SandboxCall, SandboxResult } from '../../workers/sandbox/types.ts';
import { descendants, ROOT, waitFor } from '../helpers/proc.ts';
import { MEMFD, SYSV_SHM, TMP_PAGES } from '../helpers/memory-attacks.ts';
import { SNAPSHOT } from '../helpers/sandbox-snapshot.ts';

let pool: SandboxPool;
const HEAVY = ['import numpy'];
/** The same call on a light and on a heavy zygote (an import in its history routes it to a heavy one). */
const onBoth = (c: SandboxCall): SandboxCall[] => [c, { ...c, history: [...(c.history ?? []), ...HEAVY] }];

let baseline: string[] = [];
/** The pool's log (why a zygote was replaced), for the failure messages. */
const logs: string[] = [];
async function snapshots() {
  const rs = await pool.runBatch([...onBoth({ code: SNAPSHOT }), ...onBoth({ code: SNAPSHOT })]);
  for (const r of rs) assert.equal(r.status, 'ok', JSON.stringify(r));
  return rs.map((r) => r.stdout);
}

/** 20 normal calls on each kind, then the state snapshot on both kinds equals the one from before any case. */
async function nothingLeft() {
  const calls = Array.from({ length: 20 }, (_, i) => onBoth({ code: `print(${i} * 7)`, input: `in-${i}` })).flat();
  const rs = await pool.runBatch(calls);
  const bad = rs
    .map((r, i) => [i, r] as const)
    .filter(([i, r]) => r.status !== 'ok' || r.stdout !== `${Math.floor(i / 2) * 7}\n`);
  assert.deepEqual(bad, [], 'the next calls succeed');
  assert.deepEqual(await snapshots(), baseline, 'the next calls see the state of a fresh sandbox');
}

/** Run a case on both kinds, check each result, then that nothing of it is visible afterwards. */
async function attack(call: SandboxCall, check: (r: SandboxResult) => void) {
  const restarts = pool.status().restarts;
  for (const c of onBoth(call)) {
    const r = await pool.run(c);
    try {
      check(r);
    } catch (e) {
      throw new Error(`${(e as Error).message}\nresult: ${JSON.stringify(r).slice(0, 3000)}`);
    }
  }
  await nothingLeft();
  assert.equal(
    pool.status().restarts,
    restarts,
    `no zygote was broken by the case (none had to be replaced); pool log: ${logs.join(' | ')}`,
  );
}

before(async () => {
  pool = await SandboxPool.start({ size: 2, healthIntervalMs: 1000, log: (l) => logs.push(l) });
  // As root the pool makes call cgroups (v1 on these machines); the memory cases below need them.
  if (process.getuid?.() === 0)
    assert.ok(['v1', 'v2'].includes(pool.status().cgroup), `call cgroups: ${pool.status().cgroup}`);
  else assert.equal(pool.status().cgroup, 'none');
  baseline = await snapshots();
  const snap = JSON.parse(baseline[0]);
  assert.deepEqual(snap.procs, [], 'no other process: the call is alone in its pid namespace, as its pid 1');
  assert.equal(snap.pid, 1);
  assert.deepEqual(snap.tmp, ['/tmp/work']);
  assert.deepEqual(snap.shm, []);
  assert.equal(snap.hostname, 'sandbox');
  assert.deepEqual(snap.sysv, [-1, -1, -1]);
  assert.equal(snap.mqueue, 2, 'ENOENT');
  assert.deepEqual(snap.proc, ['1', 'self', 'thread-self'], "/proc holds the call's processes only (subset=pid)");
});

after(async () => {
  await pool?.close();
});

test('leftovers: folders chmod-ed 0000/0500 under /tmp and /dev/shm, a 2,000-deep chain, chmod 0 on /tmp/work and /tmp', async () => {
  await attack(
    {
      code: String.raw`
import os
for base in ('/tmp', '/dev/shm'):
    for mode in (0o000, 0o500):
        d = os.path.join(base, 'locked%o' % mode)
        os.mkdir(d)
        open(os.path.join(d, 'secret'), 'w').write('left behind')
        os.chmod(d, mode)
os.chdir('/tmp')
for _ in range(2000):
    os.mkdir('d')
    os.chdir('d')
os.chdir('/tmp')
os.chmod('/tmp/work', 0)
os.chmod('/tmp', 0)
print('planted')`,
    },
    (r) => {
      assert.equal(r.status, 'ok');
      assert.equal(r.stdout, 'planted\n');
    },
  );
});

test("a symlink planted where stdin could be written does not capture a later call's large stdin", async () => {
  await attack(
    {
      code: String.raw`
import os
for p in ('/tmp/work/.stdin', '/tmp/.stdin', '/tmp/work/stdin', '/dev/shm/.stdin', '/tmp/work/.input'):
    os.symlink('/dev/shm/captured', p)
print(sorted(os.listdir('/tmp/work')))`,
    },
    (r) => {
      assert.equal(r.status, 'ok');
    },
  );
  const input = 'abc'.repeat(100_000);
  const rs = await pool.runBatch(
    onBoth({
      code: "import sys, os\ndata = sys.stdin.read()\nprint(len(data), data == 'abc' * 100000, os.path.exists('/dev/shm/captured'), os.listdir('/tmp/work'))",
      input,
    }),
  );
  for (const r of rs) assert.equal(r.stdout, '300000 True False []\n', JSON.stringify(r).slice(0, 500));
});

test('SysV shared memory, message queues and semaphores, POSIX message queues, keyrings and IPC sysctls do not carry over', async () => {
  await attack(
    {
      code: String.raw`
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
IPC_CREAT = 0o1000
shm = libc.shmget(0x7031, 4096, IPC_CREAT | 0o666)
ctypes.memmove(libc.shmat(shm, None, 0), b'secret', 6)
msq = libc.msgget(0x7032, IPC_CREAT | 0o666)
msg = ctypes.create_string_buffer(8 + 6); ctypes.memmove(ctypes.addressof(msg), (1).to_bytes(8, 'little') + b'secret', 14)
sent = libc.msgsnd(msq, msg, 6, 0)
sem = libc.semget(0x7033, 1, IPC_CREAT | 0o666)
mq = libc.mq_open(b'/toolsmith-planted', os.O_CREAT | os.O_RDWR, 0o666, None)
mq_sent = libc.mq_send(mq, b'secret', 6, 0)
keys = [libc.syscall(248, b'user', b'planted', b'secret', 6, ring) for ring in (-4, -5)]  # add_key: user, user-session
keys_errno = ctypes.get_errno()
try:
    open('/proc/sys/kernel/shmmax', 'w').write('4096'); sysctl = 'written'
except OSError as e:
    sysctl = __import__('errno').errorcode[e.errno]  # no /proc/sys in a call's /proc (subset=pid)
print(shm >= 0, sent, msq >= 0, sem >= 0, mq >= 0, mq_sent, keys, keys_errno, sysctl)`,
    },
    (r) => {
      assert.equal(r.status, 'ok');
      assert.equal(
        r.stdout,
        'True 0 True True True 0 [-1, -1] 38 ENOENT\n',
        "created in the call's own IPC namespace; keyrings refused (ENOSYS); no sysctls to write",
      );
    },
  );
});

test("the zygote is out of reach: it has no pid in the call's namespace; signals to pid 1, prlimit, ptrace; a survivor cannot touch the next call", async () => {
  await attack(
    {
      code: String.raw`
import ctypes, os, resource
pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
for s in range(1, 65):
    for pid in (1, -1):
        try:
            os.kill(pid, s)
        except OSError:
            pass
try:
    resource.prlimit(1, resource.RLIMIT_NOFILE, (4, 4)); pl = 'lowered'
except OSError as e:
    pl = e.errno
libc = ctypes.CDLL(None, use_errno=True)
pt = libc.ptrace(16, 1, 0, 0)
print(os.getpid(), os.getppid(), pids, pl, pt, ctypes.get_errno(), flush=True)`,
    },
    (r) => {
      assert.equal(r.status, 'ok');
      // The call is pid 1 of its namespace (its parent, the zygote, is outside it: ppid 0); every signal sent to pid
      // 1 or to all (-1) reaches only the call, which as its namespace's init ignores those it has no handler for;
      // prlimit on any pid but its own (0) is refused (EPERM), ptrace too (ENOSYS).
      assert.equal(r.stdout, '1 0 [1] 1 -1 38\n');
    },
  );
  // A process that tries to outlive its call, to read the next call's stdin and code and to write into its output.
  await attack(
    {
      code: String.raw`
import os, time
if os.fork() == 0:
    os.setsid()
    end = time.time() + 5
    while time.time() < end:
        for p in os.listdir('/proc'):
            if p.isdigit() and int(p) != os.getpid():
                for f in ('fd/0', 'fd/1', 'mem'):
                    try:
                        open('/proc/%s/%s' % (p, f), 'r+b').write(b'FORGED')
                    except OSError:
                        pass
    os._exit(0)
print('spawned')`,
      // Shorter than the survivor's 5 s: a pool that waited for it would answer timeout. Long enough for a busy
      // machine to run the two lines.
      timeoutS: 3,
    },
    (r) => {
      assert.equal(r.status, 'ok');
    },
  );
  const rs = await pool.runBatch(
    Array.from({ length: 10 }, () =>
      onBoth({ code: "import sys\nprint('genuine', sys.stdin.read())", input: 'mine' }),
    ).flat(),
  );
  for (const r of rs) assert.equal(r.stdout, 'genuine mine\n');
});

test('memory is counted however it is taken: SysV shared memory, memfd pages, /tmp pages over a 256 MB limit', async () => {
  await attack(SYSV_SHM, (r) => {
    assert.equal(r.status, 'memory');
    assert.equal(r.errorType, 'MemoryError');
    assert.equal(r.stdout, '');
  });
  await attack(MEMFD, (r) => {
    assert.equal(r.status, 'memory');
    assert.equal(r.stdout, '');
  });
  await attack(TMP_PAGES, (r) => {
    assert.equal(r.status, 'memory');
    assert.equal(r.stdout, '');
  });
});

test('the error-info channel is untrusted: forged or ill-typed reports are dropped', async () => {
  await attack(
    { code: 'import os\nos.write(3, b\'{"type": 123, "line": "x", "message": {"a": 1}}\')\nraise SystemExit(1)' },
    (r) => {
      assert.equal(r.status, 'error');
      assert.equal(r.errorType, null);
      assert.equal(r.errorLine, null);
      assert.equal(r.errorMessage, null);
    },
  );
  await attack(
    {
      code: 'import os\nos.write(3, b\'{"type": "ZeroDivisionError", "line": 1, "message": "forged"}\')\nprint("fine")',
    },
    (r) => {
      assert.equal(r.status, 'ok');
      assert.equal(r.errorType, null);
      assert.equal(r.errorMessage, null);
    },
  );
  await attack(
    { code: 'import os\nos.write(3, b\'{"type": "X\' + b"y" * 500 + b\'", "line": 1, "message": "m"}\')\nos._exit(1)' },
    (r) => {
      assert.equal(r.status, 'error');
      assert.equal(r.errorType, null);
    },
  );
  // A real uncaught exception still reports its type, line and message.
  await attack({ code: 'x = 1\n1 / 0' }, (r) => {
    assert.equal(r.status, 'error');
    assert.equal(r.errorType, 'ZeroDivisionError');
    assert.equal(r.errorLine, 2);
    assert.equal(r.errorMessage, 'division by zero');
  });
});

test('fresh entropy in every call (random, numpy global, default_rng); a seed gives the same numbers on either kind', async () => {
  const light = 'import random\nprint(random.getrandbits(62))';
  const heavy =
    'import random, numpy as np\nprint(random.getrandbits(62), np.random.randint(2**62), np.random.default_rng().integers(2**62), np.random.default_rng().integers(2**62))';
  const rs = await pool.runBatch([
    ...Array.from({ length: 8 }, () => ({ code: light })),
    ...Array.from({ length: 8 }, () => ({ code: heavy })),
  ]);
  for (const r of rs) assert.equal(r.status, 'ok', JSON.stringify(r));
  const values = rs.flatMap((r) => r.stdout.trim().split(' '));
  assert.equal(new Set(values).size, values.length, `every number differs: ${values.join(' ')}`);
  const seeded = await pool.runBatch([
    { code: light, seed: 7 },
    { code: light, seed: 7, history: HEAVY },
    { code: heavy, seed: 7 },
    { code: heavy, seed: 7 },
    { code: heavy, seed: 8 },
  ]);
  const out = seeded.map((r) => r.stdout.trim());
  assert.equal(out[0], out[1], 'the same seed, the same numbers on a light and a heavy zygote');
  assert.equal(out[2], out[3]);
  assert.equal(out[2].split(' ')[0], out[0]);
  assert.notEqual(out[2], out[4]);
  const [, , rng1, rng2] = out[2].split(' ');
  assert.notEqual(rng1, rng2, 'successive unseeded default_rng() differ within a seeded call');
  await nothingLeft();
});

test('a minimal view of the host: fixed hostname, no /sys, no project or host paths, no io_uring, no AF_VSOCK, bounded descriptors', async () => {
  const hidden = [
    ROOT,
    config().dataDir,
    '/opt',
    '/var/log',
    '/etc/postgresql',
    '/home',
    '/root',
    '/srv',
    '/etc/passwd',
    '/etc/hostname',
    '/sys',
  ];
  await attack(
    {
      code: String.raw`
import ctypes, json, os, resource, socket
libc = ctypes.CDLL(None, use_errno=True)
mounts = open('/proc/self/mountinfo').read()
params = ctypes.create_string_buffer(120)
ring = libc.syscall(425, 8, params)
ring_errno = ctypes.get_errno()
try:
    socket.socket(40, socket.SOCK_STREAM); vsock = 'opened'
except OSError as e:
    vsock = e.errno
print(json.dumps({
    'hostname': socket.gethostname(),
    'visible': [p for p in ${JSON.stringify(hidden)} if os.path.exists(p)],
    'in_mounts': [p for p in ${JSON.stringify([ROOT, path.dirname(ROOT), config().dataDir])} if p in mounts],
    'etc': sorted(os.listdir('/etc')),
    'io_uring': [ring, ring_errno], 'vsock': vsock,
    'nofile': resource.getrlimit(resource.RLIMIT_NOFILE),
}))`,
    },
    (r) => {
      assert.equal(r.status, 'ok');
      const v = JSON.parse(r.stdout);
      assert.equal(v.hostname, 'sandbox');
      assert.deepEqual(v.visible, []);
      assert.deepEqual(v.in_mounts, []);
      assert.deepEqual(
        v.etc,
        ['alternatives', 'ld.so.cache', 'localtime'].filter((f) => v.etc.includes(f)),
      );
      assert.deepEqual(v.io_uring, [-1, 38], 'io_uring refused (ENOSYS)');
      assert.equal(v.vsock, 1);
      assert.ok(v.nofile[1] <= 1024, `RLIMIT_NOFILE ${v.nofile}`);
    },
  );
});

test("no cgroup in a call's mount table, nor a descriptor of one: the zygote's folders are never mounted", async () => {
  await attack(
    {
      code: `
import json, os
mounts = [l for l in open('/proc/self/mountinfo').read().splitlines() if 'cgroup' in l or '/run/toolsmith' in l]
fds = {}
for fd in os.listdir('/proc/self/fd'):
    try:
        fds[fd] = os.readlink('/proc/self/fd/' + fd)
    except OSError as e:
        fds[fd] = repr(e)
print(json.dumps({'mounts': mounts, 'fds': fds, 'run': sorted(os.listdir('/run/toolsmith'))}))`,
    },
    (r) => {
      assert.equal(r.status, 'ok');
      const v = JSON.parse(r.stdout);
      assert.deepEqual(v.mounts, [], 'no cgroup mount, covered or not');
      assert.deepEqual(v.run, [], 'nothing under /run/toolsmith');
      const held = Object.entries(v.fds as Record<string, string>).filter(([fd]) => Number(fd) > 3);
      // listdir's own descriptor of /proc/self/fd is the one above 3 (gone by the readlink: an error, not a path).
      assert.ok(held.length <= 1, `descriptors above 3: ${JSON.stringify(held)}`);
      assert.ok(
        !Object.values(v.fds as Record<string, string>).some((t) => t.includes('cgroup')),
        JSON.stringify(v.fds),
      );
    },
  );
});

test('a zygote that cannot prove its state clean is replaced, and the health check tests exactly that', {
  skip: process.getuid?.() !== 0 && 'needs root (nsenter)',
}, async () => {
  // A call cannot outlive its init, so the fault is injected from outside: a root process put into a zygote's pid
  // namespace (nsenter), which the zygote can see but not kill.
  const restarts = pool.status().restarts;
  const zygote = descendants().find(
    (p) => /^\S*python3? -I -c .*\/run\/toolsmith\/zygote\.py/.test(p.args) && !p.args.includes('numpy'),
  );
  assert.ok(zygote, 'found a light zygote');
  const intruder = spawn('nsenter', ['-t', String(zygote.pid), '-p', '--', '/bin/sleep', '60'], { stdio: 'ignore' });
  try {
    await waitFor('the zygote replaced', () => pool.status().restarts > restarts, { timeoutMs: 60000 });
    await waitFor('all interpreters up', () => pool.status().alive === pool.status().interpreters, {
      timeoutMs: 60000,
    });
    await nothingLeft();
    assert.ok(!descendants().some((p) => p.pid === zygote.pid), 'the unclean zygote is gone');
  } finally {
    intruder.kill('SIGKILL');
  }
});
