import path from 'node:path';

/**
 * The command line that starts one zygote inside bubblewrap. Pure, so the isolation it asks for is testable:
 * new user/pid/net/ipc/uts/cgroup namespaces (network: an unconnected loopback only), a root made only of what the
 * interpreter needs (read-only), a fixed hostname, no /sys, a clean environment, no nested user namespaces, and of
 * the capabilities only CAP_SYS_ADMIN and CAP_SETPCAP inside the sandbox's own user namespace, which the zygote
 * needs to give each call namespaces of its own and which the call's code drops (zygote_seccomp.py drop_capabilities). The zygote is the namespace's pid 1.
 * When we are root, setpriv first drops to a uid of the pool's own, so that the sandbox's user owns nothing on the
 * host and its process limit is not shared with anyone else.
 */
export interface BwrapOptions {
  python: string;
  /** Host folders bound read-only at the same place: the interpreter and its libraries (minimalRoots). */
  roots: string[];
  /** Host paths that are symlinks into /usr on a merged-/usr system (/bin -> usr/bin, …): recreated as symlinks. */
  links: { path: string; target: string }[];
  /** Single files bound read-only (the dynamic loader at the path executables name). */
  files: { src: string; dest: string }[];
  uid: number;
  asRoot: boolean;
  tmpBytes: number;
  /** Modules the zygote imports before serving (comma-separated). */
  preload: string;
  /** This zygote's call cgroup (cgroup.ts), handed over as open folders (enterCgroup), never bound: only its version
   *  is announced here; none: memory is polled instead. */
  cgroup?: CgroupBind;
}

export type CgroupBind = { version: 'v1'; memory: string; pids: string } | { version: 'v2'; dir: string };

/** The name the zygote's main module runs under (its source arrives on stdin, so no host path of it is mounted);
 *  each other module runs as its neighbour, /run/toolsmith/zygote_cgroup.py and so on. The boot line names it, so
 *  a zygote's command line says what it is. */
export const ZYGOTE_IN_SANDBOX = '/run/toolsmith/zygote.py';
/** `python -I -c ZYGOTE_BOOT`: reads the first line of stdin, {modules: [[name, source], ...] in dependency order,
 *  main, refused, bench}, compiles each module into a module object registered in sys.modules (so `import
 *  zygote_cgroup` finds it with no file on disk: -I keeps sys.path to the standard library), then calls
 *  main's main(boot) (pool.ts ZYGOTE_MODULES). */
export const ZYGOTE_BOOT =
  `import sys,json,types;B=json.loads(sys.stdin.buffer.readline());M=sys.modules;P=${JSON.stringify(ZYGOTE_IN_SANDBOX)};` +
  `[M.__setitem__(n,m:=types.ModuleType(n)) or exec(compile(s,P.replace('zygote.py',n+'.py'),'exec'),m.__dict__) for n,s in B['modules']];M[B['main']].main(B)`;

/** What of /etc the interpreter reads: the dynamic linker's cache, the time zone, and Debian's alternatives (the
 *  BLAS numpy loads is a symlink through /etc/alternatives); bound when present. */
const ETC_FILES = ['/etc/ld.so.cache', '/etc/localtime', '/etc/alternatives'];

export function bwrapCommand(o: BwrapOptions): { file: string; args: string[] } {
  const bwrap = [
    // --as-pid-1: the zygote itself is the namespace's init. Without it bwrap leaves its own init there as pid 1,
    // dumpable and holding the protocol sockets, so a call could ptrace it and outlive the sweep (found by the
    // escape battery). --disable-userns: no nested user namespaces (and the kernel surface they open).
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--as-pid-1',
    '--die-with-parent',
    '--new-session',
    '--uid',
    String(o.uid),
    '--gid',
    String(o.uid),
    // The root is bwrap's own empty tmpfs, made read-only at the end; nothing of the host's / is bound but this.
    ...minimalRootArgs(o.roots, o.links),
    ...o.files.flatMap((f) => ['--ro-bind', f.src, f.dest]),
    ...ETC_FILES.flatMap((f) => ['--ro-bind-try', f, f]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(o.tmpBytes),
    '--tmpfs',
    '/tmp',
    '--size',
    String(Math.max(1 << 20, Math.floor(o.tmpBytes / 4))),
    '--tmpfs',
    '/dev/shm',
    '--dir',
    '/run/toolsmith',
    '--remount-ro',
    '/',
    '--remount-ro',
    '/dev',
    '--cap-drop',
    'ALL',
    '--cap-add',
    'CAP_SYS_ADMIN',
    '--cap-add',
    'CAP_SETPCAP',
    '--hostname',
    'sandbox',
    ...envArgs(o),
    '--chdir',
    '/tmp',
    o.python,
    '-I',
    '-c',
    ZYGOTE_BOOT,
    o.preload,
  ];
  if (!o.asRoot) return { file: 'bwrap', args: bwrap };
  return {
    file: 'setpriv',
    // The bounding set keeps these two only so that bwrap can hand them to the zygote inside its user namespace.
    args: [
      '--reuid',
      String(o.uid),
      '--regid',
      String(o.uid),
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all,+sys_admin,+setpcap',
      '--',
      'bwrap',
      ...bwrap,
    ],
  };
}

/** The zygote's whole environment: one thread per numeric library, no bytecode written, the sandbox's own settings. */
function envArgs(o: BwrapOptions): string[] {
  const env: [string, string][] = [
    ['PATH', '/usr/local/bin:/usr/bin:/bin'],
    ['HOME', '/tmp'],
    ['USER', 'sandbox'],
    ['LANG', 'C.UTF-8'],
    ['OPENBLAS_NUM_THREADS', '1'],
    ['OMP_NUM_THREADS', '1'],
    ['MKL_NUM_THREADS', '1'],
    ['MPLBACKEND', 'Agg'],
    ['PYTHONDONTWRITEBYTECODE', '1'],
    ['TOOLSMITH_SANDBOX_ISOLATED', '1'],
    ['TOOLSMITH_SANDBOX_TMP_BYTES', String(o.tmpBytes)],
    ...(o.cgroup ? [['TOOLSMITH_SANDBOX_CGROUP', o.cgroup.version] as [string, string]] : []),
  ];
  return ['--clearenv', ...env.flatMap(([k, v]) => ['--setenv', k, v])];
}

function minimalRootArgs(roots: string[], links: { path: string; target: string }[]): string[] {
  return [...links.flatMap((l) => ['--symlink', l.target, l.path]), ...roots.flatMap((r) => ['--ro-bind', r, r])];
}

/** What `python -I -c` reports about itself (interpreterRoot in host-root.ts). */
export interface InterpreterInfo {
  executable: string;
  /** The folders of every file it maps after importing its preloads, sys.path, sysconfig's LIBDIR. */
  paths: string[];
}

/**
 * The folders the sandbox's root is made of: the interpreter's bin folder (so tools such as `sleep` that code may
 * start are there too), its library folders and sys.path, and the time-zone data; nested folders collapse into
 * their parent. Never / itself, nor a folder above /usr's children: a root of the host's / is what this replaces.
 */
export function minimalRoots(info: InterpreterInfo, exists: (p: string) => boolean): string[] {
  const wanted = [path.dirname(info.executable), ...info.paths, '/usr/share/zoneinfo']
    .filter((p) => p && path.isAbsolute(p))
    .map((p) => path.resolve(p))
    .filter((p) => p.split('/').filter(Boolean).length >= 2 && exists(p));
  const sorted = [...new Set(wanted)].sort();
  return sorted.filter((p) => !sorted.some((q) => q !== p && p.startsWith(q + '/')));
}
