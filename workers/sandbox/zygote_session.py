"""Sessions: the calls of one trajectory in one interpreter (the recipe's `tool.session: "trajectory"`).

Isolates: one session from every other call and session exactly as a call is isolated (docs/sandbox.md): the
session's process is forked like a call's (zygote_supervise.spawn_into: pid, mount and IPC namespaces of its own, its
/tmp, no capability, the seccomp filter) and the zygote serves nothing else while it is open; it ends with its
trajectory (end), at a limit, or when its process dies, and the zygote then sweeps and proves itself clean before
anything else runs, as after a call. Its limits cover the whole session: the cgroup's memory and process limits are
set once when it opens (what earlier calls keep counts against later ones), its process's CPU limit is the
session's time, and each call's wall clock is the shorter of the call's timeout and the session time left. A call
at a limit ends the session (its variables are gone; the reply says `session_ended`), an exception does not.
Does not: keep the result of a call trustworthy against its own session's code, which can write the info pipe that
says a call is done (it can only misreport its own calls: no other call or session shares the pipe).

Protocol, beside a call's fields: {"session": "open" | "continue", "session_time_s"} runs the code in a new session or
the open one; {"end_session": true} ends it -> {"ended": true}.
"""
import collections
import json
import os
import select
import time

import zygote_capture
import zygote_cgroup
import zygote_child
import zygote_classify
import zygote_limits
import zygote_namespaces
import zygote_os
import zygote_reserve
import zygote_signals
import zygote_supervise
from zygote_os import Unclean

Session = collections.namedtuple('Session', 'child req_w mem_limit cap ends_at')
# The open session, or None.
SESSION = None


def run(req):
    """One call of a session: opens a new one first when asked to (or when the last one ended)."""
    global SESSION
    timeout = zygote_limits.call_timeout(req)
    if timeout is None:
        return zygote_classify.result('timeout', '', '', None, zygote_classify.QUEUE_TIMEOUT, 0, False, False)
    fresh = req.get('session') == 'open' or SESSION is None
    if fresh:
        end()
        SESSION = open_session(req)
    left = SESSION.ends_at - time.monotonic()
    if left <= 0:
        end()
        resp = zygote_classify.result('timeout', '', '', None, {
            'type': 'SessionTimeLimit', 'message': 'the session used up its %g s' % float(req.get('session_time_s') or 0)},
            0, False, False)
        resp['session_ended'] = True
        return resp
    resp = call(SESSION, req, min(timeout, left))
    resp['session_new'] = fresh
    if resp.get('session_ended'):
        end()
    return resp


def open_session(req):
    """Prove the sandbox clean, set the session's limits, and fork its process (zygote_child.run_session)."""
    settle_by = time.monotonic() + zygote_cgroup.SETTLE_S
    if not zygote_supervise.prove_clean(wait_s=zygote_cgroup.SETTLE_S):
        raise Unclean('a process of an earlier call survived (%s)' % zygote_supervise.leftovers())
    mem_limit = zygote_limits.memory_bytes(req)
    zygote_cgroup.settle_memory(settle_by)
    zygote_reserve.ensure()
    zygote_cgroup.set_cgroup_limits(mem_limit, int(req.get('max_processes') or 32))
    session_s = float(req.get('session_time_s') or 60)
    req_r, req_w = os.pipe()
    # The process's CPU limit is the whole session's time (zygote_limits.set_rlimits reads `timeout`).
    child = zygote_supervise.spawn(dict(req, timeout=session_s, input=''), session_fd=req_r, other_fds=(req_w,))
    os.close(req_r)
    # Written only when select says there is room, and never waited on: a session whose code stopped reading its
    # requests must not stall the zygote past the call's deadline.
    os.set_blocking(req_w, False)
    return Session(child, req_w, mem_limit, int(req.get('max_output') or 1024 * 1024), time.monotonic() + session_s)


