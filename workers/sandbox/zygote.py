"""Toolsmith sandbox zygote.

Runs inside bubblewrap (see workers/sandbox/bwrap.ts) as an unprivileged user with no network, on a minimal
root. It imports the heavy modules once, then serves calls one at a time. Each call gets namespaces of its own
(docs in README "Code environment"): a pid namespace whose pid 1 is the call's own process, so the code cannot
see, signal, prlimit or ptrace the zygote, and every process of the call dies with that process; a mount
namespace with a fresh /proc, /tmp and /dev/shm, so nothing written survives the call whatever its permission bits
or depth; an IPC namespace, so SysV IPC and POSIX message queues die with it; a memory and pids cgroup that charges
memfd, shared memory and tmpfs pages. The code's own process (run_child) drops every capability and loads a seccomp
filter built by libseccomp before it runs. Before each call the zygote checks that no process of an earlier call is
left; one that cannot prove that exits and the pool replaces it.

One file on purpose: the pool sends this source on stdin as the first line (bwrap.ts, ZYGOTE_BOOT), so no host path
of it is mounted (the mount table would show it).

Protocol: one JSON object per line on stdin (requests) and stdout (responses), after the boot line.
  request  {"id", "code", "input", "timeout", "memory_mb", "max_output", "history": [code, ...], "seed": int|null}
  response {"id", "status", "stdout", "stderr", "exit_code", "error_type", "error_line", "error_message",
            "duration_ms", "stdout_truncated", "stderr_truncated"}
  request  {"id", "ping": true}  ->  {"id", "pong": true, "pid", "leftover", "clean"}
"""
import ast
import tempfile
import ctypes
import fcntl
import errno
import json
import os
import resource
import select
import signal
import sys
import time
import traceback

LIBC = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 16384, 1 << 18
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID = 0x20000, 0x08000000, 0x20000000


def check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, '%s: %s' % (what, os.strerror(err)))


def set_every_signal(handler, keep=frozenset()):
    """Give every signal that can be set, but those in keep, this handler (SIG_IGN, SIG_DFL)."""
    for s in signal.valid_signals():
        if s not in keep:
            try:
                signal.signal(s, handler)
            except (OSError, ValueError):
                pass


def enter_base_pid_namespace():
    """Move the zygote into a pid namespace of its own making. bwrap's pid namespace belongs to bwrap's outer user
    namespace, where the zygote holds no capability, so it could not setns back into it after creating a call's
    namespace; this one belongs to the sandbox's user namespace. Called before the heavy imports: the process left
    behind as bwrap's pid 1 only waits for the zygote and exits as it does. Returns a descriptor of the namespace."""
    check(LIBC.unshare(CLONE_NEWPID), 'unshare(CLONE_NEWPID)')
    pid = os.fork()
    if pid:
        set_every_signal(signal.SIG_IGN, keep={signal.SIGCHLD})
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # waitpid needs it not ignored
        while True:
            try:
                _, st = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        code = os.waitstatus_to_exitcode(st)
        os._exit(code if code >= 0 else 128 - code)
    return os.open('/proc/self/ns/pid', os.O_RDONLY | os.O_CLOEXEC)


if os.environ.get('TOOLSMITH_SANDBOX_ISOLATED') == '1':
    BASE_PID_NS = enter_base_pid_namespace()

# Pre-imported so that each call's fork starts with them loaded (the point of the zygote). The heavy list is a
# pool setting (argv[1]): every module preloaded makes each fork dearer (fork time grows with the zygote's
# memory), so scipy's big submodules are imported on first use by default.
import math, cmath, fractions, decimal, itertools, functools, collections, random, re, statistics, string  # noqa: E401,F401
import importlib
for _name in (sys.argv[1] if len(sys.argv) > 1 else 'numpy,sympy,scipy,scipy.special').split(','):
    if _name:
        importlib.import_module(_name)
if 'sympy' in sys.modules:
    # Warm sympy's caches and lazily built tables once here, so that every forked call starts with them.
    try:
        sympy = sys.modules['sympy']
        _x = sympy.symbols('x')
        sympy.factor(_x ** 4 - 1)
        sympy.solve(_x ** 2 - 4, _x)
        sympy.simplify(sympy.sin(_x) ** 2 + sympy.cos(_x) ** 2)
        sympy.integrate(_x ** 2, _x)
        sympy.factorint(2 ** 64 - 1)
        sympy.Rational(1, 3) + sympy.sqrt(2)
    except Exception:
        pass
if 'math_verify' in sys.modules:
    # The verifier's pool (workers/reward/math-verify.ts): the first parse builds the LaTeX grammar's tables and
    # the regexes (~100 ms), each later one reuses them.
    try:
        import logging
        # Its time limits use signal.alarm, which is neither safe beside threads nor needed here (the sandbox's wall
        # clock ends a slow check): the checks turn them off, and this silences the warning that they are off.
        logging.getLogger('math_verify').setLevel(logging.ERROR)
        from math_verify import parse as _parse, verify as _verify
        for _g, _p in (('\\frac{1}{2}', '0.5'), ('(1,2)', 'x=(1,2)'), ('x^2+1', '1+x^2'), ('\\{1,2\\}', '[0,1)'),
                       ('\\begin{pmatrix}1\\\\2\\end{pmatrix}', 'y=2x'), ('50\\%', '\\sqrt{2}\\pi')):
            _verify(_parse('$' + _g + '$', parsing_timeout=None), _parse('$' + _p + '$', parsing_timeout=None), timeout_seconds=None)
    except Exception:
        pass

