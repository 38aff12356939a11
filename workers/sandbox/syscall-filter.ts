/**
 * The system calls the sandboxed code may never make: each answers its errno instead of running, whatever the allow
 * list (syscall-allow.ts) says (the zygote compiles both into a seccomp program with libseccomp, zygote_seccomp.py
 * build_allowing_filter; a call on neither list answers ENOSYS too). A math tool needs none of them; many would
 * already fail for want of a capability, and the filter makes sure of it whatever the kernel grows next. Whole calls answer ENOSYS, as on a kernel without them (libraries then fall back, and no kernel
 * that has the call answers that, so a test can tell the filter's refusal from the kernel's);
 * `tests/integration/sandbox-seccomp.test.ts` makes every one of them from inside the sandbox.
 */
export interface RefusedCall {
  name: string;
  /** Why a tool call must not have it. */
  why: string;
  /** errno name answered (default ENOSYS). */
  errno?: string;
  /** Refused only when the first argument equals this value. */
  arg0?: number;
  /** Refused only when the first argument differs from this value. */
  arg0_not?: number;
}

export const AF_VSOCK = 40;

export const REFUSED_SYSCALLS: RefusedCall[] = [
  {
    name: 'io_uring_setup',
    why: 'io_uring: a second syscall interface, outside this filter and a large kernel attack surface',
  },
  { name: 'io_uring_enter', why: 'io_uring' },
  { name: 'io_uring_register', why: 'io_uring' },
  { name: 'userfaultfd', why: 'lets a process stall the kernel mid-copy, a staple of kernel exploits' },
  { name: 'keyctl', why: 'kernel keyrings are per user, not per namespace: shared between calls' },
  { name: 'add_key', why: 'kernel keyrings' },
  { name: 'request_key', why: 'kernel keyrings' },
  { name: 'perf_event_open', why: 'hardware counters: side channels and kernel attack surface' },
  { name: 'bpf', why: 'kernel programs' },
  { name: 'ptrace', why: "another process's memory and registers" },
  { name: 'process_vm_readv', why: "another process's memory" },
  { name: 'process_vm_writev', why: "another process's memory" },
  { name: 'pidfd_getfd', why: "another process's open files" },
  { name: 'kcmp', why: "compares other processes' kernel objects" },
  { name: 'process_madvise', why: "another process's memory" },
  { name: 'prlimit64', why: "another process's limits (its own, pid 0, stay allowed)", arg0_not: 0, errno: 'EPERM' },
  {
    name: 'socket',
    why: 'AF_VSOCK reaches the hypervisor host, outside the network namespace',
    arg0: AF_VSOCK,
    errno: 'EPERM',
  },
  { name: 'mount', why: 'file system views' },
  { name: 'umount2', why: 'file system views' },
  { name: 'pivot_root', why: 'file system views' },
  { name: 'chroot', why: 'file system views' },
  { name: 'fsopen', why: 'the new mount API' },
  { name: 'fsconfig', why: 'the new mount API' },
  { name: 'fsmount', why: 'the new mount API' },
  { name: 'fspick', why: 'the new mount API' },
  { name: 'open_tree', why: 'the new mount API' },
  { name: 'move_mount', why: 'the new mount API' },
  { name: 'mount_setattr', why: 'the new mount API' },
  { name: 'unshare', why: 'new namespaces' },
  { name: 'setns', why: 'other namespaces' },
  { name: 'name_to_handle_at', why: 'file handles bypass the mount view' },
  { name: 'open_by_handle_at', why: 'file handles bypass the mount view' },
  { name: 'fanotify_init', why: 'file system monitoring' },
  { name: 'swapon', why: 'host administration' },
  { name: 'swapoff', why: 'host administration' },
  { name: 'reboot', why: 'host administration' },
  { name: 'kexec_load', why: 'host administration' },
  { name: 'kexec_file_load', why: 'host administration' },
  { name: 'init_module', why: 'kernel modules' },
  { name: 'finit_module', why: 'kernel modules' },
  { name: 'delete_module', why: 'kernel modules' },
  { name: 'acct', why: 'host administration' },
  { name: 'quotactl', why: 'host administration' },
  { name: 'syslog', why: 'the kernel log' },
  { name: 'iopl', why: 'I/O ports' },
  { name: 'ioperm', why: 'I/O ports' },
  { name: 'modify_ldt', why: '16-bit segments, exploit surface' },
  { name: 'vhangup', why: 'terminals' },
  { name: 'settimeofday', why: 'the host clock' },
  { name: 'clock_settime', why: 'the host clock' },
  { name: 'clock_adjtime', why: 'the host clock' },
  { name: 'adjtimex', why: 'the host clock' },
];
