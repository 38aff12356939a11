"""The call cgroup: memory and process limits across all of a call's processes, and what memory it leaves behind.

Isolates: a call's memory in total (its processes, memfd, shared memory and /tmp pages) and its number of
processes; when it goes over, the kernel's OOM killer ends the call, not the zygote (prefer_as_oom_victim,
zygote_reserve). The pool made the cgroup (cgroup.ts) and hands it over as open folders (CG_DIR_FDS); the zygote lives in it too (no
migration per call), so each call's limits are set on top of the zygote's own usage (set_cgroup_limits), after a
dead call's memory is given back (settle_memory), raised the moment a call ends at its limit (make_room), and lifted
once it is gone (lift_limit_if_full). Does not: bound one process
(RLIMIT_AS, zygote_limits), CPU or wall time, nor exist in unsafe mode or where no cgroup could be made (CGROUP
is then '' and zygote_supervise polls the processes' memory instead). The call itself never sees the cgroup files:
nothing of them is mounted, and it holds none of their descriptors.
"""
import collections
import errno
import os
import time

import zygote_os
from zygote_os import Unclean

# 'v1' or 'v2': the pool handed this zygote its cgroup folder(s) as open directories; '' when it has none (memory
# is then counted by polling the call's processes, which misses memfd, shared memory and /tmp).
CGROUP = os.environ.get('TOOLSMITH_SANDBOX_CGROUP', '') if zygote_os.ISOLATED else ''
# The folders' descriptors, opened before bubblewrap by the pool's start-up line (cgroup.ts enterCgroup, fds 5 and
# 6 for v1's memory and pids, 5 for v2) and inherited through it: no cgroup folder is bound into the sandbox, so the
# zygote's mount table, and every call's copied from it, has none to hide or detach. Each call closes them before
# its code runs (zygote_child.run_child keeps only 0-3). Tests point CG_DIR at folders of their own instead.
CG_DIR_FDS = ({'memory': 5, 'pids': 6} if CGROUP == 'v1' else {'v2': 5} if CGROUP == 'v2' else {})
CG_DIR = None


def prefer_as_oom_victim():
    """The zygote lives in its call cgroup (no cgroup migration per call: a migration waits for an RCU grace
    period, up to ~13 ms here); the call's process takes the highest OOM score, so that when the cgroup is over its
    limit the kernel kills the call. The pool asks for the lowest score for the zygote, which needs CAP_SYS_RESOURCE
    (these machines do not grant it: the zygote's stays 0); zygote_reserve covers the moment no call is left."""
    if CGROUP:
        with open('/proc/self/oom_score_adj', 'w') as f:
            f.write('1000')


def cg_open(controller, name, flags):
    """Open a file of the call cgroup: beneath the inherited folder descriptor, or under CG_DIR (tests)."""
    if CG_DIR is None:
        return os.open(name, flags, dir_fd=CG_DIR_FDS[controller if CGROUP == 'v1' else 'v2'])
    return os.open(os.path.join(CG_DIR, controller, name) if CGROUP == 'v1' else os.path.join(CG_DIR, name), flags)


# Every cgroup file this zygote reads or writes, opened once ({(controller, file): fd}) and read once at start-up
# (measure_idle_shmem): a read through an open file reuses the buffer the kernel made at its first read, and a write allocates
# nothing charged, whereas opening a file (its struct file) and a first read (its buffer) are kernel memory charged
# to this cgroup. When a call dies at its limit and its shared memory is not yet released, such a charge finds the
# cgroup full with the zygote as the only process left, and the kernel's OOM killer ends the zygote: its lowest OOM
# score (cgroup.ts enterCgroup) needs CAP_SYS_RESOURCE, which these machines do not grant. The call never holds
# these descriptors: its child closes every inherited one before the code runs (zygote_child.run_child).
_FDS = {}


def _fd(controller, name):
    key = (controller, name)
    fd = _FDS.get(key)
    if fd is None:
        try:
            fd = cg_open(controller, name, os.O_RDWR | os.O_CLOEXEC)
        except PermissionError:
            fd = cg_open(controller, name, os.O_RDONLY | os.O_CLOEXEC)  # read-only files (memory.stat, failcnt)
        _FDS[key] = fd
    return fd


def forget_files():
    """Close every file _fd opened (tests point CG_DIR at folders of their own)."""
    for fd in _FDS.values():
        os.close(fd)
    _FDS.clear()


def cg_read(controller, name):
    return os.pread(_fd(controller, name), 1 << 16, 0).decode()


def cg_write(controller, name, value):
    os.pwrite(_fd(controller, name), value.encode(), 0)


# What this zygote last wrote to each limit file, {(controller, file): value}: its one owner is this module.
LIMITS_SET = {}
# Shared memory the cgroup holds while idle (measured at start-up): anything above it is a dead call's SysV
# segments, memfd or /tmp pages that the kernel frees asynchronously (the IPC namespace is released from a
# work queue some milliseconds after the call's last process exits; seconds on a busy machine).
SHMEM_IDLE = 0
# How long the next call waits for a dead call's memory to be released before this zygote gives up and is
# replaced (it is released within ~100 ms on an idle machine). The pool's boot line sets it (MEMORY_SETTLE_S in
# pool.ts, whose no-answer guard allows for that wait).
SETTLE_S = 30.0
# A call that ended within this of its limit leaves the zygote no room: the limit is lifted until the next call.
HEADROOM = 32 << 20


