import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bwrapCommand, minimalRoots, ZYGOTE_BOOT, type BwrapOptions } from '../../workers/sandbox/bwrap.ts';
import { cgroupDirs, cgroupLayout, enterCgroup } from '../../workers/sandbox/cgroup.ts';

const base: BwrapOptions = {
  python: '/usr/bin/python3',
  roots: ['/usr/bin', '/usr/lib/python3.11', '/usr/lib/x86_64-linux-gnu'],
  links: [
    { path: '/bin', target: 'usr/bin' },
    { path: '/lib64', target: 'usr/lib64' },
  ],
  files: [{ src: '/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2', dest: '/usr/lib64/ld-linux-x86-64.so.2' }],
  uid: 100007,
  asRoot: false,
  tmpBytes: 256 << 20,
  preload: 'numpy',
};

function pairs(args: string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []));
}
function triples(args: string[], flag: string): [string, string][] {
  return args.flatMap((a, i) => (a === flag ? [[args[i + 1], args[i + 2]] as [string, string]] : []));
}

test('bwrapCommand asks for full isolation', () => {
  const { file, args } = bwrapCommand(base);
  assert.equal(file, 'bwrap');
  for (const f of [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--as-pid-1',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
  ])
    assert.ok(args.includes(f), f);
  // Of the capabilities only the two the zygote needs to build each call's namespaces (the code drops them).
  assert.deepEqual(pairs(args, '--cap-drop'), ['ALL']);
  assert.deepEqual(pairs(args, '--cap-add'), ['CAP_SYS_ADMIN', 'CAP_SETPCAP']);
  assert.deepEqual(pairs(args, '--uid'), ['100007']);
  assert.deepEqual(pairs(args, '--hostname'), ['sandbox']);
  assert.deepEqual(pairs(args, '--chdir'), ['/tmp']);
  assert.ok(pairs(args, '--tmpfs').includes('/tmp'));
  assert.equal(args[args.indexOf('--tmpfs') - 1], String(256 << 20), '/tmp is size-capped');
  // Only whitelisted variables.
  const env = pairs(args, '--setenv');
  assert.ok(env.includes('PATH') && env.includes('TOOLSMITH_SANDBOX_ISOLATED'));
  assert.ok(!env.includes('TOOLSMITH_SANDBOX_CGROUP'), 'no cgroup given: none announced');
  assert.ok(args.indexOf('--clearenv') < args.indexOf('--setenv'));
  // The zygote's source arrives on stdin: no host path of it is mounted.
  assert.deepEqual(args.slice(-5), ['/usr/bin/python3', '-I', '-c', ZYGOTE_BOOT, 'numpy']);
});

test('bwrapCommand builds a minimal root: only the given folders, read-only, no /, no /sys, no /etc beyond three entries', () => {
  const { args } = bwrapCommand(base);
  const binds = triples(args, '--ro-bind');
  assert.deepEqual(
    binds.map(([s]) => s),
    [...base.roots, base.files[0].src],
  );
  for (const [s, d] of binds.slice(0, 3)) assert.equal(s, d);
  assert.ok(!binds.some(([s]) => s === '/'), 'the host root is not bound');
  assert.deepEqual(triples(args, '--symlink'), [
    ['usr/bin', '/bin'],
    ['usr/lib64', '/lib64'],
  ]);
  assert.deepEqual(
    triples(args, '--ro-bind-try').map(([s]) => s),
    ['/etc/ld.so.cache', '/etc/localtime', '/etc/alternatives'],
  );
  assert.ok(!args.some((a) => a.startsWith('/sys')), 'no /sys (so no /sys/class/net)');
  assert.deepEqual(pairs(args, '--remount-ro'), ['/', '/dev']);
  assert.ok(args.lastIndexOf('--remount-ro') > args.lastIndexOf('--tmpfs'), 'remounts after mounting');
});

test('bwrapCommand binds no cgroup folder (the zygote gets its cgroup as descriptors) and says which version', () => {
  const v1 = bwrapCommand({
    ...base,
    cgroup: { version: 'v1', memory: '/sys/fs/cgroup/memory/x/z0', pids: '/sys/fs/cgroup/pids/x/z0' },
  }).args;
  assert.ok(!v1.some((a) => a.includes('cgroup/')), 'nothing of the cgroup is mounted');
  assert.equal(v1[v1.indexOf('TOOLSMITH_SANDBOX_CGROUP') + 1], 'v1');
  const v2 = bwrapCommand({ ...base, cgroup: { version: 'v2', dir: '/sys/fs/cgroup/x/z0' } }).args;
  assert.ok(!v2.some((a) => a.includes('cgroup/')), 'nothing of the cgroup is mounted');
  assert.equal(v2[v2.indexOf('TOOLSMITH_SANDBOX_CGROUP') + 1], 'v2');
});

