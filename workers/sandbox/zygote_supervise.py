"""Supervise: fork the call, watch it against its limits, end it, and leave the sandbox as the next call must find
it; and the proof, before each call, that no earlier call left anything behind.

Isolates: a call in time (its wall clock, ended with SIGKILL to its pid namespace's init: the kernel then kills
every process in it), in output (zygote_capture's caps), and in memory across its processes when there is no
cgroup (polled here as proportional set sizes); and each call from the next (sweep, an empty cgroup, no stale
wake-up or pipe: prove_clean). Does not: set the limits it watches (zygote_limits, zygote_cgroup), nor isolate the
call's process itself (zygote_namespaces, zygote_child).
"""
import collections
import os
import select
import signal
import time

import zygote_capture
import zygote_cgroup
import zygote_child
import zygote_mounts
import zygote_namespaces
import zygote_os
import zygote_reserve
import zygote_signals

# How often the zygote looks at a call's memory (the cgroup's OOM kills, or without one its processes' sizes), s.
MEMORY_POLL_S = 0.05
# How long a call may stay at its limit where only the OOM killer can let it go on, before the zygote ends it as
# out of memory without waiting for the killer (zygote_cgroup.LimitWatch's 'full'), seconds.
FULL_FOR_S = 1.0

# A call runs in three steps: spawn (fork the call with its stdin, pipes and, on the child's side, namespaces and
# rlimits), supervise (watch it against its limits, then end it and clean up), and classify (zygote_classify: turn
# what was seen into the result). Supervise always cleans up before classify runs, so a bug in the classification
# cannot leave a call's processes behind for the next call.

Child = collections.namedtuple('Child', 'pid t0 out_r err_r info_r limits')
Run = collections.namedtuple('Run', 'status exit_status duration_ms stdout stderr info stdout_truncated stderr_truncated oom')


def prove_clean(wait_s=0.0):
    """Whether the next call would start from a state no earlier call touched. Each call's files, IPC objects and
    /proc die with its namespaces, so what is left to check is that none of its processes survived (after one more
    sweep) and that its cgroup is empty. With `wait_s`, a process that was killed but has not finished dying is waited
    for that long, sweeping again each time: a killed process needs the CPU (and, freeing its memory, the kernel's
    workers) to exit, and with those starved it took longer than one sweep (a fresh-clone run's memory-pressure test:
    a zygote replaced for a call that was dying, not surviving). The health check's ping waits for nothing."""
    if not zygote_os.ISOLATED:
        return True
    deadline = time.monotonic() + wait_s
    delay = 0.001
    while True:
        zygote_reserve.prune()
        if zygote_namespaces.other_pids():
            zygote_namespaces.sweep()
        if not zygote_namespaces.other_pids() and not zygote_cgroup.cgroup_procs():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(0.05, delay * 2)


def leftovers():
    """What prove_clean found, for the zygote's last words: each process still visible with its state and name (the
    name is the call's: repr'd and cut), and the cgroup's members."""
    seen = []
    for pid in zygote_namespaces.other_pids()[:8]:
        try:
            with open('/proc/%d/stat' % pid) as f:
                stat = f.read()
            seen.append('%d %s %r' % (pid, stat[stat.rindex(')') + 2], stat[stat.index('(') + 1:stat.rindex(')')][:16]))
        except (OSError, ValueError, IndexError):
            seen.append('%d gone' % pid)
    return 'processes: %s; cgroup members: %s' % (', '.join(seen) or 'none', zygote_cgroup.cgroup_procs()[:8] or 'none')


def spawn(req, session_fd=None, other_fds=()):
    """Fork the call (isolated: into namespaces of its own) with its stdin and its stdout, stderr and info pipes;
    the parent keeps only the read ends, so that each pipe reaches EOF once the call's processes have all closed
    theirs. With `session_fd` (the read end of a session's request pipe, zygote_session) the child serves a
    session instead of one call; `other_fds`: the zygote's descriptors the child closes besides its own pipes'."""
    in_r = zygote_capture.stdin_fd((req.get('input') or '').encode('utf-8', 'surrogateescape'))
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    info_r, info_w = os.pipe()
    # The cgroup's counters as they stand before the call exists: read after the fork, a call that the OOM killer
    # ended before the zygote got the CPU back (seen under CPU starvation: killed 0.5 s in) would already be in the
    # baseline, and its kill read as a plain SIGKILL instead of 'memory'.
    limits = zygote_cgroup.LimitWatch()
    t0 = time.monotonic()
    pid = zygote_namespaces.fork_into_namespaces() if zygote_os.ISOLATED else os.fork()
    if pid == 0:
        for fd in (out_r, err_r, info_r, zygote_signals.WAKE_R, *other_fds):
            os.close(fd)
        if session_fd is None:
            zygote_child.run_child(req, in_r, out_w, err_w, info_w)
        zygote_child.run_session(req, in_r, out_w, err_w, info_w, session_fd)
    for fd in (in_r, out_w, err_w, info_w):
        os.close(fd)
    return Child(pid, t0, out_r, err_r, info_r, limits)