def shmem_bytes():
    """Shared memory charged to the call cgroup now (memory.stat's shmem, v1 and v2 alike)."""
    for line in cg_read('memory', 'memory.stat').splitlines():
        key, _, value = line.partition(' ')
        if key == 'shmem':
            return int(value)
    return 0


def settle_memory(deadline=None):
    """Wait until the memory of earlier calls has been given back, so that the next call's limit is counted on top
    of the zygote's own usage and not of a dead call's pages (which would hand the next call their room once the
    kernel frees them). Raises Unclean when it is not given back within SETTLE_S (or by `deadline`, monotonic)."""
    if not CGROUP:
        return
    deadline = deadline if deadline is not None else time.monotonic() + SETTLE_S
    delay = 0.001
    while shmem_bytes() > SHMEM_IDLE + (1 << 20):
        if time.monotonic() >= deadline:
            raise Unclean('%d MB of an earlier call\'s shared memory was still charged after %g s'
                          % ((shmem_bytes() - SHMEM_IDLE) >> 20, SETTLE_S))
        time.sleep(delay)
        delay = min(0.05, delay * 2)


def limit_key():
    return ('memory', 'memory.limit_in_bytes' if CGROUP == 'v1' else 'memory.max')


def make_room():
    """Raise the call's memory limit by HEADROOM, at once, when a call is ending at it (zygote_supervise: right after
    the kernel or the zygote killed it, or when it died near its limit), before the zygote does anything that may
    charge memory: the dead call's shared memory stays charged until the kernel frees its namespaces, and at a full
    cgroup the zygote's next charge (a page it touches, a kernel buffer) would make the OOM killer end the zygote.
    Charges nothing itself (_FDS). The next call's limit is set afresh (lift_limit_if_full, set_cgroup_limits)."""
    limit = current_limit()
    if not CGROUP or limit is None:
        return
    cg_write(*limit_key(), str(limit + HEADROOM))
    LIMITS_SET[limit_key()] = limit + HEADROOM


def near_limit():
    """Whether the call cgroup is within HEADROOM of its memory limit now (reads charge nothing: _FDS); so full
    that reading its usage failed counts too (see LimitWatch)."""
    limit = current_limit()
    if not CGROUP or limit is None:
        return False
    try:
        return usage_bytes() + HEADROOM >= limit
    except OSError as e:
        if e.errno != errno.ENOMEM:
            raise
        return True


def lift_limit_if_full():
    """After a call: when it ended at (or near) its memory limit, lift the limit. The call's shared memory stays
    charged until the kernel frees its namespaces, and until then any page the zygote touches would find the
    cgroup full with no process left to kill but the OOM reserves (zygote_reserve). The next call sets its own limit
    (set_cgroup_limits) after settle_memory."""
    if near_limit():
        cg_write(*limit_key(), '-1' if CGROUP == 'v1' else 'max')
        del LIMITS_SET[limit_key()]


