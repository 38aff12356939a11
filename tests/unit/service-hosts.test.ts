import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bindRefusal, checkServiceRequest, isLoopbackAddress, parseHostList } from '../../contracts/hosts.ts';
import { serviceAllowedHosts } from '../../cli/listen.ts';
import { parseFlags } from '../../cli/args.ts';
import { readSecret, refuseSecretFlags } from '../../cli/secrets.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const how = { service: 'serve-model', tokenHow: 'set TOOLSMITH_SERVE_API_KEY or pass --api-key-file FILE' };

test('a service beyond loopback needs a token to start; on loopback it may go without', () => {
  for (const h of ['127.0.0.1', '127.8.9.10', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) {
    assert.ok(isLoopbackAddress(h), h);
    assert.equal(bindRefusal(h, false, how), null, h);
  }
  for (const h of ['0.0.0.0', '::', '10.0.0.5', '192.0.2.2', 'gpu-box', '128.0.0.1', '::ffff:10.0.0.1']) {
    assert.ok(!isLoopbackAddress(h), h);
    assert.equal(
      bindRefusal(h, false, how),
      `serve-model listens on ${h}, reachable beyond this machine, but has no token: set TOOLSMITH_SERVE_API_KEY or pass --api-key-file FILE, or bind to 127.0.0.1`,
    );
    assert.equal(bindRefusal(h, true, how), null);
  }
});

test('Host must be allowed (421); a foreign or null Origin is refused (403); none is fine for scripts', () => {
  const allowed = ['localhost', '127.0.0.1', '[::1]', 'gpu-box:8000'];
  assert.equal(checkServiceRequest({ host: '127.0.0.1:8000' }, allowed), null);
  assert.equal(checkServiceRequest({ host: 'gpu-box:8000', origin: 'http://gpu-box:8000' }, allowed), null);
  assert.equal(checkServiceRequest({ host: 'rebind.evil.example:8000' }, allowed)?.status, 421);
  assert.equal(checkServiceRequest({ host: 'gpu-box:9000' }, allowed)?.status, 421);
  assert.equal(checkServiceRequest({}, allowed)?.status, 421);
  // A page on another local port is another program, not this service.
  for (const origin of ['https://evil.example', 'null', 'file://', 'http://gpu-box:9000', 'http://localhost:3000']) {
    const r = checkServiceRequest({ host: '127.0.0.1:8000', origin }, allowed);
    assert.equal(r?.status, 403, origin);
    assert.match(r!.message, /cross-origin request refused: Origin/);
  }
});

test("allowed hosts: loopback and the bound address; a wildcard bind adds this machine's addresses and name; --allowed-hosts adds more", () => {
  assert.deepEqual(serviceAllowedHosts('127.0.0.1', undefined), ['localhost', '127.0.0.1', '[::1]']);
  assert.deepEqual(serviceAllowedHosts('10.0.0.5', 'Rollout-0:30000'), [
    'localhost',
    '127.0.0.1',
    '[::1]',
    '10.0.0.5',
    'rollout-0:30000',
  ]);
  const wild = serviceAllowedHosts('0.0.0.0', undefined);
  assert.ok(wild.includes(os.hostname().toLowerCase()));
  for (const addrs of Object.values(os.networkInterfaces()))
    for (const a of addrs ?? [])
      assert.ok(wild.includes(a.family === 'IPv6' ? `[${a.address}]` : a.address), a.address);
  assert.throws(
    () => serviceAllowedHosts('127.0.0.1', 'ok,http://bad/'),
    /--allowed-hosts: "http:\/\/bad\/" is not a host\[:port\]/,
  );
  assert.throws(() => parseHostList('a b', '--allowed-hosts'), /--allowed-hosts/);
});

test('secrets are refused on argv with where to put them instead; read from a file or the environment', () => {
  const src = { refused: ['token', 'api-key'], env: 'TOOLSMITH_SANDBOX_TOKEN', fileFlag: 'token-file' };
  for (const args of [
    ['--token', 'x'],
    ['--port', '1', '--token=x'],
    ['--api-key', 'k'],
  ]) {
    assert.throws(
      () => refuseSecretFlags(args, src),
      /is not accepted: a secret on the command line is visible to every user of this machine .* set TOOLSMITH_SANDBOX_TOKEN, or put it in a file only you can read and pass --token-file FILE/,
    );
  }
  refuseSecretFlags(['--token-file', 'f', '--port', '1'], src);
  // Every command's parser refuses them too, whatever the command.
  for (const flag of ['--token', '--api-key', '--password', '--secret'])
    assert.throws(() => parseFlags([flag, 'x'], { name: 'string' }), /is not accepted: a secret on the command line/);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secret-'));
  try {
    const file = path.join(dir, 'token');
    fs.writeFileSync(file, 's3cret\nignored\n', { mode: 0o600 });
    const warnings: string[] = [];
    assert.equal(
      readSecret(file, 'from-env', src, (l) => warnings.push(l)),
      's3cret',
    );
    assert.equal(warnings.length, 0);
    fs.chmodSync(file, 0o644);
    readSecret(file, undefined, src, (l) => warnings.push(l));
    assert.match(warnings[0]!, /readable by other users \(mode 644\); chmod 600 it/);
    assert.equal(readSecret(undefined, ' from-env ', src), 'from-env');
    assert.equal(readSecret(undefined, undefined, src), undefined);
    fs.writeFileSync(file, '\n');
    assert.throws(() => readSecret(file, undefined, src), /--token-file .*: the file is empty/);
    assert.throws(
      () => readSecret(path.join(dir, 'none'), undefined, src),
      /--token-file .*: cannot read it \(ENOENT\)/,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
