"""The OOM reserves: processes the kernel's OOM killer ends in the zygote's place while a dead call's memory keeps the
call cgroup full.

Isolates: the zygote from the OOM killer. The zygote shares its calls' cgroup (zygote_cgroup) and cannot take the
lowest OOM score (that needs CAP_SYS_RESOURCE, which these machines do not grant), so its score is 0 and a call's
1000. Once the killer has ended a call over its limit, the call's shared memory (SysV segments, memfd, /tmp pages)
stays charged until the kernel frees its namespaces, and the zygote's next charge (a copy-on-write page of the heap
it shares with the dying call) finds the cgroup full: with no better victim left the killer ended the zygote, and
the pool replaced it (seen while other processes starved the kernel's workers). A reserve, a child of the zygote
with an OOM score below a call's holding RESERVE_BYTES of its own, is that better victim: its death gives the zygote
the room it needs until it raises the limit (zygote_cgroup.make_room). There are two (OOM_SCORES), each the next
victim: the kernel stops counting a killed process as pending once it has unmapped its memory, a moment before it
frees it, and a zygote charging in that moment would otherwise be next (seen in 1 of 4 runs of
tests/python/test_sandbox_oom_reserve.py with one reserve). New ones are made before the next call.
Does not: protect the zygote from a call that makes itself a smaller target than the reserves (by unmapping its
own memory): they then die first and the zygote may still be ended and replaced, which costs time, never
isolation. Nothing when there is no cgroup. Calls never see them (they live in the zygote's pid namespace).
"""
import mmap
import os
import sys
import time

import zygote_cgroup
import zygote_namespaces
import zygote_os
from zygote_os import LIBC

# Enough for what the zygote charges between a call's death and make_room (a few pages), with room to spare.
RESERVE_BYTES = 8 << 20
# Below a call's 1000 by 10% or more of the cgroup's limit in the killer's points (a call is ended first unless it
# holds that much less memory than a reserve), above the zygote's 0; the first reserve goes first.
OOM_SCORES = (900, 800)

# The live reserves, {pid as fork returned it (the zygote's pid namespace, as cgroup.procs lists it): (pid as /proc
# shows it (bwrap's pid namespace), OOM score)}.
LIVE = {}
# Why a reserve could not be made (then the zygote goes on without, and does not try again).
FAILED = []


def ensure():
    """A live reserve of each OOM score before each call: new ones after the killer took some (or at start-up)."""
    if not zygote_cgroup.CGROUP or FAILED:
        return
    prune()
    held = {score for _, score in LIVE.values()}
    for score in OOM_SCORES:
        if score not in held and not make(score):
            return


def prune():
    """Forget the reserves the killer took, before anything trusts the spared pids: a dead reserve's pid may be a
    call's process by now (zygote_supervise.prove_clean calls this first)."""
    for pid in [p for p in LIVE if not alive(p)]:
        zygote_cgroup.SPARED.discard(pid)
        zygote_namespaces.SPARED.discard(LIVE.pop(pid)[0])


def make(score):
    """Fork one reserve with this OOM score; False (and a line on stderr) when it could not be made."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            hold(w, score)
        except BaseException as e:
            os.write(w, b'E' + repr(e).encode()[:200])
        finally:
            os._exit(0)
    os.close(w)
    try:
        seen_as = os.read(r, 256)  # its pid as /proc shows it, once its memory is held
    finally:
        os.close(r)
    if not seen_as[:1].isdigit():
        # Without reserves the zygote still works, less protected: say why, once (the pool logs its last words).
        sys.stderr.write('zygote: no OOM reserve: %s\n' % seen_as[1:].decode(errors='replace'))
        sys.stderr.flush()
        FAILED.append(seen_as)
        return False
    LIVE[pid] = (int(seen_as), score)
    zygote_cgroup.SPARED.add(pid)
    zygote_namespaces.SPARED.add(int(seen_as))
    return True


def alive(pid):
    try:
        wpid, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # reaped already (zygote_namespaces.reap)
        return False
    return wpid == 0


def hold(w, score):
    """In a reserve: the score, the memory (private anonymous pages, written so that they are charged here), word
    to the zygote, then sleep until killed. It dies with the zygote (PR_SET_PDEATHSIG)."""
    LIBC.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9
    zygote_os.set_dumpable()  # its own /proc files are root's while it is not (zygote_os.set_not_dumpable)
    with open('/proc/self/oom_score_adj', 'w') as f:
        f.write(str(score))
    zygote_os.set_not_dumpable()
    ballast = mmap.mmap(-1, RESERVE_BYTES, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    for offset in range(0, RESERVE_BYTES, mmap.PAGESIZE):
        ballast[offset] = 1
    os.write(w, os.readlink('/proc/self').encode())
    os.close(w)
    # Not the protocol's pipes: the pool must see the zygote's end as the end of its stdout.
    os.closerange(0, 65536)
    while True:
        time.sleep(3600)