def set_cgroup_limits(mem_limit, max_processes):
    """Limits for the next call, on top of what the cgroup holds now (the zygote, and page cache, which the kernel
    reclaims before it counts a call over its limit): memory in use + the call's memory limit (rewritten only when
    that moves by more than 4 MiB: a write costs the call time), processes in it + the call's process limit."""
    if not CGROUP:
        return
    used = int(cg_read('memory', 'memory.usage_in_bytes' if CGROUP == 'v1' else 'memory.current'))
    want = {limit_key(): used + mem_limit,
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
    return counter('memory.oom_control' if CGROUP == 'v1' else 'memory.events', 'oom_kill')


def limit_hits():
    """How many times a charge has failed at the call cgroup's memory limit so far (a counter, never reset)."""
    if not CGROUP:
        return 0
    if CGROUP == 'v1':
        return int(cg_read('memory', 'memory.failcnt'))
    return counter('memory.events', 'max')


def counter(name, key):
    """One `key value` line of a memory cgroup file (memory.events, memory.oom_control, memory.stat), 0 if absent."""
    for line in cg_read('memory', name).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key:
            return int(parts[1])
    return 0


# What the cgroup may still hold in page cache for a call at its limit to count as full (reclaim can free no more).
FULL_SLACK = 8 << 20
# At most this many pages charged between two looks (50 ms apart) while charges fail at the limit: the call is
# stuck there, not streaming through page cache (which charges pages as fast as reclaim frees them).
STUCK_PAGES = 16


class LimitWatch:
    """A running call's memory as the kernel sees it, looked at every 50 ms by zygote_supervise.

    verdict() is 'killed' when the OOM killer has acted since the call began, 'full' when the call is at its limit
    and only the OOM killer can let it go on (which may be late, so zygote_supervise ends a call that stays 'full'
    for a second), else None. 'full' is any of: the cgroup holds memory the kernel cannot reclaim up to its limit
    (full_of_unreclaimable); charges keep failing while nothing is charged (stuck_at_limit: the call retries its
    page fault at the limit and the killer does not choose it; seen on a fresh CI machine, the call spinning for its
    whole 10 s); the kernel entered its OOM path (cgroup v2 counts it) and killed nothing. The zygote shares the
    call's cgroup, so at the limit even reading these files can fail (the kernel memory a read needs is charged
    here too): that failure is 'full' as well."""

    def __init__(self):
        self.ooms = oom_kills()
        self.hits = limit_hits()
        self.oom_entries = counter('memory.events', 'oom') if CGROUP == 'v2' else 0
        self.last = None

    def verdict(self):
        if not CGROUP:
            return None
        try:
            if oom_kills() > self.ooms:
                return 'killed'
            hits = limit_hits()
            if hits <= self.hits:
                return None
            if CGROUP == 'v2' and counter('memory.events', 'oom') > self.oom_entries:
                return 'full'
            now = LimitSample(hits, charged_pages(), usage_bytes())
            last, self.last = self.last, now
            if stuck_at_limit(last, now, current_limit()) or full_of_unreclaimable():
                return 'full'
            return None
        except OSError as e:
            if e.errno == errno.ENOMEM:
                return 'full'
            raise


# limit_hits(), charged_pages() and usage_bytes() read at one moment.
LimitSample = collections.namedtuple('LimitSample', 'hits charged used')


def stuck_at_limit(last, now, limit):
    """Pure: between two samples (LimitSample, or None for no earlier one), charges failed, next to nothing was
    charged, and the cgroup is within FULL_SLACK of its limit: the call makes no progress and only the OOM killer
    can make room. A call streaming through page cache at its limit charges pages all along; one computing below
    its limit has no failed charge."""
    if last is None or limit is None:
        return False
    return now.hits > last.hits and now.charged - last.charged <= STUCK_PAGES and now.used + FULL_SLACK >= limit


def charged_pages():
    """Pages charged to the call cgroup so far (v1 memory.stat's pgpgin, a counter), or 0 where it is not kept
    (v2, which counts its OOM path entries instead)."""
    return counter('memory.stat', 'pgpgin') if CGROUP == 'v1' else 0


def usage_bytes():
    return int(cg_read('memory', 'memory.usage_in_bytes' if CGROUP == 'v1' else 'memory.current'))


def current_limit():
    return LIMITS_SET.get(limit_key())


def full_of_unreclaimable():
    """True when the call cgroup is at its memory limit with all but FULL_SLACK of it memory the kernel cannot
    reclaim (no swap: anonymous memory, shared memory, /tmp pages, kernel memory), that is when only the OOM killer
    can make room. zygote_supervise ends such a call itself when the OOM killer is late: on a machine whose kernel
    threads are starved, reclaim at the limit was seen to retry for the call's whole 10 s wall clock."""
    limit = current_limit()
    if not CGROUP or limit is None:
        return False
    return unreclaimable_bytes() + FULL_SLACK >= limit


def unreclaimable_bytes():
    """What the call cgroup holds less its page cache (memory.stat's active_file and inactive_file)."""
    used = usage_bytes()
    reclaimable = 0
    for line in cg_read('memory', 'memory.stat').splitlines():
        key, _, value = line.partition(' ')
        if key in ('active_file', 'inactive_file'):
            reclaimable += int(value)
    return used - reclaimable


# The zygote's own helpers in the cgroup (zygote_reserve), as cgroup.procs lists them (the zygote's pid namespace).
SPARED = set()


def cgroup_procs():
    """The call cgroup's processes but the zygote and its helpers (the process it left as bwrap's pid 1 is outside
    our pid namespace, so it is not listed).

    Opened afresh for each read, not kept in _FDS: cgroup v1 answers every later read of an open cgroup.procs with
    the list it made at that file's first read, for as long as reads come less than a second apart (a kernel worker
    drops the list a second after the last one), so prove_clean, polling a kept descriptor, saw an OOM reserve the
    killer had taken as a member until the zygote gave up and was replaced (a fresh-clone run under CPU
    starvation). It is read between calls only, after lift_limit_if_full, when opening a file finds room."""
    if not CGROUP:
        return []
    with os.fdopen(cg_open('memory', 'cgroup.procs', os.O_RDONLY | os.O_CLOEXEC), 'rb') as f:
        listed = [int(x) for x in f.read().split()]
    return [pid for pid in listed if pid != os.getpid() and pid not in SPARED]


def measure_idle_shmem():
    """At start-up, before the first call: the shared memory the cgroup holds while idle (SHMEM_IDLE)."""
    global SHMEM_IDLE
    if CGROUP:
        SHMEM_IDLE = shmem_bytes()
        # Once before any call: every file a call's supervision reads or writes opened and read (_FDS), so that
        # nothing is charged for them while a call holds the cgroup at its limit.
        watch = LimitWatch()
        watch.hits = -1  # every file verdict() reads, read
        watch.verdict()
        unreclaimable_bytes()
        cg_read(*limit_key())
        cg_read('pids', 'pids.current')
        cg_read('pids', 'pids.max')
