"""Limits: the call's time and its per-process resource limits (rlimits).

Isolates: one process's address space (RLIMIT_AS), CPU seconds, file size, core dumps (none), processes of the
sandbox's uid, open files and POSIX message-queue bytes; and the call's wall-clock time, counted from its deadline
in the pool's queue (call_timeout; zygote_supervise enforces it). Does not: bound the call's processes together
(zygote_cgroup does, or zygote_supervise's polling), nor raise a limit the host set lower (the last two are only
ever lowered: raising a hard limit needs a capability).
"""
import resource
import time

# Per-call limits on what rlimits can bound and the cgroup does not: open files, POSIX message queue bytes.
MAX_OPEN_FILES = 1024
MAX_MQUEUE_BYTES = 256 << 10


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


def set_rlimits(req):
    """In the call's process: its rlimits, from the request."""
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
