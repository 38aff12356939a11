"""The call's own process: from the fork to the model's code, made a clean process first.

Isolates: in this order, the call's file-system view (zygote_mounts) and its place as the OOM victim
(zygote_cgroup), a session of its own, stdio and the info pipe only (the protocol pipes are closed: the code
cannot reach them), its rlimits (zygote_limits), every signal at its default action (zygote_signals), no
capability and the seccomp filter (zygote_seccomp); then the zygote's own modules are taken out of sys.modules,
fresh or seeded random generators are set, and the code runs as main.py (IPython-style echo of a last expression,
session history replayed quietly). Does not: hide the zygote's memory, which the fork copies (nothing secret is in
it: the code and its boot line are open), nor return: the process ends with os._exit.
"""
import ast
import fcntl
import io
import itertools
import json
import os
import random
import sys
import traceback

import zygote_cgroup
import zygote_limits
import zygote_mounts
import zygote_os
import zygote_seccomp
import zygote_signals

# The zygote's own module names (hide_from_calls), removed from sys.modules in each call before its code runs.
HIDDEN = ()


def hide_from_calls(names):
    """Name the zygote's modules once at start-up, so that no call finds them by `import` (set HIDDEN)."""
    global HIDDEN
    HIDDEN = tuple(names)


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


# numpy's own default_rng, kept before seed_generators replaces it (a session seeds each of its calls).
_DEFAULT_RNG = []


def seed_generators(seed):
    """Fresh entropy in every call (the zygote's generator state is copied into each fork), or, when the caller
    asks for a seed, the same numbers wherever the call runs: Python's random, numpy's legacy global generator, and
    every numpy.random.default_rng() made without a seed (the n-th one from SeedSequence(seed, spawn_key=(n,)))."""
    np = sys.modules.get('numpy')
    if np is not None and not _DEFAULT_RNG:
        _DEFAULT_RNG.append(np.random.default_rng)
    if seed is None:
        random.seed()
        if np is not None:
            np.random.seed()
            np.random.default_rng = _DEFAULT_RNG[0]
        return
    random.seed(seed)
    if np is not None:
        np.random.seed(seed % (1 << 32))
        made = itertools.count()
        original = _DEFAULT_RNG[0]

        def default_rng(seed_arg=None):
            return original(np.random.SeedSequence(seed, spawn_key=(next(made),)) if seed_arg is None else seed_arg)
        np.random.default_rng = default_rng


def run_child(req, in_r, out_w, err_w, info_w):
    """In the forked child: become a clean process and run the code. Never returns. Isolated, the child is pid 1 of
    its own pid namespace (fork_into_namespaces): it cannot see or address the zygote, and when it exits the kernel
    kills every process it left behind. It first builds its view of the file system."""
    info = become_clean(req, in_r, out_w, err_w, info_w)
    seed = req.get('seed')
    seed_generators(seed if isinstance(seed, int) and not isinstance(seed, bool) else None)
    main = {'__name__': '__main__', '__builtins__': __builtins__, '__file__': 'main.py'}
    exit_code, report = execute(req.get('code') or '', main, req.get('history') or [])
    if report is not None:
        try:
            info.write(json.dumps(report))
            info.flush()
        except BaseException:
            pass
    os._exit(exit_code)


def run_session(req, in_r, out_w, err_w, info_w, requests_fd):
    """In the forked child of a session (zygote_session): become a clean process as a call's does, then run each
    call the zygote sends on the request pipe (a JSON line: code, input, seed) in one namespace that lives as long
    as the session, and after each write its done line on the info pipe ({exit, error}, stdout and stderr flushed
    first). Never returns: ends when the request pipe closes, or is killed with its namespaces."""
    info = become_clean(req, in_r, out_w, err_w, info_w, keep_fd=requests_fd)
    main = {'__name__': '__main__', '__builtins__': __builtins__, '__file__': 'main.py'}
    pending = b''
    while True:
        while b'\n' not in pending:
            chunk = os.read(4, 65536)
            if not chunk:
                os._exit(0)
            pending += chunk
        line, pending = pending.split(b'\n', 1)
        try:
            msg = json.loads(line)
            seed = msg.get('seed')
            seed_generators(seed if isinstance(seed, int) and not isinstance(seed, bool) else None)
            set_stdio(io.StringIO(msg.get('input') or ''))
            exit_code, report = execute(msg.get('code') or '', main)
        except BaseException as e:  # a bad message, or the code broke what execute relies on
            exit_code, report = 1, {'type': type(e).__name__, 'line': None, 'message': str(e)[:2000]}
        try:
            info.write(json.dumps({'exit': exit_code, 'error': report}) + '\n')
            info.flush()
        except BaseException:
            os._exit(121)


