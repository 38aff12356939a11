/**
 * The system calls sandboxed code may make: everything else answers ENOSYS (zygote_seccomp.py
 * build_allowing_filter), so a call the kernel grows next, or one no math tool needs, is refused without being named.
 * The refused calls (syscall-filter.ts) are never allowed, whatever these lists say; a test keeps them apart.
 */

/**
 * Measured, not guessed: every call that sandboxed code (and the zygote serving it) made in the sandbox tests, the
 * tool-using, reward, dataset-build, evaluation and trainer tests and `bench:sandbox --quick`, logged from an empty
 * allow list by `scripts/measure-syscalls.py --from-nothing` (2026-12-06: 85 calls, the test probes of unlisted
 * calls left out). CPython with numpy, sympy and scipy, threads, multiprocessing, subprocess, memfd, sockets of its
 * own, System V and POSIX IPC (each call has its own IPC namespace; the isolation battery uses them).
 */
// biome-ignore format: several to a line
export const MEASURED_SYSCALLS: readonly string[] = [
  'access', 'arch_prctl', 'brk', 'chdir', 'chmod', 'clock_nanosleep', 'clone', 'clone3', 'close', 'close_range',
  'connect', 'dup2', 'execve', 'exit', 'exit_group', 'fcntl', 'futex', 'getcwd', 'getdents64', 'getegid', 'geteuid',
  'getgid', 'getpid', 'getppid', 'getpriority', 'getrandom', 'getsockname', 'getsockopt', 'gettid', 'getuid',
  'ioctl', 'kill', 'link', 'lseek', 'madvise', 'memfd_create', 'mkdir', 'mmap', 'mprotect', 'mq_open',
  'mq_timedsend', 'mremap', 'msgctl', 'msgget', 'msgsnd', 'munmap', 'newfstatat', 'openat', 'pipe2', 'poll', 'prctl',
  'pread64', 'prlimit64', 'pselect6', 'pwrite64', 'read', 'readlink', 'recvfrom', 'rename', 'rmdir', 'rseq',
  'rt_sigaction', 'rt_sigprocmask', 'rt_sigreturn', 'semctl', 'semget', 'sendmmsg', 'sendto', 'set_robust_list',
  'set_tid_address', 'setsid', 'setsockopt', 'shmat', 'shmctl', 'shmdt', 'shmget', 'socket', 'socketpair', 'symlink',
  'uname', 'unlink', 'unlinkat', 'vfork', 'wait4', 'write',
];

/**
 * Calls those runs did not make that Python's standard library makes on paths they did not take, each group with
 * what makes them; allowed so that ordinary code does not meet ENOSYS. Left out on purpose: sysinfo (the host's
 * memory and uptime, which /proc hides), mincore (a page-cache side channel), sched_setaffinity, setpriority.
 */
// biome-ignore format: grouped by what makes them, several to a line
export const STDLIB_SYSCALLS: readonly string[] = [
  // files: stat and descriptor variants glibc picks by version, the copies shutil makes (sendfile, copy_file_range), os.truncate, os.fsync, os.replace
  'stat', 'fstat', 'lstat', 'statx', 'statfs', 'fstatfs', 'faccessat', 'faccessat2', 'readlinkat', 'mkdirat',
  'renameat', 'renameat2', 'linkat', 'symlinkat', 'fchmod', 'fchmodat', 'fchdir', 'umask', 'truncate', 'ftruncate',
  'fsync', 'fdatasync', 'fadvise64', 'flock', 'utimensat', 'dup', 'dup3', 'pipe', 'readv', 'writev', 'open',
  'sendfile', 'copy_file_range',
  // processes, threads and signals: fork, signal.pause and sigwait, faulthandler's stack, os.getpgid, resource limits, os.cpu_count
  'fork', 'waitid', 'tgkill', 'getpgrp', 'getpgid', 'setpgid', 'getsid', 'get_robust_list', 'sigaltstack', 'pause',
  'rt_sigsuspend', 'rt_sigtimedwait', 'sched_yield', 'sched_getaffinity', 'sched_getparam', 'sched_getscheduler',
  'getrlimit', 'setrlimit', 'getrusage', 'times',
  // identity and time: os.getgroups, os.getresuid, time.time's fallbacks, signal.alarm and setitimer, time.sleep
  'getgroups', 'getresuid', 'getresgid', 'clock_gettime', 'clock_getres', 'gettimeofday', 'time', 'nanosleep',
  'alarm', 'getitimer', 'setitimer',
  // waiting: select, asyncio (epoll, eventfd), multiprocessing's connections (sendmsg, recvmsg)
  'select', 'ppoll', 'epoll_create1', 'epoll_ctl', 'epoll_wait', 'epoll_pwait', 'eventfd2', 'sendmsg', 'recvmsg',
  'recvmmsg', 'accept', 'accept4', 'bind', 'listen', 'getpeername', 'shutdown',
  // the rest of the IPC families the battery opens (each call's own IPC namespace)
  'semop', 'semtimedop', 'msgrcv', 'mq_unlink', 'mq_timedreceive', 'mq_getsetattr',
];

/** The calls' code may make these (the zygote's program); `scripts/measure-syscalls.py` without --from-nothing
 *  prints what a command made beyond them. */
export const ALLOWED_SYSCALLS: readonly string[] = [...MEASURED_SYSCALLS, ...STDLIB_SYSCALLS];

/**
 * What only the zygote needs, to build each call's namespaces and views (zygote_namespaces.py, zygote_mounts.py)
 * and drop its capabilities (zygote_seccomp.py): allowed in the zygote's program and refused again by the small one
 * each call loads before its code runs.
 */
export const ZYGOTE_SYSCALLS: readonly string[] = ['unshare', 'setns', 'mount', 'capset'];
