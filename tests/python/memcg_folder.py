"""A real cgroup v1 memory folder for the sandbox's Python tests (test_sandbox_memory_verdict.py,
test_sandbox_oom_reserve.py): where this process's memory cgroup is, how a child joins a folder, and how the folder
goes once its pages have left."""
import os
import time


def memory_root():
    """This process's v1 memory cgroup folder, or None."""
    try:
        lines = open("/proc/self/cgroup").read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            folder = "/sys/fs/cgroup/memory" + path
            return folder if os.path.isdir(folder) else None
    return None


def joiner(folder):
    """A preexec_fn that moves the child into `folder` before it allocates anything."""
    def join():
        with open(os.path.join(folder, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    return join


def remove(folder, timeout=30):
    """Remove `folder` once the pages charged to it have left (they leave with their processes and files)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.rmdir(folder)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
