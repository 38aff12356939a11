import path from 'node:path';

/**
 * The command line that starts one zygote inside bubblewrap. Pure, so the isolation it asks for is testable:
 * new user/pid/net/ipc/uts/cgroup namespaces (network: an unconnected loopback only), read-only root, a private
 * size-capped /tmp as working directory, the project, data folder, homes and /run (local sockets) hidden, a
 * clean environment, no capabilities, no nested user namespaces; the zygote is the namespace's pid 1. When we are root, setpriv first drops to a uid of the pool's own, so
 * that the sandbox's user owns nothing on the host and its process limit is not shared with anyone else.
 */
export interface BwrapOptions {
  python: string;
  zygotePath: string;
  hide: string[];
  uid: number;
  asRoot: boolean;
  tmpBytes: number;
  /** Modules the zygote imports before serving (comma-separated). */
  preload: string;
}

export const ZYGOTE_IN_SANDBOX = '/run/toolsmith/zygote.py';

export function bwrapCommand(o: BwrapOptions): { file: string; args: string[] } {
  const hidden = unique(o.hide.map((p) => path.resolve(p)))
    .filter((p) => p !== '/' && !p.startsWith('/tmp/') && p !== '/tmp' && !['/run', '/root', '/home'].includes(p));
  const bwrap = [
    // --as-pid-1: the zygote itself is the namespace's init. Without it bwrap leaves its own init there as pid 1,
    // dumpable and holding the protocol sockets, so a call could ptrace it and outlive the sweep (found by the
    // escape battery). As init the zygote is also immune to signals from its calls, and its death takes the whole
    // namespace down. --disable-userns: no nested user namespaces (and the kernel surface they open).
    '--unshare-all', '--unshare-user', '--disable-userns', '--as-pid-1', '--die-with-parent', '--new-session',
    '--uid', String(o.uid), '--gid', String(o.uid),
    '--ro-bind', '/', '/',
    '--proc', '/proc',
    '--dev', '/dev',
    '--size', String(o.tmpBytes), '--tmpfs', '/tmp',
    // /dev/shm stays writable (multiprocessing's semaphores live there), size-capped, and wiped after each call.
    '--size', String(Math.max(1 << 20, Math.floor(o.tmpBytes / 4))), '--tmpfs', '/dev/shm',
    '--tmpfs', '/run',
    '--tmpfs', '/root',
    '--tmpfs', '/home',
    ...hidden.flatMap((p) => ['--tmpfs', p]),
    '--ro-bind', o.zygotePath, ZYGOTE_IN_SANDBOX,
    // The empty folders laid over hidden paths are read-only: otherwise a call could leave files there for the
    // next call to find (the zygote wipes only /tmp and /dev/shm), which the escape battery showed.
    ...['/dev', '/run', '/root', '/home', ...hidden].flatMap((p) => ['--remount-ro', p]),
    '--cap-drop', 'ALL',
    '--hostname', 'sandbox',
    '--clearenv',
    '--setenv', 'PATH', '/usr/local/bin:/usr/bin:/bin',
    '--setenv', 'HOME', '/tmp',
    '--setenv', 'LANG', 'C.UTF-8',
    '--setenv', 'OPENBLAS_NUM_THREADS', '1',
    '--setenv', 'OMP_NUM_THREADS', '1',
    '--setenv', 'MKL_NUM_THREADS', '1',
    '--setenv', 'MPLBACKEND', 'Agg',
    '--setenv', 'PYTHONDONTWRITEBYTECODE', '1',
    '--setenv', 'TOOLSMITH_SANDBOX_ISOLATED', '1',
    '--chdir', '/tmp',
    o.python, '-I', ZYGOTE_IN_SANDBOX, o.preload,
  ];
  if (!o.asRoot) return { file: 'bwrap', args: bwrap };
  return {
    file: 'setpriv',
    args: ['--reuid', String(o.uid), '--regid', String(o.uid), '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--', 'bwrap', ...bwrap],
  };
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}
