"""Namespaces: each call is pid 1 of a pid namespace of its own, with mount and IPC namespaces of its own.

Isolates: the call cannot see, signal, prlimit or ptrace the zygote or another call, and every process it starts
dies with it (the kernel kills a pid namespace with its init); SysV IPC and POSIX message queues die with its IPC
namespace, and the zygote removes what the call left there the moment it is over (remove_ipc_objects), so that
their memory is given back then and not whenever the kernel frees the namespace; what it mounts stays in its mount
namespace (what is mounted there: zygote_mounts). The user, network,
UTS and cgroup namespaces are bubblewrap's (bwrap.ts), one per zygote, not per call. Does not: bound memory,
processes or time (zygote_cgroup, zygote_limits), nor filter system calls (zygote_seccomp).
"""
import os
import signal
import time

import zygote_os
from zygote_os import LIBC, check
import zygote_signals

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID = 0x20000, 0x08000000, 0x20000000

# Descriptors of the zygote's own pid and IPC namespaces (enter_base_pid_namespace); -1 in unsafe mode.
BASE_PID_NS = -1
BASE_IPC_NS = -1
# The last call's IPC namespace, held by the zygote until remove_ipc_objects has emptied it; -1 when none.
CALL_IPC_NS = -1
# Our pid as /proc (bwrap's, for bwrap's pid namespace) shows it; pid 1 there is the process we left behind. Set by
# enter_base_pid_namespace when isolated; read as zygote_namespaces.SELF.
SELF = os.getpid()
# The zygote's own helpers (zygote_reserve), as /proc shows their pids: neither a call's leftovers nor swept.
SPARED = set()


def enter_base_pid_namespace():
    """Move the zygote into a pid namespace of its own making. bwrap's pid namespace belongs to bwrap's outer user
    namespace, where the zygote holds no capability, so it could not setns back into it after creating a call's
    namespace; this one belongs to the sandbox's user namespace. Called before the heavy imports: the process left
    behind as bwrap's pid 1 only waits for the zygote and exits as it does. Sets BASE_PID_NS and SELF."""
    global BASE_PID_NS, BASE_IPC_NS, SELF
    # An IPC namespace of its own likewise, to return to after each call's (fork_into_namespaces).
    check(LIBC.unshare(CLONE_NEWPID | CLONE_NEWIPC), 'unshare(CLONE_NEWPID | CLONE_NEWIPC)')
    pid = os.fork()
    if pid:
        zygote_signals.set_every_signal(signal.SIG_IGN, keep={signal.SIGCHLD})
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # waitpid needs it not ignored
        while True:
            try:
                _, st = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        code = os.waitstatus_to_exitcode(st)
        os._exit(code if code >= 0 else 128 - code)
    BASE_PID_NS = os.open('/proc/self/ns/pid', os.O_RDONLY | os.O_CLOEXEC)
    BASE_IPC_NS = os.open('/proc/self/ns/ipc', os.O_RDONLY | os.O_CLOEXEC)
    SELF = int(os.readlink('/proc/self'))


def fork_into_namespaces():
    """os.fork, except that the child is pid 1 of a new pid namespace and has mount and IPC namespaces of its own.
    The pid and IPC namespaces are unshared for the fork and the zygote returns to its own right after, so that the
    next call gets fresh ones too, keeping a descriptor of the call's IPC namespace (CALL_IPC_NS) to empty it once
    the call is over; a real fork keeps the C library's view of the child (its thread id) right. Returns 0 in the
    child, its pid in the parent."""
    global CALL_IPC_NS
    remove_ipc_objects()  # an earlier call's, should its supervision have been cut short
    check(LIBC.unshare(CLONE_NEWPID | CLONE_NEWIPC), 'unshare(CLONE_NEWPID | CLONE_NEWIPC)')
    pid = -1
    try:
        CALL_IPC_NS = os.open('/proc/self/ns/ipc', os.O_RDONLY | os.O_CLOEXEC)
        pid = os.fork()
    finally:
        if pid != 0:  # the zygote, whether or not the fork succeeded
            check(LIBC.setns(BASE_PID_NS, CLONE_NEWPID), 'setns')
            check(LIBC.setns(BASE_IPC_NS, CLONE_NEWIPC), 'setns')
    if pid:
        return pid
    os.close(CALL_IPC_NS)
    check(LIBC.unshare(CLONE_NEWNS), 'unshare(CLONE_NEWNS)')
    return 0


# IPC_RMID, and the SysV object kinds as /proc/sysvipc names them with the call that removes one.
IPC_RMID = 0
IPC_KINDS = (('shm', lambda i: LIBC.shmctl(i, IPC_RMID, None)), ('msg', lambda i: LIBC.msgctl(i, IPC_RMID, None)),
             ('sem', lambda i: LIBC.semctl(i, 0, IPC_RMID)))


def remove_ipc_objects():
    """Once a call's processes are gone: remove every SysV object it left in its IPC namespace (shared memory
    segments, message queues, semaphores), then let the namespace go. Left to the kernel, they are freed with the
    namespace from a work queue, which on a busy machine waits seconds for the CPU, and their memory stays charged
    to the call cgroup meanwhile (zygote_cgroup.settle_memory waits for it). Removed here, a segment no process
    has attached is freed at once."""
    global CALL_IPC_NS
    fd, CALL_IPC_NS = CALL_IPC_NS, -1
    if fd < 0:
        return
    try:
        check(LIBC.setns(fd, CLONE_NEWIPC), 'setns')
        try:
            for kind, rmid in IPC_KINDS:
                with open('/proc/sysvipc/' + kind, 'rb') as f:
                    rows = f.read().splitlines()[1:]  # after the header: key, id, ...
                for row in rows:
                    rmid(int(row.split()[1]))
        finally:
            check(LIBC.setns(BASE_IPC_NS, CLONE_NEWIPC), 'setns')
    finally:
        os.close(fd)


def other_pids():
    """Every process this zygote can see but itself: in the sandbox, only what calls started (it is pid 1 there)."""
    pids = []
    if not zygote_os.ISOLATED:
        return pids
    for name in os.listdir('/proc'):
        if name.isdigit():
            pid = int(name)
            if pid != SELF and pid != 1 and pid not in SPARED:
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
    if not zygote_os.ISOLATED:
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