test('bwrapCommand drops to the pool uid with setpriv when root, keeping only the two capabilities bwrap hands on', () => {
  const { file, args } = bwrapCommand({ ...base, asRoot: true });
  assert.equal(file, 'setpriv');
  const dd = args.indexOf('--');
  assert.deepEqual(args.slice(0, dd), [
    '--reuid',
    '100007',
    '--regid',
    '100007',
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all,+sys_admin,+setpcap',
  ]);
  assert.equal(args[dd + 1], 'bwrap');
  assert.ok(args.includes('--cap-drop') && args.includes('--unshare-all'));
});

test("minimalRoots: the interpreter's folders, nested ones collapsed, never / or a top-level folder", () => {
  const exists = (p: string) => !p.endsWith('.zip');
  const roots = minimalRoots(
    {
      executable: '/usr/bin/python3.11',
      paths: [
        '/usr/lib/python311.zip',
        '/usr/lib/python3.11',
        '/usr/lib/python3.11/lib-dynload',
        '/usr/lib/x86_64-linux-gnu',
        '/usr/lib/x86_64-linux-gnu/gconv',
        '/',
        '/usr',
        'relative/x',
        '',
      ],
    },
    exists,
  );
  assert.deepEqual(roots, ['/usr/bin', '/usr/lib/python3.11', '/usr/lib/x86_64-linux-gnu', '/usr/share/zoneinfo']);
});

test("cgroupLayout: v1 controllers under a container's cgroup, v2 unified, neither", () => {
  const mountinfo = [
    '30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
    '31 25 0:27 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
    '32 25 0:28 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
  ].join('\n');
  assert.deepEqual(cgroupLayout('8:pids:/\n4:memory:/process_api/abc\n0::/\n', mountinfo), {
    version: 'v1',
    memory: '/sys/fs/cgroup/memory/process_api/abc',
    pids: '/sys/fs/cgroup/pids',
  });
  // A mount whose root is itself a cgroup (inside a container): paths are relative to it.
  const nested =
    '30 25 0:26 /docker/x /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n31 25 0:27 /docker/x /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids';
  assert.deepEqual(cgroupLayout('8:pids:/docker/x/w\n4:memory:/docker/x/w\n', nested), {
    version: 'v1',
    memory: '/sys/fs/cgroup/memory/w',
    pids: '/sys/fs/cgroup/pids/w',
  });
  assert.deepEqual(
    cgroupLayout('0::/user.slice/worker.service\n', '40 25 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate'),
    { version: 'v2', dir: '/sys/fs/cgroup/user.slice/worker.service' },
  );
  assert.equal(cgroupLayout('0::/\n', '1 0 0:1 / / rw - ext4 /dev/vda rw'), null);
});

test('enterCgroup: the command starts inside every given cgroup, holding each folder open from fd 5, with the lowest OOM score, then execs unchanged', () => {
  const dirs = cgroupDirs({ version: 'v1', memory: '/cg/memory/p/z0', pids: '/cg/pids/p/z0' });
  assert.deepEqual(dirs, ['/cg/memory/p/z0', '/cg/pids/p/z0']);
  assert.deepEqual(cgroupDirs({ version: 'v2', dir: '/cg/p/z0' }), ['/cg/p/z0']);
  const { file, args } = enterCgroup(dirs, { file: 'setpriv', args: ['--reuid', '1', '--', 'bwrap', 'x y'] });
  assert.equal(file, '/bin/sh');
  assert.match(args[1], /echo -1000 .*oom_score_adj/);
  assert.deepEqual(args.slice(2), ['sh', '2', ...dirs, 'setpriv', '--reuid', '1', '--', 'bwrap', 'x y']);
});

test('enterCgroup, run by a real shell: each folder written to its cgroup.procs and open at fds 5 and 6 in the command', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'enter-cgroup-'));
  const dirs = ['memory', 'pids'].map((d) => path.join(root, d));
  for (const d of dirs) fs.mkdirSync(d);
  const { file, args } = enterCgroup(dirs, {
    file: '/bin/sh',
    args: ['-c', 'readlink /proc/self/fd/5 /proc/self/fd/6'],
  });
  const out = spawnSync(file, args, { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  assert.deepEqual(out.stdout.trim().split('\n'), dirs);
  for (const d of dirs) assert.match(fs.readFileSync(path.join(d, 'cgroup.procs'), 'utf8'), /^0\n$/);
  fs.rmSync(root, { recursive: true });
});