# Inside bubblewrap (ISOLATED) every call runs in namespaces of its own (run_child). In the (loudly logged) unsafe
# mode there are none: the zygote then kills only the call's process group and works in a private temp folder.
ISOLATED = os.environ.get('TOOLSMITH_SANDBOX_ISOLATED') == '1'
# 'v1' or 'v2': the pool bound this zygote's cgroup folder(s) at CG_DIR; '' when it has none (memory is then
# counted by polling the call's processes, which misses memfd, shared memory and /tmp).
CGROUP = os.environ.get('TOOLSMITH_SANDBOX_CGROUP', '') if ISOLATED else ''
CG_DIR = '/run/toolsmith/cgroup'
TMP_BYTES = int(os.environ.get('TOOLSMITH_SANDBOX_TMP_BYTES') or (256 << 20))
TMP_ROOT = '/tmp' if ISOLATED else tempfile.mkdtemp(prefix='toolsmith-unsafe-')
WORK = os.path.join(TMP_ROOT, 'work')
PROTO_OUT = sys.stdout.buffer
PROTO_IN = sys.stdin.buffer
# Our pid as /proc (bwrap's, for bwrap's pid namespace) shows it; pid 1 there is the process we left behind.
SELF = int(os.readlink('/proc/self')) if ISOLATED else os.getpid()
WAKE_R = -1
# How often the zygote adds up the memory of a call's processes when it has no cgroup, seconds.
MEMORY_POLL_S = 0.05
# Per-call limits on what rlimits can bound and the cgroup does not: open files, POSIX message queue bytes.
MAX_OPEN_FILES = 1024
MAX_MQUEUE_BYTES = 256 << 10
# The refused calls come from the pool (syscall-filter.ts). The zygote loads the filter for all of them but the three
# it needs itself to build each call's namespaces (ZYGOTE_NEEDS), which every call inherits; each call then loads
# the small program that refuses those three (SYSCALL_FILTER): loading a filter costs a call its compilation.
ZYGOTE_NEEDS = {'unshare', 'setns', 'mount'}
SYSCALL_FILTER = b''

def mount(source, target, fstype, flags, data=None):
    check(LIBC.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                     data.encode() if data else None), 'mount ' + target)


def set_not_dumpable():
    # Processes of the same uid cannot open /proc/<zygote>/fd/* (our protocol pipes) or ptrace us.
    try:
        LIBC.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except Exception:
        pass


def fork_into_namespaces():
    """os.fork, except that the child is pid 1 of a new pid namespace and has mount and IPC namespaces of its own.
    The pid namespace is unshared for the fork and the zygote returns to its own right after, so that the next
    call gets a fresh one too; a real fork keeps the C library's view of the child (its thread id) right. Returns 0
    in the child, its pid in the parent."""
    check(LIBC.unshare(CLONE_NEWPID), 'unshare(CLONE_NEWPID)')
    pid = -1
    try:
        pid = os.fork()
    finally:
        if pid != 0:  # the zygote, whether or not the fork succeeded
            check(LIBC.setns(BASE_PID_NS, CLONE_NEWPID), 'setns')
    if pid:
        return pid
    check(LIBC.unshare(CLONE_NEWNS | CLONE_NEWIPC), 'unshare(CLONE_NEWNS | CLONE_NEWIPC)')
    return 0


def build_syscall_filter(refused):
    """The calls' seccomp program, compiled once per zygote by libseccomp (python3-seccomp): every listed call
    answers its errno instead of running; the rest are allowed; other architectures' ABIs (x32, i386) are killed, by
    libseccomp's default. Each entry: {"name", "errno"?, "arg0"?: value the first argument must equal}."""
    if not refused:
        return b''
    import seccomp
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for r in refused:
        if seccomp.resolve_syscall(seccomp.Arch.NATIVE, r['name']) < 0:
            continue  # not a call on this architecture
        action = seccomp.ERRNO(getattr(errno, r.get('errno', 'ENOSYS')))
        if 'arg0' in r:
            f.add_rule(action, r['name'], seccomp.Arg(0, seccomp.EQ, r['arg0']))
        elif 'arg0_not' in r:
            f.add_rule(action, r['name'], seccomp.Arg(0, seccomp.NE, r['arg0_not']))
        else:
            f.add_rule(action, r['name'])
    with tempfile.TemporaryFile() as t:
        f.export_bpf(t)
        t.seek(0)
        return t.read()


class SockFprog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]


