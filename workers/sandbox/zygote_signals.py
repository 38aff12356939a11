"""Signals: the zygote ignores what it can, and SIGCHLD wakes its supervision loop through a pipe (WAKE_R).

Isolates: a stray signal (the pool's own) cannot interrupt a clean-up; a call cannot signal the zygote at all, but
that is the pid namespace's doing (zygote_namespaces), not this module's. Does not: keep faults of the zygote's own
(SIGSEGV, SIGBUS, ...) from crashing it, on purpose: a crashed zygote is replaced. The call starts with every
signal at its default action (reset_for_call).
"""
import fcntl
import os
import signal

# The read end of the SIGCHLD wake-up pipe (open_wakeup); -1 until then. Read as zygote_signals.WAKE_R.
WAKE_R = -1


def set_every_signal(handler, keep=frozenset()):
    """Give every signal that can be set, but those in keep, this handler (SIG_IGN, SIG_DFL)."""
    for s in signal.valid_signals():
        if s not in keep:
            try:
                signal.signal(s, handler)
            except (OSError, ValueError):
                pass


def ignore_signals():
    """Nothing a call does can signal the zygote (it is outside the call's pid namespace), and whatever else may
    (the pool's own stray signals) must not interrupt a clean-up: every signal that can be ignored is, but SIGCHLD
    (it wakes the supervision loop) and the faults (a bug of ours should crash, and be replaced, not spin)."""
    set_every_signal(signal.SIG_IGN, keep={signal.SIGCHLD, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL,
                                           signal.SIGABRT, signal.SIGTRAP, signal.SIGSYS})


def open_wakeup():
    """SIGCHLD writes a byte to a non-blocking pipe whose read end (WAKE_R) the supervision loop selects on."""
    global WAKE_R
    WAKE_R, wake_w = os.pipe()
    for fd in (WAKE_R, wake_w):
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)


def drain_wakeups():
    """Read away the SIGCHLD wake-ups (WAKE_R) that the forks just reaped left behind."""
    try:
        while True:
            os.read(WAKE_R, 4096)
    except (BlockingIOError, OSError):
        pass


def reset_for_call():
    """In the call's process: no wake-up pipe, and (the zygote ignores every signal it can) the default action for
    each signal, as any program starts with."""
    signal.set_wakeup_fd(-1)
    set_every_signal(signal.SIG_DFL)