def call(session, req, timeout):
    """Send the code to the session's process and read its output until it says the call is done; a limit ends
    the session."""
    t0 = time.monotonic()
    limits = zygote_cgroup.LimitWatch()
    message = json.dumps({'code': req.get('code') or '', 'input': req.get('input') or '', 'seed': req.get('seed')})
    status, exit_status, output, done = watch(session, message.encode() + b'\n', t0 + timeout, limits)
    duration = (time.monotonic() - t0) * 1000
    oom = zygote_cgroup.oom_kills() > limits.ooms
    ended = done is None
    if ended:
        exit_status = zygote_supervise.stop(session.child.pid, exit_status)
        zygote_cgroup.lift_limit_if_full()
        info = bytes(output.bufs[session.child.info_r])
    else:
        # The session goes on: its verdict is the call's, read as a process ending that way would be.
        exit_status = (done.get('exit') & 0xFF) << 8 if isinstance(done.get('exit'), int) else 1 << 8
        info = json.dumps(done['error']).encode() if isinstance(done.get('error'), dict) else b''
    run_ = zygote_supervise.Run(status, exit_status, duration, bytes(output.bufs[session.child.out_r]),
                                bytes(output.bufs[session.child.err_r]), info,
                                output.truncated[session.child.out_r], output.truncated[session.child.err_r], oom)
    resp = zygote_classify.classify(run_, timeout, session.mem_limit)
    resp['session_ended'] = ended
    return resp


def watch(session, message, deadline, limits):
    """Write the call's message, then read stdout, stderr and the info pipe until the info pipe has the call's
    done line (then drain what stdout and stderr already hold), the process exits, or a limit is hit. Returns
    (status, exit_status, output, done): status None when no limit was hit; done None when the session ended."""
    child = session.child
    output = zygote_capture.Output(child.out_r, child.err_r, child.info_r, session.cap)
    info_seen = len(output.bufs[child.info_r])
    pending = memoryview(message)
    wake_r = zygote_signals.WAKE_R
    status = None
    exit_status = None
    full_since = None
    while True:
        now = time.monotonic()
        if now >= deadline:
            return 'timeout', None, output, None
        wpid, st = os.waitpid(child.pid, os.WNOHANG)
        if wpid == child.pid:
            drain(output)
            return status, st, output, None
        if zygote_os.ISOLATED:
            verdict = limits.verdict()
            if verdict == 'killed':
                zygote_supervise.end_at_limit(child.pid)
                return 'memory', None, output, None
            full_since = (full_since or now) if verdict == 'full' else None
            if full_since is not None and now - full_since >= zygote_supervise.FULL_FOR_S:
                zygote_supervise.end_at_limit(child.pid)
                return 'memory', None, output, None
        writers = [session.req_w] if pending else []
        wait = min(deadline - now, zygote_supervise.MEMORY_POLL_S)
        r, w, _ = select.select(output.open_fds + [wake_r], writers, [], max(0, wait))
        if w:
            try:
                pending = pending[os.write(session.req_w, pending[:65536]):]
            except BlockingIOError:
                pass
        if wake_r in r:
            zygote_signals.drain_wakeups()
            r.remove(wake_r)
        for fd in r:
            if output.read(fd):
                return 'output_limit', None, output, None
        info = output.bufs[child.info_r]
        nl = info.find(b'\n', info_seen)
        if nl != -1:
            drain(output)
            try:
                done = json.loads(bytes(info[info_seen:nl]))
            except ValueError:
                done = {}
            del info[:]
            return status, exit_status, output, done if isinstance(done, dict) else {}


def drain(output):
    """What stdout and stderr already hold: the process flushed both before it wrote its done line."""
    while output.open_fds:
        r, _, _ = select.select(output.open_fds, [], [], 0)
        if not r:
            return
        for fd in r:
            output.read(fd)


def end():
    """End the open session, if any: its process and everything in its namespaces killed, then swept and cleaned as
    after a call."""
    global SESSION
    session, SESSION = SESSION, None
    if session is None:
        return
    try:
        zygote_supervise.stop(session.child.pid, None)
    except ChildProcessError:  # reaped already: the call that ended the session saw it exit
        pass
    zygote_cgroup.lift_limit_if_full()
    zygote_supervise.clean_up((session.child.out_r, session.child.err_r, session.child.info_r, session.req_w))
