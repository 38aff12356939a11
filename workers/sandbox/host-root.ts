/**
 * What the sandbox needs of its host before a pool starts: bubblewrap that can isolate (checkBubblewrap, refusing
 * with the fix), and the read-only root each zygote sees — the interpreter, its libraries and the preloaded modules'
 * files, found from the interpreter itself (interpreterRoot, cached per interpreter and preload list).
 *
 * Every probe runs as a child the event loop waits for, never a synchronous spawn: a pool starts inside a worker,
 * whose job heartbeats share that loop, and importing numpy, sympy and scipy took over the test workers' 2 s lease on
 * a busy machine, so a diagnostics job lost its lease while it was only starting a pool.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { UserError } from '../../contracts/errors.ts';
import { type InterpreterInfo, minimalRoots } from './bwrap.ts';
import { STDLIB_PRELOAD } from './route.ts';

const execFileP = promisify(execFile);

/** A probe's exit status (null when it was killed or could not start) and output. */
async function probe(
  cmd: string,
  args: string[],
  timeout: number,
): Promise<{ status: number | null; stdout: string; stderr: string; error: string }> {
  try {
    const { stdout, stderr } = await execFileP(cmd, args, { encoding: 'utf8', timeout, maxBuffer: 16 << 20 });
    return { status: 0, stdout, stderr, error: '' };
  } catch (e) {
    const x = e as { code?: unknown; stdout?: string; stderr?: string; message: string };
    return {
      status: typeof x.code === 'number' ? x.code : null,
      stdout: x.stdout ?? '',
      stderr: x.stderr ?? '',
      error: x.message,
    };
  }
}

/** Refuse to start without working isolation, saying why and how to fix it. */
export async function checkBubblewrap(python: string): Promise<void> {
  if ((await probe('sh', ['-c', 'command -v bwrap'], 20000)).status !== 0) {
    throw new UserError('the sandbox needs bubblewrap to isolate model-written code, and `bwrap` is not installed', {
      fix: 'apt-get install -y bubblewrap (or set TOOLSMITH_SANDBOX_UNSAFE=1 to run code without isolation, never with untrusted models)',
    });
  }
  if (!fs.existsSync(python))
    throw new UserError(`the sandbox interpreter ${python} does not exist`, {
      fix: 'apt-get install -y python3 python3-numpy python3-sympy python3-scipy, or set TOOLSMITH_PYTHON',
    });
  const seccomp = await probe(python, ['-I', '-c', 'import seccomp'], 20000);
  if (seccomp.status !== 0) {
    throw new UserError(
      `the sandbox's syscall filter needs libseccomp's Python module, which ${python} cannot import`,
      {
        fix: 'apt-get install -y python3-seccomp (or set TOOLSMITH_SANDBOX_UNSAFE=1 to run code without isolation, never with untrusted models)',
      },
    );
  }
  const isolated = await probe(
    'bwrap',
    [
      '--ro-bind',
      '/',
      '/',
      '--unshare-all',
      '--unshare-user',
      '--disable-userns',
      '--as-pid-1',
      '--die-with-parent',
      '--',
      python,
      '-c',
      'pass',
    ],
    20000,
  );
  if (isolated.status !== 0) {
    throw new UserError(
      `bubblewrap cannot create an isolated sandbox here: ${(isolated.stderr || isolated.error).trim().split('\n')[0]}`,
      {
        fix: 'install bubblewrap 0.8 or newer (for --disable-userns) and allow user namespaces (sysctl kernel.unprivileged_userns_clone=1, or run as root); TOOLSMITH_SANDBOX_UNSAFE=1 runs without isolation',
      },
    );
  }
}

export type Root = {
  roots: string[];
  links: { path: string; target: string }[];
  files: { src: string; dest: string }[];
};
const roots = new Map<string, Promise<Root>>();

/**
 * The sandbox's read-only root for this interpreter: what it loads to import its preloaded modules (every mapped
 * file's folder, its sys.path, its bin folder), and /bin, /lib… recreated as the symlinks into /usr they are on a
 * merged-/usr system, and the dynamic loader at the path the executable names. Asked of the interpreter once per
 * process and preload list.
 */
export function interpreterRoot(python: string, preload: string[]): Promise<Root> {
  const key = `${python}\0${preload.join(',')}`;
  const known = roots.get(key);
  if (known) return known;
  const asked = askInterpreter(python, preload);
  roots.set(key, asked);
  asked.catch(() => roots.delete(key)); // a failed probe is asked again next time
  return asked;
}

async function askInterpreter(python: string, preload: string[]): Promise<Root> {
  const script = [
    'import sys, json, sysconfig, importlib',
    "for m in sys.argv[1].split(','):",
    '    m and importlib.import_module(m)',
    "maps = {l.split()[-1].rsplit('/', 1)[0] for l in open('/proc/self/maps') if len(l.split()) >= 6 and l.split()[-1].startswith('/')}",
    "print(json.dumps({'executable': sys.executable, 'paths': sorted(maps) + sys.path + [sysconfig.get_config_var('LIBDIR') or '']}))",
  ].join('\n');
  const r = await probe(python, ['-I', '-c', script, [...STDLIB_PRELOAD, ...preload].join(',')], 60000);
  if (r.status !== 0)
    throw new UserError(
      `the sandbox interpreter ${python} cannot import its preloaded modules: ${(r.stderr || '').trim().split('\n').slice(-1)[0]}`,
      { fix: 'apt-get install -y python3-numpy python3-sympy python3-scipy, or set TOOLSMITH_SANDBOX_PRELOAD' },
    );
  const info = JSON.parse(r.stdout) as InterpreterInfo;
  const links = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'].flatMap((p) => {
    try {
      return fs.lstatSync(p).isSymbolicLink() ? [{ path: p, target: fs.readlinkSync(p) }] : [];
    } catch {
      return [];
    }
  });
  // A symlinked /lib64 and the like resolve into /usr: bind the real folders.
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return p;
    }
  };
  const loader = elfInterpreter(real(info.executable));
  const files = loader
    ? [{ src: real(loader), dest: path.join(real(path.dirname(loader)), path.basename(loader)) }]
    : [];
  return {
    roots: minimalRoots({ executable: real(info.executable), paths: info.paths.map(real) }, (p) => fs.existsSync(p)),
    links,
    files,
  };
}

/** The dynamic loader an ELF executable asks for (its PT_INTERP), e.g. /lib64/ld-linux-x86-64.so.2; null if none. */
function elfInterpreter(file: string): string | null {
  try {
    const b = fs.readFileSync(file);
    if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) return null; // 64-bit little-endian ELF only
    const phoff = Number(b.readBigUInt64LE(0x20));
    const phentsize = b.readUInt16LE(0x36);
    const phnum = b.readUInt16LE(0x38);
    for (let i = 0; i < phnum; i++) {
      const h = phoff + i * phentsize;
      if (b.readUInt32LE(h) !== 3) continue; // PT_INTERP
      const off = Number(b.readBigUInt64LE(h + 8));
      const size = Number(b.readBigUInt64LE(h + 32));
      return b
        .subarray(off, off + size)
        .toString('latin1')
        .replace(/\0+$/, '');
    }
  } catch {
    /* not readable: no loader to bind */
  }
  return null;
}
