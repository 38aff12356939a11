"""
A trainer process's tie to the one that started it, without importing torch (ray_group.py's driver has none).
"""
import ctypes
import os
import signal
import sys


def die_with_parent():
    """SIGKILL this process when the one that started it (TOOLSMITH_TRAINER_PARENT_PID: client.ts, or a rank's Ray
    actor) dies, however it dies: no rank is left behind holding a GPU or waiting in a collective for a peer that is
    gone, and no Ray driver outlives its worker (Ray then removes its actors and placement group)."""
    parent = os.environ.get("TOOLSMITH_TRAINER_PARENT_PID")
    if not parent or not sys.platform.startswith("linux"):
        return
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != int(parent):  # it died before the prctl took effect
        os._exit(1)
