/**
 * `npx toolsmith ray start --head` binds every Ray port to loopback on a machine that has another
 * address. The node runs in a network namespace of its own with a veth interface at 192.0.2.77 (TEST-NET-1) and a
 * default route through it: there Ray left to itself resolves 127.0.0.1 to 192.0.2.77 (checked first, so that the
 * test can fail) and binds its GCS, raylet and object manager on every interface. A job submitted over the Jobs API
 * runs a task (its driver inherits the node's single-machine mode); then every listening socket of the namespace is
 * on loopback. Runs in the Ray part (root, `unshare`), beside no other cluster: its namespace has its own ports.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { trainerPython } from '../../workers/trainer/python.ts';
import { raySkip } from '../helpers/ray-cluster.ts';
import { ROOT, waitFor } from '../helpers/proc.ts';

const PY = trainerPython();
const RAY = path.join(path.dirname(PY), 'ray');
const OTHER_ADDRESS = '192.0.2.77';
const NETNS_SETUP = [
  'ip link set lo up',
  'ip link add v0 type veth peer name v1',
  `ip addr add ${OTHER_ADDRESS}/24 dev v0`,
  'ip link set v0 up',
  'ip link set v1 up',
  'ip route add default via 192.0.2.1 dev v0',
].join(' && ');

let dir = '';
let node: ChildProcess | undefined;
let out = '';

/** A command inside the node's network namespace. */
function inNamespace(cmd: string, args: string[], env: Record<string, string> = {}, timeout = 120_000) {
  const r = spawnSync('nsenter', ['-t', String(node!.pid), '-n', cmd, ...args], {
    encoding: 'utf8',
    timeout,
    env: { ...process.env, ...env },
  });
  return { status: r.status, text: `${r.stdout}${r.stderr}` };
}

before(async () => {
  if (raySkip) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-ray-bind-')); // 0700
  fs.writeFileSync(path.join(dir, 'token'), crypto.randomBytes(32).toString('hex'), { mode: 0o600 });
});

after(async () => {
  if (node?.pid) {
    try {
      process.kill(node.pid, 'SIGTERM'); // ray start --block stops its processes
    } catch {
      /* gone */
    }
    await waitFor('the node to stop', () => node!.exitCode !== null || node!.signalCode !== null, {
      timeoutMs: 30_000,
      intervalMs: 200,
    }).catch(() => undefined);
    try {
      process.kill(-node.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('ray start --head: on a host with another address, every Ray port is bound to loopback', {
  skip: raySkip,
}, async () => {
  const tokenFile = path.join(dir, 'token');
  node = spawn(
    'unshare',
    [
      '--net',
      '--',
      'sh',
      '-c',
      `${NETNS_SETUP} && exec "$@"`,
      'sh',
      process.execPath,
      path.join(ROOT, 'bin/toolsmith.mjs'),
      'ray',
      'start',
      '--head',
      '--num-cpus',
      '1',
      '--object-store-mb',
      '100',
      '--token-file',
      tokenFile,
      '--temp-dir',
      path.join(dir, 't'),
    ],
    { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  node.stdout!.on('data', keep);
  node.stderr!.on('data', keep);

  // Ray left to itself would take the other address for 127.0.0.1 here: the namespace is a host with a network.
  await waitFor('the namespace', () => inNamespace('ip', ['-br', 'addr']).text.includes(OTHER_ADDRESS), {
    timeoutMs: 30_000,
    intervalMs: 200,
    detail: () => out,
  });
  const resolved = inNamespace(PY, [
    '-c',
    'from ray._private.services import resolve_ip_for_localhost as r; print(r("127.0.0.1"))',
  ]);
  assert.equal(resolved.text.trim(), OTHER_ADDRESS, resolved.text);

  await waitFor(
    'the Ray head',
    () => inNamespace('curl', ['-s', '-o', '/dev/null', 'http://127.0.0.1:8265/api/version']).status === 0,
    {
      timeoutMs: 120_000,
      intervalMs: 1000,
      detail: () => out,
    },
  );
  assert.match(out, /every Ray port of this node is bound to 127\.0\.0\.1/);
  assert.match(out, /TOOLSMITH_RAY_ADDRESS=http:\/\/127\.0\.0\.1:8265/);

  // A job's driver (what a run's orchestrator is) joins the cluster and runs a task on the loopback node.
  const job = inNamespace(
    RAY,
    [
      'job',
      'submit',
      '--address',
      'http://127.0.0.1:8265',
      '--',
      PY,
      '-c',
      'import ray; ray.init(); f = ray.remote(lambda: ray.util.get_node_ip_address()); print("task on", ray.get(f.remote()), "nodes", [n["NodeManagerAddress"] for n in ray.nodes()])',
    ],
    { RAY_AUTH_MODE: 'token', RAY_AUTH_TOKEN_PATH: tokenFile },
    180_000,
  );
  assert.equal(job.status, 0, job.text.slice(-3000));
  assert.match(job.text, /task on 127\.0\.0\.1 nodes \['127\.0\.0\.1'\]/, job.text.slice(-3000));

  // Every socket listening in the namespace (only this node's there) is on loopback; the head's own ports among them.
  const ss = inNamespace('ss', ['-Hltnu']);
  assert.equal(ss.status, 0, ss.text);
  const locals = ss.text
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[4]!);
  const loopback = /^(127\.0\.0\.1|\[::ffff:127\.0\.0\.1\]|\[::1\]):\d+$/;
  assert.deepEqual(
    locals.filter((a) => !loopback.test(a)),
    [],
    `listening beyond loopback:\n${ss.text}`,
  );
  for (const port of [6379, 8265])
    assert.ok(
      locals.some((a) => a.endsWith(`:${port}`)),
      `nothing on ${port}:\n${ss.text}`,
    );
});
