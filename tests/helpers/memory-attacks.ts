/**
 * Calls that take memory past their limit in the ways a cgroup must count: SysV shared memory, memfd pages and /tmp
 * pages (each above what its limit allows). Shared by the escape battery (sandbox-isolation) and the memory-pressure
 * test, which repeats them while the kernel's release of their memory is slow.
 */
import type { SandboxCall } from '../../workers/sandbox/types.ts';

/**
 * Each call must end at its memory limit, however long a busy machine makes filling the memory take: its wall-clock
 * limit is only a bound (on a busy CI machine one was still filling its memory when a 10 s limit stopped it:
 * sandbox-memory-pressure.test.ts).
 */
const TIMEOUT_S = 60;

/** 12 × 64 MB SysV segments, attached, written and detached (they outlive the process until the IPC namespace dies). */
export const SYSV_SHM: SandboxCall = {
  code: String.raw`
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
for i in range(12):
    seg = libc.shmget(0, 64 << 20, 0o1000 | 0o600)
    addr = libc.shmat(seg, None, 0)
    ctypes.memset(addr, 1, 64 << 20)
    libc.shmdt(ctypes.c_void_p(addr))
print('held 768 MB')`,
  memoryMb: 256,
  timeoutS: TIMEOUT_S,
};

/** 12 × 64 MB anonymous memory files, held open. */
export const MEMFD: SandboxCall = {
  code: String.raw`
import os
fds = []
for i in range(12):
    fd = os.memfd_create('x%d' % i)
    for _ in range(64):
        os.write(fd, b'z' * (1 << 20))
    fds.append(fd)
print('held 768 MB')`,
  memoryMb: 256,
  timeoutS: TIMEOUT_S,
};

/** 200 MB of files in the call's /tmp (a tmpfs: its pages are memory) under a 128 MB limit. */
export const TMP_PAGES: SandboxCall = {
  code: String.raw`
for i in range(4):
    with open('/tmp/f%d' % i, 'wb') as f:
        for _ in range(50):
            f.write(b'z' * (1 << 20))
print('wrote 200 MB')`,
  memoryMb: 128,
  timeoutS: TIMEOUT_S,
};
