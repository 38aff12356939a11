import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bwrapCommand, ZYGOTE_IN_SANDBOX } from '../../workers/sandbox/bwrap.ts';

const base = { python: '/usr/bin/python3', zygotePath: '/srv/app/workers/sandbox/zygote.py', hide: ['/srv/app', '/srv/app/data', '/home/alice', '/tmp/x'], uid: 100007, asRoot: false, tmpBytes: 256 << 20, preload: 'numpy' };

function pairs(args: string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []));
}

test('bwrapCommand asks for full isolation', () => {
  const { file, args } = bwrapCommand(base);
  assert.equal(file, 'bwrap');
  for (const f of ['--unshare-all', '--unshare-user', '--disable-userns', '--as-pid-1', '--die-with-parent', '--new-session', '--clearenv']) assert.ok(args.includes(f), f);
  assert.deepEqual(pairs(args, '--cap-drop'), ['ALL']);
  assert.equal(args[args.indexOf('--ro-bind') + 1], '/');
  assert.deepEqual(pairs(args, '--uid'), ['100007']);
  assert.deepEqual(pairs(args, '--chdir'), ['/tmp']);
  assert.ok(pairs(args, '--tmpfs').includes('/tmp'));
  assert.equal(args[args.indexOf('--tmpfs') - 1], String(256 << 20), '/tmp is size-capped');
  // The project, its data folder and homes are hidden behind empty read-only folders; /tmp paths need no hiding.
  const tmpfs = pairs(args, '--tmpfs');
  const ro = pairs(args, '--remount-ro');
  for (const p of ['/srv/app', '/srv/app/data', '/home/alice', '/root', '/home', '/run']) {
    assert.ok(tmpfs.includes(p), `hides ${p}`);
    assert.ok(ro.includes(p), `${p} read-only`);
  }
  assert.ok(!tmpfs.includes('/tmp/x'));
  assert.ok(args.indexOf('--remount-ro') > args.lastIndexOf('--tmpfs'), 'remounts after mounting');
  // Only whitelisted variables.
  const env = pairs(args, '--setenv');
  assert.ok(env.includes('PATH') && env.includes('TOOLSMITH_SANDBOX_ISOLATED'));
  assert.ok(args.indexOf('--clearenv') < args.indexOf('--setenv'));
  assert.deepEqual(args.slice(-4), ['/usr/bin/python3', '-I', ZYGOTE_IN_SANDBOX, 'numpy']);
  const zb = args.lastIndexOf('--ro-bind');
  assert.deepEqual(args.slice(zb + 1, zb + 3), [base.zygotePath, ZYGOTE_IN_SANDBOX]);
});

test('bwrapCommand drops to the pool uid with setpriv when root', () => {
  const { file, args } = bwrapCommand({ ...base, asRoot: true });
  assert.equal(file, 'setpriv');
  const dd = args.indexOf('--');
  assert.deepEqual(args.slice(0, dd), ['--reuid', '100007', '--regid', '100007', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all']);
  assert.equal(args[dd + 1], 'bwrap');
  assert.ok(args.includes('--cap-drop') && args.includes('--unshare-all'));
});

test('bwrapCommand never hides / or mounts over it', () => {
  const { args } = bwrapCommand({ ...base, hide: ['/', '/tmp', '/srv/app/'] });
  const tmpfs = pairs(args, '--tmpfs');
  assert.ok(!tmpfs.includes('/'));
  assert.equal(tmpfs.filter((p) => p === '/tmp').length, 1);
  assert.equal(tmpfs.filter((p) => p === '/srv/app').length, 1);
});
