"""Mounts: what of the file system a call sees, inside the read-only root bubblewrap built (bwrap.ts).

Isolates: in the call's own mount namespace (zygote_namespaces), a /proc of its pid namespace holding only the
processes' folders (subset=pid: no /proc/sys, cpuinfo, meminfo or other view of the host's kernel), an empty
size-capped /tmp (with the working folder WORK) and /dev/shm: nothing a call writes survives it, whatever its permission bits or depth. Does not: choose the sandbox's root (bubblewrap binds only what
the interpreter needs, read-only, and no project path), nor count the memory /tmp holds (zygote_cgroup). Unsafe
mode has no mount namespace: calls share a private temp folder that the zygote empties after each (reset_work).
"""
import os
import tempfile

import zygote_os
from zygote_os import LIBC, check

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 16384, 1 << 18
TMP_BYTES = int(os.environ.get('TOOLSMITH_SANDBOX_TMP_BYTES') or (256 << 20))
TMP_ROOT = '/tmp' if zygote_os.ISOLATED else tempfile.mkdtemp(prefix='toolsmith-unsafe-')
WORK = os.path.join(TMP_ROOT, 'work')


def mount(source, target, fstype, flags, data=None):
    check(LIBC.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                     data.encode() if data else None), 'mount ' + target)


def build_call_view():
    """In the call's fresh mount namespace: a /proc of its own pid namespace holding only the processes' folders
    (subset=pid: no /proc/sys, cpuinfo, meminfo or other view of the host's kernel), empty size-capped /tmp (with
    the working folder) and /dev/shm. No cgroup folder is mounted to hide: the zygote holds its cgroup as
    descriptors (zygote_cgroup.CG_DIR_FDS), which the call closes."""
    mount('none', '/', None, MS_REC | MS_PRIVATE)
    mount('proc', '/proc', 'proc', MS_NOSUID | MS_NODEV | MS_NOEXEC, 'subset=pid')
    mount('tmpfs', '/tmp', 'tmpfs', MS_NOSUID | MS_NODEV, 'size=%d,mode=0700' % TMP_BYTES)
    mount('tmpfs', '/dev/shm', 'tmpfs', MS_NOSUID | MS_NODEV, 'size=%d,mode=1777' % max(1 << 20, TMP_BYTES // 4))
    os.mkdir(WORK, 0o700)


def make_work():
    """The zygote's own working folder, made once at start-up (isolated, each call mounts its own /tmp over it)."""
    os.makedirs(WORK, exist_ok=True)


def reset_work():
    """Unsafe mode only: an empty work folder for the next call."""
    if not zygote_os.ISOLATED:
        remove_tree(TMP_ROOT)
        os.makedirs(WORK, exist_ok=True)

def remove_tree(d):
    """Unsafe mode only (isolated calls get a fresh tmpfs): remove everything under d, whatever its permission bits
    and depth (iteratively: no recursion limit)."""
    stack = [d]
    dirs = []
    while stack:
        cur = stack.pop()
        try:
            os.chmod(cur, 0o700)
            names = os.listdir(cur)
        except OSError:
            continue
        dirs.append(cur)
        for name in names:
            p = os.path.join(cur, name)
            if os.path.isdir(p) and not os.path.islink(p):
                stack.append(p)
            else:
                try:
                    os.unlink(p)
                except OSError:
                    pass
    for cur in reversed(dirs[1:]):
        try:
            os.rmdir(cur)
        except OSError:
            pass
