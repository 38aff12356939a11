"""What every zygote concern shares: whether it runs isolated, the C library, and the one way a zygote gives up.

Isolates nothing itself. ISOLATED is true inside bubblewrap (bwrap.ts sets TOOLSMITH_SANDBOX_ISOLATED); in the
(loudly logged) unsafe mode there are no namespaces, cgroup or syscall filter, and the zygote then kills only the
call's process group and works in a private temp folder.
"""
import ctypes
import os

# Inside bubblewrap every call runs in namespaces of its own (zygote_child.run_child).
ISOLATED = os.environ.get('TOOLSMITH_SANDBOX_ISOLATED') == '1'
LIBC = ctypes.CDLL(None, use_errno=True)


def check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, '%s: %s' % (what, os.strerror(err)))


def set_not_dumpable():
    # Processes of the same uid cannot open /proc/<zygote>/fd/* (our protocol pipes) or ptrace us.
    try:
        LIBC.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except Exception:
        pass


def set_dumpable():
    """The zygote is not dumpable, and forks inherit that; the call's own processes are made dumpable again (as any
    exec would) so that they may read and write their own /proc entries. Only the call sees them."""
    LIBC.prctl(4, 1, 0, 0, 0)


class Unclean(Exception):
    """Something of an earlier call survived (a process, a cgroup member, memory the kernel did not give back in
    time): this zygote must be replaced, not reused. The message says what, for the pool's log."""
