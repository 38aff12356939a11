"""Toolsmith sandbox zygote: the protocol loop and each call's pipeline. Every isolation concern is a module of its own.

Runs inside bubblewrap (see workers/sandbox/bwrap.ts) as an unprivileged user with no network, on a minimal
root. It imports the heavy modules once (zygote_preload), then serves calls one at a time (docs in
docs/sandbox.md "The code environment (sandbox)"). Each call (run_call): the proof that no earlier call left anything (zygote_supervise.prove_clean;
a zygote that cannot prove it exits and the pool replaces it), a dead call's memory settled and the call's limits
set (zygote_cgroup, zygote_limits), the call spawned (zygote_supervise.spawn: a pid, mount and IPC namespace of its
own, zygote_namespaces; its file-system view, zygote_mounts; its process, zygote_child, which drops every
capability and loads the seccomp filter, zygote_seccomp), supervised against its limits and cleaned up after
(zygote_supervise, zygote_capture, zygote_signals), and classified (zygote_classify).

The modules arrive on stdin: the pool sends them, in dependency order, as the first line (bwrap.ts, ZYGOTE_BOOT),
which installs each in sys.modules and calls main, so no host path of them is mounted (the mount table would show
it). Run as a file (`python3 zygote.py PRELOADS`, unsafe mode only, as tests/unit/tasks-demos.test.ts does) it
imports them from this folder instead.

Protocol: one JSON object per line on stdin (requests) and stdout (responses), after the boot line.
  request  {"id", "code", "input", "timeout", "memory_mb", "max_output", "history": [code, ...], "seed": int|null}
  response {"id", "status", "stdout", "stderr", "exit_code", "error_type", "error_line", "error_message",
            "duration_ms", "stdout_truncated", "stderr_truncated"}
  request  {"id", "ping": true}  ->  {"id", "pong": true, "pid", "leftover", "clean"}
  a session's call: a call's request with {"session": "open" | "continue", "session_time_s"}, answered with a call's
  response and {"session_new", "session_ended"}; {"id", "end_session": true} -> {"id", "ended": true} (zygote_session)
"""
import json
import os
import sys
import time

import zygote_bench
import zygote_cgroup
import zygote_child
import zygote_classify
import zygote_limits
import zygote_mounts
import zygote_namespaces
import zygote_os
import zygote_preload
import zygote_reserve
import zygote_seccomp
import zygote_session
import zygote_signals
import zygote_supervise
from zygote_os import Unclean

PROTO_OUT = sys.stdout.buffer
PROTO_IN = sys.stdin.buffer


def run_call(req):
    """One call, start to end: prove the sandbox clean, settle memory, set limits, spawn, supervise, classify."""
    timeout = zygote_limits.call_timeout(req)
    if timeout is None:
        return zygote_classify.result('timeout', '', '', None, zygote_classify.QUEUE_TIMEOUT, 0, False, False)
    # One budget for both waits before the call (the pool's guard allows MEMORY_SETTLE_S for them).
    settle_by = time.monotonic() + zygote_cgroup.SETTLE_S
    if not zygote_supervise.prove_clean(wait_s=zygote_cgroup.SETTLE_S):
        raise Unclean('a process of an earlier call survived (%s)' % zygote_supervise.leftovers())
    cap = int(req.get('max_output') or 1024 * 1024)
    mem_limit = zygote_limits.memory_bytes(req)
    zygote_cgroup.settle_memory(settle_by)
    zygote_reserve.ensure()
    zygote_cgroup.set_cgroup_limits(mem_limit, int(req.get('max_processes') or 32))
    child = zygote_supervise.spawn(req)
    run = zygote_supervise.supervise(child, timeout, cap, mem_limit)
    return zygote_classify.classify(run, timeout, mem_limit)


def main(boot=None):
    """Start up (own pid namespace, preloads, filters, frozen heap), say ready, then answer requests until stdin
    ends. `boot`: the pool's boot line ({modules, main, refused, bench}); None when run as a file."""
    boot = boot or {}
    if zygote_os.ISOLATED:
        zygote_namespaces.enter_base_pid_namespace()
    zygote_preload.preload(sys.argv[1] if len(sys.argv) > 1 else zygote_preload.DEFAULT)
    zygote_child.hide_from_calls([name for name in sys.modules if name == 'zygote' or name.startswith('zygote_')])
    zygote_filter = b''
    if zygote_os.ISOLATED:
        # Built before the heap is frozen so that the compiler's garbage is collected with the rest.
        zygote_filter = zygote_seccomp.prepare(boot)
    # Move everything imported so far out of the collector's view: children then never touch (and so never
    # copy) those pages, which keeps each fork cheap.
    import gc
    gc.collect()
    gc.freeze()
    zygote_preload.collapse_hugepages()
    zygote_os.set_not_dumpable()
    zygote_signals.ignore_signals()
    zygote_signals.open_wakeup()
    zygote_mounts.make_work()
    if zygote_filter:
        zygote_seccomp.load_syscall_filter(zygote_filter)
    zygote_cgroup.SETTLE_S = float(boot.get('settle_s') or zygote_cgroup.SETTLE_S)
    zygote_cgroup.measure_idle_shmem()
    PROTO_OUT.write(json.dumps({'ready': True, 'pid': zygote_namespaces.SELF}).encode() + b'\n')
    PROTO_OUT.flush()
    for line in PROTO_IN:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if req.get('measure') and boot.get('bench'):
            resp = {'id': req.get('id'), 'measures': zygote_bench.measure_isolation(int(req['measure']), req.get('code') or '')}
        elif req.get('end_session'):
            zygote_session.end()
            resp = {'id': req.get('id'), 'ended': True}
        elif req.get('ping') and zygote_session.SESSION is not None:
            # A session's processes are its own until it ends: the proof (and its sweep) waits for that.
            resp = {'id': req.get('id'), 'pong': True, 'pid': zygote_namespaces.SELF, 'session': True, 'clean': True}
        elif req.get('ping'):
            clean = zygote_supervise.prove_clean()
            resp = {'id': req.get('id'), 'pong': True, 'pid': zygote_namespaces.SELF,
                    'leftover': len(zygote_namespaces.other_pids()), 'clean': clean}
        else:
            try:
                if req.get('session'):
                    resp = zygote_session.run(req)
                else:
                    zygote_session.end()
                    resp = run_call(req)
            except Unclean as e:
                # No answer: the pool sees this zygote die during the call, replaces it and retries the call.
                sys.stderr.write('zygote: %s; exiting to be replaced\n' % (e,))
                sys.stderr.flush()
                os._exit(3)
            except BaseException as e:  # a bug here must not kill the zygote
                resp = {'status': 'internal', 'stdout': '', 'stderr': 'zygote error: %r' % (e,), 'exit_code': None}
                zygote_session.end()
                if not zygote_supervise.prove_clean():
                    os._exit(3)
            resp['id'] = req.get('id')
        PROTO_OUT.write(json.dumps(resp).encode() + b'\n')
        PROTO_OUT.flush()


if __name__ == '__main__':
    main()
