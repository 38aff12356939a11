import path from 'node:path';

/**
 * The command line that starts one zygote inside bubblewrap. Pure, so the isolation it asks for is testable:
 * new user/pid/net/ipc/uts/cgroup namespaces (network: an unconnected loopback only), read-only root, a private
 * size-capped /tmp as working directory, the project, data folder, homes and /run (local sockets) hidden, a
 * clean environment, no capabilities. When we are root, setpriv first drops to a uid of the pool's own, so
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
  const bwrap = [
    '--unshare-all', '--die-with-parent', '--new-session',
    '--uid', String(o.uid), '--gid', String(o.uid),
    '--ro-bind', '/', '/',
    '--proc', '/proc',
    '--dev', '/dev',
    '--size', String(o.tmpBytes), '--tmpfs', '/tmp',
    '--tmpfs', '/run',
    '--tmpfs', '/root',
    '--tmpfs', '/home',
    ...unique(o.hide.map((p) => path.resolve(p)))
      .filter((p) => p !== '/' && !p.startsWith('/tmp/') && p !== '/tmp')
      .flatMap((p) => ['--tmpfs', p]),
    '--ro-bind', o.zygotePath, ZYGOTE_IN_SANDBOX,
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
