"""bench:sandbox only (the pool's bench option, sent in the boot line): what each isolation measure adds to a call.

Isolates nothing of its own: it forks this zygote with one more measure per row (zygote_namespaces, zygote_mounts,
zygote_cgroup, zygote_seccomp), so the differences are the measures' own costs. A zygote answers it only when the
boot line says bench.
"""
import os
import sys
import time

import zygote_cgroup
import zygote_mounts
import zygote_namespaces
import zygote_os
import zygote_seccomp
import zygote_signals


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
            zygote_os.set_dumpable()
            if view:
                zygote_mounts.build_call_view()
            if cgroup:
                zygote_cgroup.prefer_as_oom_victim()
            if locked:
                zygote_seccomp.drop_capabilities()
                zygote_seccomp.load_syscall_filter(zygote_seccomp.SYSCALL_FILTER)
            run_work()
        return child

    variants = [
        ('fork of the zygote (no isolation of its own)', os.fork, in_namespaces(False, False, False)),
        ('+ own pid, mount and IPC namespaces (clone)', zygote_namespaces.fork_into_namespaces, in_namespaces(False, False, False)),
        ('+ fresh /proc, /tmp and /dev/shm', zygote_namespaces.fork_into_namespaces, in_namespaces(True, False, False)),
        ('+ the call made the OOM victim (zygote and calls share a cgroup)', zygote_namespaces.fork_into_namespaces, in_namespaces(True, bool(zygote_cgroup.CGROUP), False)),
        ('+ capabilities dropped and the seccomp filter loaded', zygote_namespaces.fork_into_namespaces, in_namespaces(True, bool(zygote_cgroup.CGROUP), True)),
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
            zygote_namespaces.remove_ipc_objects()  # part of the namespaces' cost (a no-op after a plain fork)
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        out.append({'measure': name, 'ms': round(times[len(times) // 2], 3)})
    zygote_signals.drain_wakeups()
    return out
