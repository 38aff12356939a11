import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { rayCommand } from '../../cli/ray.ts';
import { UserError } from '../../contracts/errors.ts';
import { rayStartInvocation } from '../../workers/cluster/ray-start.ts';

const TOKEN = '/secret/token';
const flag = (args: string[], name: string) => args[args.indexOf(name) + 1];

test('a head on the default address: loopback, single-machine mode, token auth, the Jobs API to point Toolsmith at', () => {
  const s = rayStartInvocation({ tokenFile: TOKEN, cpus: 2 });
  assert.equal(s.loopbackOnly, true);
  assert.deepEqual(s.env, {
    RAY_AUTH_MODE: 'token',
    RAY_AUTH_TOKEN_PATH: TOKEN,
    RAY_USAGE_STATS_ENABLED: '0',
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER: '0',
  });
  assert.equal(s.args[0], 'start');
  assert.ok(s.args.includes('--head') && s.args.includes('--block'));
  assert.equal(flag(s.args, '--node-ip-address'), '127.0.0.1');
  assert.equal(flag(s.args, '--dashboard-host'), '127.0.0.1');
  assert.equal(flag(s.args, '--port'), '6379');
  assert.equal(flag(s.args, '--num-cpus'), '2');
  assert.equal(s.gcsAddress, '127.0.0.1:6379');
  assert.equal(s.dashboardUrl, 'http://127.0.0.1:8265');
  assert.equal(rayStartInvocation({ tokenFile: TOKEN, address: 'localhost' }).loopbackOnly, true);
});

test('a node on a private address registers as it, without single-machine mode, and joins the head', () => {
  const s = rayStartInvocation({
    tokenFile: TOKEN,
    address: '10.0.0.2',
    join: '10.0.0.1:6379',
    gpus: 8,
    resources: { toolsmith_sandbox: 1 },
  });
  assert.equal(s.loopbackOnly, false);
  assert.equal(s.env.RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER, undefined);
  assert.equal(flag(s.args, '--address'), '10.0.0.1:6379');
  assert.equal(flag(s.args, '--node-ip-address'), '10.0.0.2');
  assert.equal(flag(s.args, '--resources'), '{"toolsmith_sandbox":1}');
  assert.ok(!s.args.includes('--head') && !s.args.includes('--dashboard-host'));
  assert.equal(s.dashboardUrl, undefined);
  const v6 = rayStartInvocation({ tokenFile: TOKEN, address: 'fd00::1' });
  assert.equal(v6.dashboardUrl, 'http://[fd00::1]:8265');
});

test('what cannot be bound or joined is refused, naming the field', () => {
  const refused = (o: Parameters<typeof rayStartInvocation>[0], field: string, why: RegExp) =>
    assert.throws(
      () => rayStartInvocation(o),
      (e: unknown) => e instanceof UserError && e.field === field && why.test(e.message),
    );
  refused({ tokenFile: TOKEN, address: '0.0.0.0' }, '--address', /every interface/);
  refused({ tokenFile: TOKEN, address: '::' }, '--address', /every interface/);
  refused({ tokenFile: TOKEN, address: 'head.example' }, '--address', /not an IP address/);
  refused({ tokenFile: TOKEN, address: '127.0.0.2' }, '--address', /only for 127\.0\.0\.1/);
  refused({ tokenFile: TOKEN, join: '127.0.0.1:6379' }, '--join', /one machine runs one node, its head/);
  refused({ tokenFile: TOKEN, join: '10.0.0.1:6379' }, '--join', /one machine runs one node, its head/);
  refused({ tokenFile: TOKEN, join: '10.0.0.1' }, '--join', /HOST:PORT/);
  refused({ tokenFile: TOKEN, port: 70000 }, '--port', /not a port/);
  refused({ tokenFile: TOKEN, cpus: -1 }, '--num-cpus', /whole number/);
  refused({ tokenFile: TOKEN, objectStoreBytes: 10 * 2 ** 20 }, '--object-store-mb', /≥ 75/);
  refused({ tokenFile: TOKEN, resources: { 'a b': 1 } }, '--resources', /resource name/);
});

test('ray start refuses without a token, with both or neither of --head and --join, and a token on argv', async () => {
  const saved = process.env.TOOLSMITH_RAY_TOKEN_FILE;
  delete process.env.TOOLSMITH_RAY_TOKEN_FILE;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ray-start-'));
  try {
    const refused = (args: string[], field: string) =>
      assert.rejects(
        () => rayCommand.run(args),
        (e: unknown) => e instanceof UserError && e.field === field,
      );
    await refused(['start', '--head'], '--token-file');
    await refused(['start'], '--head');
    await refused(['start', '--head', '--join', '127.0.0.1:6379'], '--head');
    await refused(['start', '--head', '--token', 'x'], '--token');
    await refused(['start', '--head', '--token-file', path.join(dir, 'missing')], '--token-file');
    fs.writeFileSync(path.join(dir, 'empty'), '', { mode: 0o600 });
    await refused(['start', '--head', '--token-file', path.join(dir, 'empty')], '--token-file');
    fs.writeFileSync(path.join(dir, 'token'), 'abc\n', { mode: 0o600 });
    await refused(['start', '--head', '--token-file', path.join(dir, 'token'), '--address', '0.0.0.0'], '--address');
    await refused(['start', '--head', '--token-file', path.join(dir, 'token'), '--resources', '[1]'], '--resources');
  } finally {
    if (saved !== undefined) process.env.TOOLSMITH_RAY_TOKEN_FILE = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