def supervise(child, timeout, cap, mem_limit):
    """Run the call to its end (watch), then make sure nothing of it is left: kill it (stop), then every other
    process in the sandbox (clean_up). Returns what classify needs."""
    limits = child.limits
    exit_status = None
    try:
        status, exit_status, bufs, truncated = watch(child, child.t0 + timeout, cap, mem_limit, limits)
    finally:
        # Also when watch raised: the call never outlives this function.
        exit_status = stop(child.pid, exit_status)
        zygote_cgroup.lift_limit_if_full()
        # The call's duration ends when its child is gone; the sweep is the zygote's own time.
        duration = (time.monotonic() - child.t0) * 1000
        clean_up((child.out_r, child.err_r, child.info_r))
    oom = zygote_cgroup.oom_kills() > limits.ooms
    return Run(status, exit_status, duration, bufs[child.out_r],
               bufs[child.err_r], bufs[child.info_r], truncated[child.out_r], truncated[child.err_r], oom)


def watch(child, deadline, cap, mem_limit, limits):
    """Wait for the child while reading its pipes, until it has exited and they are drained, or a limit is hit.
    Returns (status, exit_status, bufs, truncated): status None when no limit was hit, else 'timeout', 'memory' or
    'output_limit'; exit_status None while the child still runs. limits: a zygote_cgroup.LimitWatch made before
    the call began."""
    pid = child.pid
    output = zygote_capture.Output(child.out_r, child.err_r, child.info_r, cap)
    open_fds = output.open_fds
    wake_r = zygote_signals.WAKE_R
    cgroup = zygote_cgroup.CGROUP
    status = None
    exit_status = None
    child_done = False
    drain_until = None
    # With a cgroup the kernel counts the memory, and its OOM killer ends one process when the call is over its
    # limit: the call is then over (status memory), not left running without it. Without one, memory is polled.
    poll_memory = zygote_os.ISOLATED
    next_mem_check = child.t0 + MEMORY_POLL_S
    full_since = None
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
                if zygote_cgroup.near_limit():
                    zygote_cgroup.make_room()  # before anything here charges memory (zygote_cgroup.make_room)
        if not open_fds and child_done:
            break
        if poll_memory and now >= next_mem_check:
            # One process is bounded by RLIMIT_AS; many together by this when there is no cgroup.
            next_mem_check = now + MEMORY_POLL_S
            verdict = limits.verdict()
            if verdict == 'killed' or not cgroup and namespace_memory() > mem_limit:
                status = 'memory'
                end_at_limit(pid)
                break
            # At its limit and full: only the OOM killer can make room, and it may be late.
            full_since = (full_since or now) if verdict == 'full' else None
            if full_since is not None and now - full_since >= FULL_FOR_S:
                status = 'memory'
                end_at_limit(pid)
                break
        # Once the child has exited, only drain what is already written (for at most 0.2 s): in unsafe mode a
        # process it left behind may hold the pipes open forever. SIGCHLD wakes the select (WAKE_R).
        if child_done:
            if now >= drain_until:
                break
            wait = 0
        else:
            wait = min(deadline, next_mem_check) - now if poll_memory else deadline - now
        r, _, _ = select.select(open_fds + [wake_r], [], [], max(0, wait))
        if wake_r in r:
            try:
                os.read(wake_r, 4096)
            except BlockingIOError:
                pass
            r.remove(wake_r)
            continue
        if child_done and not r:
            break
        for fd in r:
            if output.read(fd):
                status = 'output_limit'
        if status == 'output_limit':
            break
    return status, exit_status, output.bufs, output.truncated


def end_at_limit(pid):
    """A call over its memory limit: kill it, then give the zygote room before it charges anything more
    (zygote_cgroup.make_room). stop() reaps it."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    zygote_cgroup.make_room()


def stop(pid, exit_status):
    """Whatever happened, the call is over: kill it (isolated, the init of its pid namespace: the kernel then kills
    every process in it; unsafe, its process group), and reap it. Returns its wait status."""
    try:
        if zygote_os.ISOLATED:
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


def clean_up(fds):
    """Leave the sandbox as the next call must find it: no process of this call (sweep), none of its SysV objects
    (remove_ipc_objects: their memory given back now, not when the kernel frees the namespace), no stale SIGCHLD
    wake-ups (they would wake the next call's first select for nothing), no open pipe of it; in unsafe mode an
    empty work folder."""
    zygote_namespaces.sweep()
    zygote_namespaces.remove_ipc_objects()
    zygote_signals.drain_wakeups()
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
    zygote_mounts.reset_work()


def namespace_memory():
    """Without a cgroup: memory of every process in the sandbox but the zygote, bytes, as proportional set sizes
    (pages the forks share count once). A single process is left to RLIMIT_AS."""
    pids = zygote_namespaces.other_pids()
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
