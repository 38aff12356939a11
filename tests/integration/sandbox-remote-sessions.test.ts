// @no-database: runs once, not once per database.
// Sessions over sandbox nodes (tool.session "trajectory" with TOOLSMITH_SANDBOX_URLS or Ray's nodes): two real nodes
// (in-process HTTP servers, each around a real SandboxPool) and RemoteSandbox clients. A session keeps its state on
// its node and shares none; the routes need the token and name a bad field; a node's cap and idle time hold; a
// session whose node stops goes on as a new session on the other node, and says so.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SandboxNode } from '../../workers/sandbox/http-node.ts';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import { RemoteSandbox } from '../../workers/sandbox/remote.ts';
import type { SandboxResult } from '../../workers/sandbox/types.ts';
import { waitFor } from '../helpers/proc.ts';

const TOKEN = 'test-token-sessions-0123456789';
const quiet = () => {};
const show = (r: SandboxResult) => JSON.stringify(r).slice(0, 2000);

let pools: SandboxPool[] = [];
let nodes: SandboxNode[] = [];
let urls: string[] = [];
const clients: RemoteSandbox[] = [];

function client(on: string[]) {
  const c = new RemoteSandbox({
    urls: on,
    token: TOKEN,
    probeIntervalMs: 100,
    backoffBaseMs: 20,
    backoffMaxMs: 200,
    log: quiet,
  });
  clients.push(c);
  return c;
}

async function post(url: string, path: string, body: unknown, token = TOKEN) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

before(async () => {
  pools = await Promise.all([0, 1].map(() => SandboxPool.start({ size: 1, maxSessions: 2, log: quiet })));
  nodes = pools.map(
    (p, i) => new SandboxNode({ sandbox: p, token: TOKEN, port: 0, maxSessions: i === 0 ? 2 : 64, log: quiet }),
  );
  urls = (await Promise.all(nodes.map((n) => n.listen()))).map((a) => a.url);
});

after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(nodes.map((n) => n.close(0)));
  await Promise.all(pools.map((p) => p.close()));
});

test('a session over a node keeps its variables and files; another session and a fresh call see none of them; close ends it on the node', async () => {
  const remote = client([urls[1]!]);
  const s = remote.openSession({ timeS: 30 });
  const other = remote.openSession();
  const first = await s.run({ code: 'x = 41\nopen("/tmp/keep.txt", "w").write("kept")' });
  assert.equal(first.status, 'ok', show(first));
  assert.equal(first.sessionNew, true);
  const second = await s.run({ code: 'print(x + 1, open("/tmp/keep.txt").read())' });
  assert.equal(second.stdout, '42 kept\n', show(second));
  assert.equal(second.sessionNew, false, 'the same interpreter on the same node');
  const elsewhere = await other.run({ code: 'import os\nprint("x" in globals(), os.path.exists("/tmp/keep.txt"))' });
  assert.equal(elsewhere.stdout, 'False False\n', show(elsewhere));
  const fresh = await remote.run({ code: 'print("x" in globals())' });
  assert.equal(fresh.stdout, 'False\n');
  assert.equal(nodes[1]!.sessions.size, 2);
  await s.close();
  await other.close();
  assert.equal(nodes[1]!.sessions.size, 0, 'closing a session ends it on its node');
  assert.equal((await s.run({ code: 'print(1)' })).status, 'internal', 'a closed session runs nothing');
});

test('the session routes need the token, name a bad field, and a session that is not open is 404 naming id', async () => {
  const url = urls[1]!;
  for (const path of ['/session/open', '/session/run', '/session/close'])
    assert.equal((await post(url, path, {}, 'wrong')).status, 401, path);
  let r = await post(url, '/session/open', { timeS: 100_000 });
  assert.equal(r.status, 400);
  assert.equal(r.body.field, 'timeS');
  r = await post(url, '/session/open', { timeS: 700 });
  assert.equal(r.status, 400, 'over the node --max-timeout-s');
  assert.match(String(r.body.error), /^timeS: 700 s is over this node's limit of 600 s/);
  const { body } = await post(url, '/session/open', {});
  const id = String(body.id);
  assert.match(id, /^[0-9a-f]{32}$/);
  r = await post(url, '/session/run', { id: 'nope', call: { code: 'print(1)' } });
  assert.equal(r.body.field, 'id');
  r = await post(url, '/session/run', { id, call: { code: 5 } });
  assert.equal(r.body.field, 'call.code');
  r = await post(url, '/session/run', { id, call: { code: 'print(1)', memoryMb: 1e6 } });
  assert.equal(r.body.field, 'call.memoryMb');
  r = await post(url, '/session/run', { id, call: { code: 'print(7)' } });
  assert.equal(r.status, 200);
  assert.equal(r.body.stdout, '7\n');
  assert.deepEqual((await post(url, '/session/close', { id })).body, { closed: true });
  r = await post(url, '/session/run', { id, call: { code: 'print(1)' } });
  assert.equal(r.status, 404);
  assert.equal(r.body.field, 'id');
  assert.match(String(r.body.error), /no open session/);
  assert.deepEqual((await post(url, '/session/close', { id })).body, { closed: false });
});

test("a node's session cap answers 429; a session idle past its time is ended on the node and the next call starts a new one", async () => {
  const url = urls[0]!;
  const a = await post(url, '/session/open', { idleS: 1 });
  const b = await post(url, '/session/open', {});
  const c = await post(url, '/session/open', {});
  assert.equal(c.status, 429);
  assert.match(String(c.body.error), /has its 2 sessions open/);
  await post(url, '/session/close', { id: b.body.id });
  const remote = client([url]);
  const s = remote.openSession({ idleS: 1 });
  assert.equal((await s.run({ code: 'x = 1' })).sessionNew, true);
  await waitFor('the idle sessions to end on the node', () => nodes[0]!.sessions.size === 0, { timeoutMs: 30_000 });
  const after = await s.run({ code: 'print("x" in globals())' });
  assert.equal(after.stdout, 'False\n', show(after));
  assert.equal(after.sessionNew, true, 'the trace and the model see a new session');
  assert.equal((await post(url, '/session/run', { id: a.body.id, call: { code: '1' } })).status, 404);
  await s.close();
});

test('a session whose node stops goes on as a new session on the other node, and says so', async () => {
  const extraPool = await SandboxPool.start({ size: 1, log: quiet });
  const extra = new SandboxNode({ sandbox: extraPool, token: TOKEN, port: 0, log: quiet });
  const extraUrl = (await extra.listen()).url;
  try {
    const remote = client([extraUrl, urls[1]!]);
    const s = remote.openSession();
    let r = await s.run({ code: 'x = 5' });
    assert.equal(r.status, 'ok', show(r));
    // The client put the session on the less busy node: stop that one (the shared node is not used after this test).
    const victim = extra.sessions.size === 1 ? extra : nodes[1]!;
    await victim.close(0);
    r = await s.run({ code: 'print("x" in globals())' });
    assert.equal(r.status, 'ok', show(r));
    assert.equal(r.stdout, 'False\n', 'its state went with its node');
    assert.equal(r.sessionNew, true);
    r = await s.run({ code: 'y = 2\nprint(y)' });
    assert.equal(r.sessionNew, false, 'and goes on there');
    await s.close();
  } finally {
    await extra.close(0);
    await extraPool.close();
  }
});
