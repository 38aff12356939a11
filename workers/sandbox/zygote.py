"""Toolsmith sandbox zygote.

Runs inside bubblewrap (see workers/sandbox/bwrap.ts) as an unprivileged user with no network. It imports the
heavy modules once, then serves calls one at a time: for each call it forks a fresh child that runs the model's
code as __main__ under rlimits, captures stdout/stderr with caps, enforces a wall-clock timeout, and afterwards
kills every process the call left behind and wipes /tmp. No state survives from one call to the next.

One file on purpose: bubblewrap mounts this file alone at /run/toolsmith/zygote.py (bwrap.ts, ZYGOTE_IN_SANDBOX),
so a module beside it would not be there. Splitting it means mounting a folder instead.

Protocol: one JSON object per line on stdin (requests) and stdout (responses).
  request  {"id", "code", "input", "timeout", "memory_mb", "max_output", "history": [code, ...]}
  response {"id", "status", "stdout", "stderr", "exit_code", "error_type", "error_line", "error_message",
            "duration_ms", "stdout_truncated", "stderr_truncated"}
  request  {"id", "ping": true}  ->  {"id", "pong": true, "pid"}
"""
import ast
import ctypes
import fcntl
import errno
import json
import os
import resource
import select
import shutil
import signal
import sys
import time
import traceback

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

# Inside bubblewrap the zygote owns its pid namespace and its /tmp, so it may kill every other process it can
# see and wipe /tmp. In the (loudly logged) unsafe mode it has neither: it then kills only the call's process
# group and works in a private temp folder.
ISOLATED = os.environ.get('TOOLSMITH_SANDBOX_ISOLATED') == '1'
TMP_ROOT = '/tmp' if ISOLATED else __import__('tempfile').mkdtemp(prefix='toolsmith-unsafe-')
WORK = os.path.join(TMP_ROOT, 'work')
PROTO_OUT = sys.stdout.buffer
PROTO_IN = sys.stdin.buffer
SELF = os.getpid()
WAKE_R = -1
# How often the zygote adds up the memory of a call's processes, seconds.
MEMORY_POLL_S = 0.05


def set_not_dumpable():
    # Processes of the same uid cannot open /proc/<zygote>/fd/* (our protocol pipes) or ptrace us.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except Exception:
        pass


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


def run_child(req, in_r, out_w, err_w, info_w):
    """In the forked child: become a clean process and run the code. Never returns."""
    try:
        os.setsid()
        # The zygote is not dumpable, and forks inherit that; the call's own processes are made dumpable again
        # (as any exec would) so that the zygote can read their memory use. Only the call's processes can see them.
        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)
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
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGXFSZ, signal.SIGCHLD):
            signal.signal(s, signal.SIG_DFL)
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
            except ProcessLookupError:
                pass
            except PermissionError:
                pass
        time.sleep(0.002)
    reap()
    return killed


def namespace_memory():
    """Memory of every process in the sandbox but the zygote, bytes: the per-process RLIMIT_AS does not bound a
    call that spreads its memory over many processes. Proportional set sizes, so that pages the forks share (the
    preloaded modules, copy-on-write) count once, not once per process. A single process is left to RLIMIT_AS."""
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


def wipe_dir(d):
    for name in os.listdir(d):
        p = os.path.join(d, name)
        try:
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.unlink(p)
        except OSError:
            pass


def wipe_tmp():
    if ISOLATED:
        try:
            if os.listdir('/dev/shm'):
                wipe_dir('/dev/shm')
        except OSError:
            pass
    if os.listdir(TMP_ROOT) == ['work'] and not os.listdir(WORK):
        return
    wipe_dir(TMP_ROOT)
    os.makedirs(WORK, exist_ok=True)


# A call runs in three steps, each its own function below: spawn (fork the child with its stdin, pipes and, on
# the child's side, rlimits), supervise (watch it against its limits, then end it and clean the sandbox), and
# classify (turn what was seen into the result). Supervise always cleans up before classify runs, so a bug in
# the classification cannot leave a call's processes or files behind for the next call.

Child = collections.namedtuple('Child', 'pid t0 out_r err_r info_r')
Run = collections.namedtuple('Run', 'status exit_status duration_ms stdout stderr info stdout_truncated stderr_truncated')

QUEUE_TIMEOUT = {'type': 'QueueTimeout', 'message': 'the call waited past its deadline and was not run'}


def memory_bytes(req):
    """The call's memory limit: one process's RLIMIT_AS (in run_child), and all its processes together (in watch)."""
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


def spawn(req):
    """Fork the call's child (run_child) with its stdin and its stdout, stderr and info pipes; the parent keeps only
    the read ends, so that each pipe reaches EOF once the call's processes have all closed theirs."""
    data = (req.get('input') or '').encode('utf-8', 'surrogateescape')
    if len(data) <= 60000:
        # Fits in the pipe buffer: write it all now and close, so the program sees EOF after it.
        in_r, in_w = os.pipe()
        os.write(in_w, data)
        os.close(in_w)
    else:
        # Too big to write into a pipe before the fork (the write would block): an unlinked file instead.
        path = os.path.join(WORK, '.stdin')
        with open(path, 'wb') as f:
            f.write(data)
        in_r = os.open(path, os.O_RDONLY)
        os.unlink(path)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    info_r, info_w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(err_r)
        os.close(info_r)
        run_child(req, in_r, out_w, err_w, info_w)
    os.close(in_r)
    os.close(out_w)
    os.close(err_w)
    os.close(info_w)
    return Child(pid, t0, out_r, err_r, info_r)