def load_syscall_filter(program):
    """Install the precompiled program on this process (and all it starts): no_new_privs first, as the kernel asks."""
    check(LIBC.prctl(38, 1, 0, 0, 0), 'PR_SET_NO_NEW_PRIVS')
    buf = ctypes.create_string_buffer(program, len(program))
    prog = SockFprog(len(program) // 8, ctypes.addressof(buf))
    check(LIBC.prctl(22, 2, ctypes.byref(prog), 0, 0), 'PR_SET_SECCOMP')  # SECCOMP_MODE_FILTER


def drop_capabilities():
    """The zygote holds CAP_SYS_ADMIN in its user namespace to build each call's namespaces (and CAP_SETPCAP to drop
    it from the bounding set here); the code holds nothing, not even in its bounding set."""
    for cap in (21, 8):  # CAP_SYS_ADMIN, then CAP_SETPCAP (which the first drop needs): out of the bounding set
        check(LIBC.prctl(24, cap, 0, 0, 0), 'PR_CAPBSET_DROP')
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    check(LIBC.capset(header, (ctypes.c_uint32 * 6)()), 'capset')


class CountingStdout:
    """sys.stdout proxy that remembers whether anything was written (for the IPython-style echo)."""

    def __init__(self, inner):
        self._inner = inner
        self.written = False

    def write(self, s):
        if s:
            self.written = True
        return self._inner.write(s)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def seed_generators(seed):
    """Fresh entropy in every call (the zygote's generator state is copied into each fork), or, when the caller
    asks for a seed, the same numbers wherever the call runs: Python's random, numpy's legacy global generator, and
    every numpy.random.default_rng() made without a seed (the n-th one from SeedSequence(seed, spawn_key=(n,)))."""
    np = sys.modules.get('numpy')
    if seed is None:
        random.seed()
        if np is not None:
            np.random.seed()
        return
    random.seed(seed)
    if np is not None:
        np.random.seed(seed % (1 << 32))
        made = itertools.count()
        original = np.random.default_rng

        def default_rng(seed_arg=None):
            return original(np.random.SeedSequence(seed, spawn_key=(next(made),)) if seed_arg is None else seed_arg)
        np.random.default_rng = default_rng


def prefer_as_oom_victim():
    """The zygote lives in its call cgroup (no cgroup migration per call: a migration waits for an RCU grace
    period, up to ~13 ms here), started with the lowest OOM score by the pool; the call's process takes the highest,
    so that when the cgroup is over its limit the kernel kills the call, never the zygote."""
    if CGROUP:
        with open('/proc/self/oom_score_adj', 'w') as f:
            f.write('1000')


def cg_path(controller, name):
    return os.path.join(CG_DIR, controller, name) if CGROUP == 'v1' else os.path.join(CG_DIR, name)


def cg_read(controller, name):
    with open(cg_path(controller, name)) as f:
        return f.read()


def cg_write(controller, name, value):
    with open(cg_path(controller, name), 'w') as f:
        f.write(value)


LIMITS_SET = {}


def set_cgroup_limits(mem_limit, max_processes):
    """Limits for the next call, on top of what the cgroup holds now (the zygote, and page cache, which the kernel
    reclaims before it counts a call over its limit): memory in use + the call's memory limit (rewritten only when
    that moves by more than 4 MiB: a write costs the call time), processes in it + the call's process limit."""
    if not CGROUP:
        return
    used = int(cg_read('memory', 'memory.usage_in_bytes' if CGROUP == 'v1' else 'memory.current'))
    want = {('memory', 'memory.limit_in_bytes' if CGROUP == 'v1' else 'memory.max'): used + mem_limit,
            ('pids', 'pids.max'): int(cg_read('pids', 'pids.current')) + max_processes}
    for key, value in want.items():
        last = LIMITS_SET.get(key)
        if last is None or abs(last - value) > (4 << 20 if key[0] == 'memory' else 0):
            cg_write(key[0], key[1], str(value))
            LIMITS_SET[key] = value


def oom_kills():
    """How many times the kernel's OOM killer has acted in the call cgroup so far (a counter, never reset)."""
    if not CGROUP:
        return 0
    text = cg_read('memory', 'memory.oom_control' if CGROUP == 'v1' else 'memory.events')
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == 'oom_kill':
            return int(parts[1])
    return 0


def cgroup_procs():
    """The call cgroup's processes but the zygote (the process it left as bwrap's pid 1 is outside our pid
    namespace, so it is not listed)."""
    if not CGROUP:
        return []
    return [int(x) for x in cg_read('memory', 'cgroup.procs').split() if int(x) != os.getpid()]


def build_call_view():
    """In the call's fresh mount namespace: a /proc of its own pid namespace holding only the processes' folders
    (subset=pid: no /proc/sys, cpuinfo, meminfo or other view of the host's kernel), empty size-capped /tmp (with
    the working folder) and /dev/shm, the cgroup files hidden."""
    mount('none', '/', None, MS_REC | MS_PRIVATE)
    mount('proc', '/proc', 'proc', MS_NOSUID | MS_NODEV | MS_NOEXEC, 'subset=pid')
    mount('tmpfs', '/tmp', 'tmpfs', MS_NOSUID | MS_NODEV, 'size=%d,mode=0700' % TMP_BYTES)
    mount('tmpfs', '/dev/shm', 'tmpfs', MS_NOSUID | MS_NODEV, 'size=%d,mode=1777' % max(1 << 20, TMP_BYTES // 4))
    if CGROUP:
        mount('tmpfs', CG_DIR, 'tmpfs', MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, 'size=4k')
    os.mkdir(WORK, 0o700)


def measure_isolation(n, code=''):
    """bench:sandbox only (the pool's bench option): what each isolation measure adds to a call, ms. Each variant
    adds one measure to the one before; each is timed over n forks of this zygote (the median), the child running
    `code` (output discarded) and nothing else, so the differences are the measures' own costs."""
    work = compile(code, 'main.py', 'exec') if code else None

    def run_work():
        if work is not None:
            sys.stdout = open(os.devnull, 'w')
            exec(work, {'__name__': '__main__'})

    def in_namespaces(view, cgroup, locked):
        def child():
            LIBC.prctl(4, 1, 0, 0, 0)
            if view:
                build_call_view()
            if cgroup:
                prefer_as_oom_victim()
            if locked:
                drop_capabilities()
                load_syscall_filter(SYSCALL_FILTER)
            run_work()
        return child

    variants = [
        ('fork of the zygote (no isolation of its own)', os.fork, in_namespaces(False, False, False)),
        ('+ own pid, mount and IPC namespaces (clone)', fork_into_namespaces, in_namespaces(False, False, False)),
        ('+ fresh /proc, /tmp and /dev/shm', fork_into_namespaces, in_namespaces(True, False, False)),
        ('+ the call made the OOM victim (zygote and calls share a cgroup)', fork_into_namespaces, in_namespaces(True, bool(CGROUP), False)),
        ('+ capabilities dropped and the seccomp filter loaded', fork_into_namespaces, in_namespaces(True, bool(CGROUP), True)),
    ]
    out = []
    for name, fork, child in variants:
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            pid = fork()
            if pid == 0:
                try:
                    child()
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        out.append({'measure': name, 'ms': round(times[len(times) // 2], 3)})
    drain_wakeups()
    return out


def run_child(req, in_r, out_w, err_w, info_w):
    """In the forked child: become a clean process and run the code. Never returns. Isolated, the child is pid 1 of
    its own pid namespace (fork_into_namespaces): it cannot see or address the zygote, and when it exits the kernel
    kills every process it left behind. It first builds its view of the file system."""
    try:
        # The zygote is not dumpable, and forks inherit that; the call's own processes are made dumpable again
        # (as any exec would) so that they may read and write their own /proc entries. Only the call sees them.
        LIBC.prctl(4, 1, 0, 0, 0)
        if ISOLATED:
            build_call_view()
            prefer_as_oom_victim()
        os.setsid()
        os.chdir(WORK)
        os.dup2(in_r, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        # Keep only stdio and the info pipe: the protocol pipes must not be reachable from the code.
        os.dup2(info_w, 3)
        os.closerange(4, 65536)
        mem = memory_bytes(req)
        cpu = int(max(1, float(req.get('timeout') or 4)) + 1)
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        fsize = int(req.get('max_file_mb') or 64) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        nproc = int(req.get('max_processes') or 32)
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        # These two are inherited from the host: only ever lowered (raising a hard limit needs a capability).
        for res, value in ((resource.RLIMIT_NOFILE, MAX_OPEN_FILES), (resource.RLIMIT_MSGQUEUE, MAX_MQUEUE_BYTES)):
            hard = resource.getrlimit(res)[1]
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(res, (value, value))
        signal.set_wakeup_fd(-1)
        # The zygote ignores every signal it can; the code starts with the default action for each, as any program.
        set_every_signal(signal.SIG_DFL)
        if ISOLATED:
            drop_capabilities()
            if SYSCALL_FILTER:
                load_syscall_filter(SYSCALL_FILTER)
        seed = req.get('seed')
        seed_generators(seed if isinstance(seed, int) and not isinstance(seed, bool) else None)
        sys.stdin = open(0, 'r', closefd=False)
        sys.stdout = CountingStdout(open(1, 'w', buffering=1, closefd=False, errors='backslashreplace'))
        sys.stderr = open(2, 'w', buffering=1, closefd=False, errors='backslashreplace')
        info = os.fdopen(3, 'w')
    except BaseException as e:  # set-up failed: report as internal
        os.write(2, ('sandbox set-up failed: %r\n' % (e,)).encode())
        os._exit(120)

    code = req.get('code') or ''
    history = req.get('history') or []
    main = {'__name__': '__main__', '__builtins__': __builtins__, '__file__': 'main.py'}
    sys.argv = ['main.py']
    try:
        # Session mode: earlier calls of the trajectory are replayed quietly to rebuild their variables.
        if history:
            real_out, real_err = sys.stdout, sys.stderr
            sys.stdout = sys.stderr = open(os.devnull, 'w')
            try:
                for h in history:
                    try:
                        exec(compile(h, 'history.py', 'exec'), main)
                    except BaseException:
                        pass
            finally:
                sys.stdout, sys.stderr = real_out, real_err
            sys.stdout.written = False
        tree = ast.parse(code, 'main.py', 'exec')
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:
            tree.body = tree.body[:-1]
        exec(compile(tree, 'main.py', 'exec'), main)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), 'main.py', 'eval'), main)
            if value is not None and not sys.stdout.written:
                print(repr(value))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    except SystemExit as e:
        sys.stdout.flush()
        sys.stderr.flush()
        c = e.code
        os._exit(c if isinstance(c, int) and 0 <= c < 256 else (0 if c is None else 1))
    except BaseException as e:
        line = None
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == 'main.py':
                line = tb.tb_lineno
            tb = tb.tb_next
        if isinstance(e, SyntaxError) and e.filename == 'main.py':
            line = e.lineno
        try:
            # Hide the zygote's own frames: the model sees a traceback that starts at its code.
            tb = e.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename not in ('main.py', 'history.py'):
                tb = tb.tb_next
            sys.stderr.write(''.join(traceback.format_exception(type(e), e, tb)))
            sys.stderr.flush()
            sys.stdout.flush()
            info.write(json.dumps({'type': type(e).__name__, 'line': line, 'message': str(e)[:2000]}))
            info.flush()
        except BaseException:
            pass
        os._exit(1)


def other_pids():
    """Every process this zygote can see but itself: in the sandbox, only what calls started (it is pid 1 there)."""
    pids = []
    if not ISOLATED:
        return pids
    for name in os.listdir('/proc'):
        if name.isdigit():
            pid = int(name)
            if pid != SELF and pid != 1:
                pids.append(pid)
    return pids


def reap():
    """The zygote is the namespace's init (bwrap --as-pid-1): orphans of a call become its children."""
    while True:
        try:
            wpid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if wpid == 0:
            return


def sweep():
    """Kill every process in this sandbox except the zygote. Returns how many."""
    killed = 0
    if not ISOLATED:
        return 0
    for _ in range(2000):
        reap()
        pids = other_pids()
        if not pids:
            return killed
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.002)
    reap()
    return killed


def prove_clean():
    """Whether the next call would start from a state no earlier call touched. Each call's files, IPC objects and
    /proc die with its namespaces, so what is left to check is that none of its processes survived (after one more
    sweep) and that its cgroup is empty."""
    if not ISOLATED:
        return True
    if other_pids():
        sweep()
    return not other_pids() and not cgroup_procs()


def namespace_memory():
    """Without a cgroup: memory of every process in the sandbox but the zygote, bytes, as proportional set sizes
    (pages the forks share count once). A single process is left to RLIMIT_AS."""
    pids = other_pids()
    if len(pids) < 2:
        return 0
    total = 0
    for pid in pids:
        try:
            with open('/proc/%d/smaps_rollup' % pid, 'rb') as f:
                for line in f:
                    if line.startswith(b'Pss:'):
                        total += int(line.split()[1]) * 1024
                        break
        except (OSError, ValueError, IndexError):
            pass
    return total


def remove_tree(d):
    """Unsafe mode only (isolated calls get a fresh tmpfs): remove everything under d, whatever its permission bits
    and depth (iteratively: no recursion limit)."""
    stack = [d]
    dirs = []
    while stack:
        cur = stack.pop()
        try:
            os.chmod(cur, 0o700)
            names = os.listdir(cur)
        except OSError:
            continue
        dirs.append(cur)
        for name in names:
            p = os.path.join(cur, name)
            if os.path.isdir(p) and not os.path.islink(p):
                stack.append(p)
            else:
                try:
                    os.unlink(p)
                except OSError:
                    pass
    for cur in reversed(dirs[1:]):
        try:
            os.rmdir(cur)
        except OSError:
            pass


# A call runs in three steps, each its own function below: spawn (fork the call with its stdin, pipes and, on the
# child's side, namespaces and rlimits), supervise (watch it against its limits, then end it and clean up), and
# classify (turn what was seen into the result). Supervise always cleans up before classify runs, so a bug in
# the classification cannot leave a call's processes behind for the next call.

Child = collections.namedtuple('Child', 'pid t0 out_r err_r info_r')
Run = collections.namedtuple('Run', 'status exit_status duration_ms stdout stderr info stdout_truncated stderr_truncated oom')

QUEUE_TIMEOUT = {'type': 'QueueTimeout', 'message': 'the call waited past its deadline and was not run'}


def memory_bytes(req):
    """The call's memory limit: one process's RLIMIT_AS (in run_child), and all its processes together (its cgroup,
    or in watch by polling when there is none)."""
    return int(req.get('memory_mb') or 1024) * 1024 * 1024


def call_timeout(req):
    """The call's wall-clock limit in seconds, or None when it is not to run: a call that waited (in the pool's
    queue, or here behind another call) past its deadline is not run; one that starts late gets only the time left."""
    timeout = float(req.get('timeout') or 4)
    deadline_ms = req.get('deadline_ms')
    if deadline_ms:
        left = float(deadline_ms) / 1000 - time.time()
        if left <= 0:
            return None
        timeout = min(timeout, max(0.05, left))
    return timeout


def stdin_fd(data):
    """The call's stdin, passed without any path the code could have planted: a pipe when it fits in the pipe
    buffer (written and closed now, so the program sees EOF after it), else an anonymous memory file."""
    if len(data) <= 60000:
        r, w = os.pipe()
        os.write(w, data)
        os.close(w)
        return r
    fd = os.memfd_create('stdin', os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    return fd


def spawn(req):
    """Fork the call (isolated: into namespaces of its own) with its stdin and its stdout, stderr and info pipes;
    the parent keeps only the read ends, so that each pipe reaches EOF once the call's processes have all closed
    theirs."""
    in_r = stdin_fd((req.get('input') or '').encode('utf-8', 'surrogateescape'))
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    info_r, info_w = os.pipe()
    t0 = time.monotonic()
    pid = fork_into_namespaces() if ISOLATED else os.fork()
    if pid == 0:
        for fd in (out_r, err_r, info_r, WAKE_R):
            os.close(fd)
        run_child(req, in_r, out_w, err_w, info_w)
    for fd in (in_r, out_w, err_w, info_w):
        os.close(fd)
    return Child(pid, t0, out_r, err_r, info_r)


def supervise(child, timeout, cap, mem_limit):
    """Run the call to its end (watch), then make sure nothing of it is left: kill it (stop), then every other
    process in the sandbox (clean_up). Returns what classify needs."""
    ooms = oom_kills()
    exit_status = None
    try:
        status, exit_status, bufs, truncated = watch(child, child.t0 + timeout, cap, mem_limit, ooms)
    finally:
        # Also when watch raised: the call never outlives this function.
        exit_status = stop(child.pid, exit_status)
        # The call's duration ends when its child is gone; the sweep is the zygote's own time.
        duration = (time.monotonic() - child.t0) * 1000
        clean_up((child.out_r, child.err_r, child.info_r))
    oom = oom_kills() > ooms
    return Run(status, exit_status, duration, bufs[child.out_r],
               bufs[child.err_r], bufs[child.info_r], truncated[child.out_r], truncated[child.err_r], oom)


def watch(child, deadline, cap, mem_limit, ooms):
    """Wait for the child while reading its pipes, until it has exited and they are drained, or a limit is hit.
    Returns (status, exit_status, bufs, truncated): status None when no limit was hit, else 'timeout', 'memory' or
    'output_limit'; exit_status None while the child still runs."""
    pid, out_r, err_r, info_r = child.pid, child.out_r, child.err_r, child.info_r
    bufs = {out_r: bytearray(), err_r: bytearray(), info_r: bytearray()}
    truncated = {out_r: False, err_r: False}
    open_fds = [out_r, err_r, info_r]
    status = None
    exit_status = None
    child_done = False
    drain_until = None
    # With a cgroup the kernel counts the memory, and its OOM killer ends one process when the call is over its
    # limit: the call is then over (status memory), not left running without it. Without one, memory is polled.
    poll_memory = ISOLATED
    next_mem_check = child.t0 + MEMORY_POLL_S
    while True:
        now = time.monotonic()
        if now >= deadline:
            status = 'timeout'
            break
        if exit_status is None:
            wpid, st = os.waitpid(pid, os.WNOHANG)
            if wpid == pid:
                exit_status = st
                child_done = True
                drain_until = now + 0.2
        if not open_fds and child_done:
            break
        if poll_memory and now >= next_mem_check:
            # One process is bounded by RLIMIT_AS; many together by this when there is no cgroup.
            next_mem_check = now + MEMORY_POLL_S
            if (oom_kills() > ooms) if CGROUP else (namespace_memory() > mem_limit):
                status = 'memory'
                break
        # Once the child has exited, only drain what is already written (for at most 0.2 s): in unsafe mode a
        # process it left behind may hold the pipes open forever. SIGCHLD wakes the select (WAKE_R).
        if child_done:
            if now >= drain_until:
                break
            wait = 0
        else:
            wait = min(deadline, next_mem_check) - now if poll_memory else deadline - now
        r, _, _ = select.select(open_fds + [WAKE_R], [], [], max(0, wait))
        if WAKE_R in r:
            try:
                os.read(WAKE_R, 4096)
            except BlockingIOError:
                pass
            r.remove(WAKE_R)
            continue
        if child_done and not r:
            break
        for fd in r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b''
            if not chunk:
                open_fds.remove(fd)
                continue
            buf = bufs[fd]
            # The info pipe has a fixed cap of its own and overflowing it is no output limit: it only carries
            # run_child's error summary.
            limit = 65536 if fd == info_r else cap
            room = limit - len(buf)
            if len(chunk) > room:
                buf.extend(chunk[:max(0, room)])
                if fd in truncated:
                    truncated[fd] = True
                    status = 'output_limit'
            else:
                buf.extend(chunk)
        if status == 'output_limit':
            break
    return status, exit_status, bufs, truncated


def stop(pid, exit_status):
    """Whatever happened, the call is over: kill it (isolated, the init of its pid namespace: the kernel then kills
    every process in it; unsafe, its process group), and reap it. Returns its wait status."""
    try:
        if ISOLATED:
            os.kill(pid, signal.SIGKILL)
        else:
            os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if exit_status is None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, exit_status = os.waitpid(pid, 0)
    return exit_status


def drain_wakeups():
    """Read away the SIGCHLD wake-ups (WAKE_R) that the forks just reaped left behind."""
    try:
        while True:
            os.read(WAKE_R, 4096)
    except (BlockingIOError, OSError):
        pass


def clean_up(fds):
    """Leave the sandbox as the next call must find it: no process of this call (sweep), no stale SIGCHLD
    wake-ups (they would wake the next call's first select for nothing), no open pipe of it; in unsafe mode an
    empty work folder."""
    sweep()
    drain_wakeups()
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
    if not ISOLATED:
        remove_tree(TMP_ROOT)
        os.makedirs(WORK, exist_ok=True)


ERROR_TYPE = __import__('re').compile(r'[A-Za-z_][A-Za-z0-9_.]{0,99}\Z')


def error_info(raw, exit_code):
    """The code's report of its own uncaught exception (run_child writes it on fd 3). The code can write that pipe
    as well, so the report is untrusted: kept only when the process ended as an uncaught exception ends it (exit
    code 1) and every field has the result contract's type and bounds; anything else counts as no report."""
    if exit_code != 1 or not raw:
        return {}
    try:
        info = json.loads(raw.decode('utf-8', 'strict'))
    except ValueError:
        return {}
    if not isinstance(info, dict) or set(info) != {'type', 'line', 'message'}:
        return {}
    t, line, message = info['type'], info['line'], info['message']
    if not isinstance(t, str) or not ERROR_TYPE.match(t):
        return {}
    if line is not None and (type(line) is not int or not 1 <= line <= 10 ** 7):
        return {}
    if not isinstance(message, str) or len(message) > 2000:
        return {}
    return {'type': t, 'line': line, 'message': message}


def classify(run, timeout, mem_limit):
    """The result of a supervised call, from its limit status, wait status, output and error info. A limit the
    zygote enforced (timeout, memory, output_limit) wins, then the cgroup's OOM killer (memory); otherwise the exit
    says it: 0 ok; a MemoryError (or a segfault that printed one) memory; SIGXCPU timeout; SIGXFSZ an error; 120
    internal (set-up failed); else error, named after the signal when the code reported nothing itself."""
    status = run.status
    exit_code = None
    sig = None
    if os.WIFEXITED(run.exit_status):
        exit_code = os.WEXITSTATUS(run.exit_status)
    elif os.WIFSIGNALED(run.exit_status):
        sig = os.WTERMSIG(run.exit_status)
        exit_code = -sig
    info = error_info(run.info, exit_code)
    stderr = run.stderr.decode('utf-8', 'replace')
    if status in (None, 'timeout') and run.oom:
        status = 'memory'
    if status == 'memory':
        info = {'type': 'MemoryError', 'message': 'the call used more than %d MiB across its processes, shared memory and files' % (mem_limit >> 20)}
    elif status == 'timeout':
        info = {'type': 'Timeout', 'message': 'wall-clock limit of %g s exceeded' % timeout}
    if status is None:
        if exit_code == 0:
            status = 'ok'
        elif info.get('type') == 'MemoryError' or sig == signal.SIGSEGV and 'MemoryError' in stderr:
            status = 'memory'
        elif sig == signal.SIGXCPU:
            status = 'timeout'
            info = {'type': 'CPUTimeLimit', 'message': 'CPU time limit exceeded'}
        elif sig == signal.SIGXFSZ:
            status = 'error'
            info = {'type': 'FileSizeLimit', 'message': 'file size limit exceeded'}
        elif exit_code == 120:
            status = 'internal'
        else:
            status = 'error'
            if not info and sig is not None:
                try:
                    name = signal.Signals(sig).name
                except ValueError:
                    name = str(sig)
                info = {'type': 'Signal', 'message': 'killed by signal %s' % name}
    return result(status, run.stdout.decode('utf-8', 'replace'), stderr, exit_code, info, round(run.duration_ms, 3),
                  run.stdout_truncated, run.stderr_truncated)


def result(status, stdout, stderr, exit_code, info, duration_ms, stdout_truncated, stderr_truncated):
    """The response's fields, in the protocol's order."""
    return {
        'status': status,
        'stdout': stdout,
        'stderr': stderr,
        'exit_code': exit_code,
        'error_type': info.get('type'),
        'error_line': info.get('line'),
        'error_message': info.get('message'),
        'duration_ms': duration_ms,
        'stdout_truncated': stdout_truncated,
        'stderr_truncated': stderr_truncated,
    }


class Unclean(Exception):
    """A process or cgroup member of an earlier call survived: this zygote must be replaced, not reused."""


def run_call(req):
    """One call, start to end: prove the sandbox clean, spawn, supervise, classify."""
    timeout = call_timeout(req)
    if timeout is None:
        return result('timeout', '', '', None, QUEUE_TIMEOUT, 0, False, False)
    if not prove_clean():
        raise Unclean()
    cap = int(req.get('max_output') or 1024 * 1024)
    mem_limit = memory_bytes(req)
    set_cgroup_limits(mem_limit, int(req.get('max_processes') or 32))
    child = spawn(req)
    run = supervise(child, timeout, cap, mem_limit)
    return classify(run, timeout, mem_limit)


def collapse_hugepages():
    """Back the preloaded heap with 2 MiB pages (MADV_COLLAPSE, Linux 6.1+; a no-op elsewhere). Per call, the CPU
    goes mostly to the kernel copying page-table entries at fork (copy_page_range) and tearing them down at the
    child's exit (unmap_page_range): one entry per 4 KiB of the zygote's ~80 MB. A 2 MiB page is one entry, so
    both shrink; a child that writes into one (refcounts) gets just that range split back to 4 KiB entries.
    Only mappings that are mostly resident are collapsed, so big untouched buffers (OpenBLAS) are not filled."""
    try:
        libc = LIBC
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        huge = 2 << 20
        ranges = []
        with open('/proc/self/smaps') as f:
            cur = None
            for line in f:
                first = line.split(None, 1)[0]
                if '-' in first and not first.endswith(':'):
                    parts = line.split()
                    lo, hi = (int(x, 16) for x in parts[0].split('-'))
                    path = parts[5] if len(parts) > 5 else ''
                    anon = parts[1].startswith('rw') and parts[1][3] == 'p' and (not path or path == '[heap]')
                    cur = (lo, hi) if anon else None
                elif first == 'Rss:' and cur is not None:
                    lo, hi = cur
                    if int(line.split()[1]) * 1024 * 2 >= hi - lo:
                        ranges.append(cur)
                    cur = None
        for lo, hi in ranges:
            a, b = (lo + huge - 1) & ~(huge - 1), hi & ~(huge - 1)
            if b > a:
                libc.madvise(a, b - a, 14)  # MADV_HUGEPAGE
                libc.madvise(a, b - a, 25)  # MADV_COLLAPSE
    except Exception:
        pass


def ignore_signals():
    """Nothing a call does can signal the zygote (it is outside the call's pid namespace), and whatever else may
    (the pool's own stray signals) must not interrupt a clean-up: every signal that can be ignored is, but SIGCHLD
    (it wakes the supervision loop) and the faults (a bug of ours should crash, and be replaced, not spin)."""
    set_every_signal(signal.SIG_IGN, keep={signal.SIGCHLD, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL,
                                           signal.SIGABRT, signal.SIGTRAP, signal.SIGSYS})


def main():
    global WAKE_R, SYSCALL_FILTER
    zygote_filter = b''
    if ISOLATED:
        # Built before the heap is frozen so that the compiler's garbage is collected with the rest.
        refused = (globals().get('BOOT') or {}).get('refused') or []
        zygote_filter = build_syscall_filter([r for r in refused if r['name'] not in ZYGOTE_NEEDS])
        SYSCALL_FILTER = build_syscall_filter([r for r in refused if r['name'] in ZYGOTE_NEEDS])
    # Move everything imported so far out of the collector's view: children then never touch (and so never
    # copy) those pages, which keeps each fork cheap.
    import gc
    gc.collect()
    gc.freeze()
    collapse_hugepages()
    set_not_dumpable()
    ignore_signals()
    WAKE_R, wake_w = os.pipe()
    for fd in (WAKE_R, wake_w):
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    os.makedirs(WORK, exist_ok=True)
    if zygote_filter:
        load_syscall_filter(zygote_filter)
    PROTO_OUT.write(json.dumps({'ready': True, 'pid': SELF}).encode() + b'\n')
    PROTO_OUT.flush()
    for line in PROTO_IN:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if req.get('measure') and (globals().get('BOOT') or {}).get('bench'):
            resp = {'id': req.get('id'), 'measures': measure_isolation(int(req['measure']), req.get('code') or '')}
        elif req.get('ping'):
            clean = prove_clean()
            resp = {'id': req.get('id'), 'pong': True, 'pid': SELF, 'leftover': len(other_pids()), 'clean': clean}
        else:
            try:
                resp = run_call(req)
            except Unclean:
                # No answer: the pool sees this zygote die during the call, replaces it and retries the call.
                sys.stderr.write('zygote: a process of an earlier call survived; exiting to be replaced\n')
                sys.stderr.flush()
                os._exit(3)
            except BaseException as e:  # a bug here must not kill the zygote
                resp = {'status': 'internal', 'stdout': '', 'stderr': 'zygote error: %r' % (e,), 'exit_code': None}
                if not prove_clean():
                    os._exit(3)
            resp['id'] = req.get('id')
        PROTO_OUT.write(json.dumps(resp).encode() + b'\n')
        PROTO_OUT.flush()


if __name__ == '__main__':
    main()