def become_clean(req, in_r, out_w, err_w, info_w, keep_fd=None):
    """Set the forked child up as a clean process (the steps in this module's docstring) and return its info pipe
    as a file. `keep_fd`: one more descriptor kept, as fd 4 (a session's request pipe, zygote_session); every other
    inherited descriptor is closed. Exits 120 when set-up fails."""
    try:
        if keep_fd is not None:
            # Above the descriptors dup2 fills first, so that none of them overwrites it.
            keep_fd = fcntl.fcntl(keep_fd, fcntl.F_DUPFD, 64)
        zygote_os.set_dumpable()
        if zygote_os.ISOLATED:
            zygote_mounts.build_call_view()
            zygote_cgroup.prefer_as_oom_victim()
        os.setsid()
        os.chdir(zygote_mounts.WORK)
        os.dup2(in_r, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        # Keep only stdio and the info pipe: the protocol pipes must not be reachable from the code.
        os.dup2(info_w, 3)
        if keep_fd is not None:
            os.dup2(keep_fd, 4)
        os.closerange(4 if keep_fd is None else 5, 65536)
        zygote_limits.set_rlimits(req)
        zygote_signals.reset_for_call()
        if zygote_os.ISOLATED:
            zygote_seccomp.lock_down_call()
        for name in HIDDEN:
            sys.modules.pop(name, None)
        sys.argv = ['main.py']
        set_stdio()
        return os.fdopen(3, 'w')
    except BaseException as e:  # set-up failed: report as internal
        os.write(2, ('sandbox set-up failed: %r\n' % (e,)).encode())
        os._exit(120)


def set_stdio(stdin=None):
    """sys.stdin (fd 0, or a given file), and stdout and stderr on fds 1 and 2, stdout counting what is written."""
    sys.stdin = stdin or open(0, 'r', closefd=False)
    sys.stdout = CountingStdout(open(1, 'w', buffering=1, closefd=False, errors='backslashreplace'))
    sys.stderr = open(2, 'w', buffering=1, closefd=False, errors='backslashreplace')


def execute(code, main, history=()):
    """Run `code` as main.py in the namespace `main` (IPython-style echo of a last expression; `history` replayed
    quietly first). Returns (exit_code, report): 0 and None when it ran to its end, SystemExit's code, or 1 and the
    error report ({type, line, message}) for an uncaught exception, whose traceback (from the code's first frame)
    is on stderr. Output is flushed."""
    try:
        # Session mode `replay`: earlier calls of the trajectory are replayed quietly to rebuild their variables.
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
        flush()
        return 0, None
    except SystemExit as e:
        flush()
        c = e.code
        return (c if isinstance(c, int) and 0 <= c < 256 else (0 if c is None else 1)), None
    except BaseException as e:
        return 1, report_exception(e)


def flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def report_exception(e):
    """Write the traceback of an uncaught exception from the code's first frame on (the model sees no frame of the
    zygote's) to stderr; returns the error report."""
    line = None
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == 'main.py':
            line = tb.tb_lineno
        tb = tb.tb_next
    if isinstance(e, SyntaxError) and e.filename == 'main.py':
        line = e.lineno
    try:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename not in ('main.py', 'history.py'):
            tb = tb.tb_next
        sys.stderr.write(''.join(traceback.format_exception(type(e), e, tb)))
    except BaseException:
        pass
    flush()
    try:
        message = str(e)[:2000]
    except BaseException:
        message = ''
    return {'type': type(e).__name__, 'line': line, 'message': message}