def supervise(child, timeout, cap, mem_limit):
    """Run the call to its end (watch), then make sure nothing of it is left: kill it (stop), then every other
    process in the sandbox, and wipe /tmp (clean_up). Returns what classify needs."""
    status, exit_status, bufs, truncated = watch(child, child.t0 + timeout, cap, mem_limit)
    exit_status = stop(child.pid, exit_status)
    # The call's duration ends when its child is gone; the sweep and the wipe are the zygote's own time.
    duration = (time.monotonic() - child.t0) * 1000
    clean_up((child.out_r, child.err_r, child.info_r))
    return Run(status, exit_status, duration, bufs[child.out_r], bufs[child.err_r], bufs[child.info_r],
               truncated[child.out_r], truncated[child.err_r])


def watch(child, deadline, cap, mem_limit):
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
        if ISOLATED and now >= next_mem_check:
            # One process is bounded by RLIMIT_AS; many together by this: the call's whole memory.
            next_mem_check = now + MEMORY_POLL_S
            if namespace_memory() > mem_limit:
                status = 'memory'
                break
        # Once the program has exited, only drain what is already written (for at most 0.2 s): a process it
        # left behind may hold the pipes open, and write to them, forever; it is about to be killed anyway.
        # SIGCHLD wakes the select (WAKE_R).
        if child_done:
            if now >= drain_until:
                break
            wait = 0
        else:
            wait = min(deadline, next_mem_check) - now if ISOLATED else deadline - now
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
    """Whatever happened, the call is over: kill its process group, and the child itself if it has not exited
    (it may have left its group); reap it. Returns its wait status."""
    try:
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


def clean_up(fds):
    """Leave the sandbox as the next call must find it: no process of this call (sweep), no stale SIGCHLD
    wake-ups (they would wake the next call's first select for nothing), no open pipe of it, an empty /tmp."""
    sweep()
    try:
        while True:
            os.read(WAKE_R, 4096)
    except (BlockingIOError, OSError):
        pass
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
    wipe_tmp()


def classify(run, timeout, mem_limit):
    """The result of a supervised call, from its limit status, wait status, output and error info. A limit the
    zygote enforced (timeout, memory, output_limit) wins; otherwise the exit says it: 0 ok; a MemoryError (or a
    segfault that printed one) memory; SIGXCPU timeout; SIGXFSZ an error; 120 internal (run_child's set-up
    failed); else error, named after the signal when the code reported nothing itself."""
    status = run.status
    exit_code = None
    sig = None
    if os.WIFEXITED(run.exit_status):
        exit_code = os.WEXITSTATUS(run.exit_status)
    elif os.WIFSIGNALED(run.exit_status):
        sig = os.WTERMSIG(run.exit_status)
        exit_code = -sig
    info = {}
    if run.info:
        try:
            info = json.loads(run.info.decode('utf-8', 'replace'))
        except ValueError:
            info = {}
    stderr = run.stderr.decode('utf-8', 'replace')
    if status == 'memory':
        info = {'type': 'MemoryError', 'message': 'the call used more than %d MiB across its processes' % (mem_limit >> 20)}
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


def run_call(req):
    """One call, start to end: spawn, supervise, classify."""
    timeout = call_timeout(req)
    if timeout is None:
        return result('timeout', '', '', None, QUEUE_TIMEOUT, 0, False, False)
    cap = int(req.get('max_output') or 1024 * 1024)
    mem_limit = memory_bytes(req)
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
        libc = ctypes.CDLL(None, use_errno=True)
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


def main():
    # Move everything imported so far out of the collector's view: children then never touch (and so never
    # copy) those pages, which keeps each fork cheap.
    import gc
    gc.collect()
    gc.freeze()
    collapse_hugepages()
    set_not_dumpable()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    global WAKE_R
    WAKE_R, wake_w = os.pipe()
    for fd in (WAKE_R, wake_w):
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    os.makedirs(WORK, exist_ok=True)
    PROTO_OUT.write(json.dumps({'ready': True, 'pid': SELF}).encode() + b'\n')
    PROTO_OUT.flush()
    for line in PROTO_IN:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if req.get('ping'):
            resp = {'id': req.get('id'), 'pong': True, 'pid': SELF, 'leftover': len(other_pids())}
        else:
            try:
                resp = run_call(req)
            except BaseException as e:  # a bug here must not kill the zygote
                resp = {'status': 'internal', 'stdout': '', 'stderr': 'zygote error: %r' % (e,), 'exit_code': None}
            resp['id'] = req.get('id')
        PROTO_OUT.write(json.dumps(resp).encode() + b'\n')
        PROTO_OUT.flush()


if __name__ == '__main__':
    main()
