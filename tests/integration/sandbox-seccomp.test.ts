// @no-database: runs once, not once per database.
// The syscall filter: every call in REFUSED_SYSCALLS, made from inside the sandbox, answers the filter's errno
// (ENOSYS for whole calls; EPERM where only some arguments are refused), and the same call made outside the
// sandbox by an unprivileged process with no filter answers something else, so the refusal is the filter's. So do
// calls named nowhere (the filter is an allow list: syscall-allow.ts), for a few an unprivileged process may make. A
// kernel built without a call (this machine's has no modules, kexec or iopl) answers ENOSYS itself: the test
// says so for those. What a math tool uses still works.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import { ALLOWED_SYSCALLS } from '../../workers/sandbox/syscall-allow.ts';
import { AF_VSOCK, REFUSED_SYSCALLS } from '../../workers/sandbox/syscall-filter.ts';

let pool: SandboxPool;
let answers: Record<string, [number, string]> = {};
let control: Record<string, [number, string]> = {};

/** Calls on neither list that any process may make (a query of its personality, an inotify instance, its CPU, its
 *  extended attributes, locked memory): refused only because the allow list does not name them. */
const UNLISTED = ['personality', 'inotify_init1', 'getcpu', 'getxattr', 'mlock', 'sysfs'];
/** Harmless arguments (null pointers, zeros); prlimit64 on the process's own pid, which the kernel allows. */
function argsFor(name: string): (number | 'SELF')[] {
  if (name === 'socket') return [AF_VSOCK, 1, 0];
  if (name === 'prlimit64') return ['SELF', 7, 0, 0];
  if (name === 'personality') return [0xffffffff, 0, 0];
  if (name === 'sysfs') return [3, 0, 0];
  return [0, 0, 0, 0, 0, 0];
}
const probes = [...REFUSED_SYSCALLS.map((r) => r.name), ...UNLISTED].map((name) => ({ name, args: argsFor(name) }));
const PROBE = String.raw`
import ctypes, errno, json, os, seccomp
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}
for p in ${JSON.stringify(probes)}:
    nr = seccomp.resolve_syscall(seccomp.Arch.NATIVE, p['name'])
    if nr < 0:
        out[p['name']] = [None, 'not on this architecture']
        continue
    ctypes.set_errno(0)
    ret = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(os.getpid() if a == 'SELF' else a) for a in p['args']])
    out[p['name']] = [ret, errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno())) if ret == -1 else 'none']
status = dict(l.split(':\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\t' in l)
out['_seccomp'] = [int(status['Seccomp']), status.get('Seccomp_filters', '').strip()]
print(json.dumps(out))`;

before(async () => {
  pool = await SandboxPool.start({ size: 1, light: false, log: () => {} });
  const r = await pool.run({ code: PROBE, timeoutS: 20 });
  assert.equal(r.status, 'ok', JSON.stringify(r));
  answers = JSON.parse(r.stdout);
  // The control: the same probes with no filter, as an unprivileged user (nobody, when we are root).
  const asNobody =
    process.getuid?.() === 0 ? ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups', '--'] : [];
  const c = spawnSync(
    asNobody[0] ?? pool.opts.python,
    [...asNobody.slice(1), ...(asNobody.length ? [pool.opts.python] : []), '-I', '-c', PROBE],
    { encoding: 'utf8', cwd: '/', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20000 },
  );
  assert.equal(c.status, 0, c.stderr);
  control = JSON.parse(c.stdout);
});

after(async () => {
  await pool?.close();
});

test("the code runs under seccomp filters (mode 2: the zygote's, inherited, and its own)", () => {
  assert.deepEqual(answers._seccomp, [2, '2']);
});

for (const call of REFUSED_SYSCALLS) {
  test(`refused: ${call.name}${call.arg0 !== undefined ? ` (first argument ${call.arg0})` : call.arg0_not !== undefined ? ` (first argument not ${call.arg0_not})` : ''} — ${call.why}`, (t) => {
    const expected = call.errno ?? 'ENOSYS';
    assert.deepEqual(answers[call.name], [-1, expected]);
    const [, without] = control[call.name];
    if (without === 'ENOSYS' && expected === 'ENOSYS')
      t.diagnostic(`this kernel has no ${call.name}: it answers ENOSYS without the filter too`);
    else assert.notEqual(without, expected, 'without the filter the kernel answers otherwise');
  });
}

for (const name of UNLISTED) {
  test(`not on the allow list: ${name} answers ENOSYS, where without the filter it runs or answers otherwise`, () => {
    assert.ok(!ALLOWED_SYSCALLS.includes(name), `${name} is on the allow list`);
    assert.deepEqual(answers[name], [-1, 'ENOSYS']);
    assert.notDeepEqual(control[name], [-1, 'ENOSYS'], 'without the filter the kernel answers otherwise');
  });
}

test('what a math tool uses still works: threads, processes, multiprocessing with shared semaphores, subprocess, memfd, its own rlimits, sockets of its own', async () => {
  const r = await pool.run({
    code: String.raw`
import multiprocessing as mp, os, resource, socket, subprocess, threading
t = threading.Thread(target=lambda: None); t.start(); t.join()
with mp.Pool(2) as pool:
    squares = pool.map(abs, [-1, -2, -3])
lock = mp.Lock(); lock.acquire(); lock.release()
out = subprocess.run(['echo', 'sub'], capture_output=True, text=True).stdout.strip()
fd = os.memfd_create('m'); os.write(fd, b'x')
resource.prlimit(0, resource.RLIMIT_CORE, (0, 0))
a, b = socket.socketpair(); a.send(b'p'); got = b.recv(1).decode()
import numpy, sympy
print(squares, out, got, int(numpy.arange(4).sum()), sympy.factorint(360))`,
    timeoutS: 20,
  });
  assert.equal(r.status, 'ok', JSON.stringify(r));
  assert.equal(r.stdout, '[1, 2, 3] sub p 6 {2: 3, 3: 2, 5: 1}\n');
});
