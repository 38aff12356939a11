// @no-database: runs once, not once per database.
// What a trainer group exposes: the ranks client.ts starts meet through a FileStore in a private folder,
// so no rendezvous store listens anywhere; gloo's own connections are bound to loopback. While 2 CPU ranks train,
// every listening socket of their processes is read from /proc and must be loopback, and a pickle that would touch a
// marker file is written to each of them: nothing is unpickled and training goes on. One process listens on nothing;
// a group of one (gpu_check's gloo group in an in-memory HashStore) only on loopback. The group dies together: a
// rank killed takes the others down (its stderr reaches the tail), and so does the death of the process that
// started it. Needs the trainer's Python.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TrainerClient, type TrainerError } from '../../workers/trainer/client.ts';
import type { InitParams } from '../../workers/trainer/types.ts';
import { EMBEDDED_VOCAB } from '../../workers/engines/tokenizer.ts';
import { trainerPython } from '../../workers/trainer/python.ts';
import { isLoopback, processesInGroups, tcpSockets, type TcpSocket } from '../helpers/listeners.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PY = trainerPython();
const hasTorch = spawnSync(PY, ['-c', 'import torch.distributed.fsdp'], { stdio: 'ignore' }).status === 0;
const skip = hasTorch ? false : `needs ${PY} with torch (node scripts/setup.mjs builds it)`;
const env = { ...process.env, TOOLSMITH_TRAINER_THREADS: '1', TOOLSMITH_TRAINER_DEVICE: 'cpu' };
const init: InitParams = {
  model: { arch: 'qwen3', n_layer: 2, n_head: 4, n_kv_head: 2, n_embd: 32, block_size: 64 },
  vocab: EMBEDDED_VOCAB,
  seed: 3,
  device: 'cpu',
};
const SEQS = Array.from({ length: 6 }, (_, i) =>
  Array.from({ length: 12 + 3 * i }, (_, j) => 3 + ((i * 11 + j * 5) % 95)),
);

let tmp = '';
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trainer-exposure-'));
});
after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const gone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};
/** Poll for a condition that must come; `ms` only bounds a failure. */
async function until(what: string, ok: () => boolean, ms = 60_000) {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const listening = (s: TcpSocket[]) => s.filter((x) => x.state === 'LISTEN');
const environOf = (pid: number) =>
  Object.fromEntries(
    fs
      .readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

/** Pickles that run `touch marker` when unpickled: protocol 2 REDUCE of posix.system, and protocol 4 with a dotted name. */
function payloads(marker: string): Buffer[] {
  const code = `import pickle, sys
class Evil:
    def __reduce__(self):
        import os
        return (os.system, ("touch " + sys.argv[1],))
u = lambda s: b"\\x8c" + bytes([len(s)]) + s.encode()
sys.stdout.buffer.write(pickle.dumps(Evil(), protocol=2).hex().encode() + b"\\n")
sys.stdout.buffer.write((b"\\x80\\x04" + u("torch.distributed.checkpoint.filesystem") + u("os.system") + b"\\x93" + u("touch " + sys.argv[1]) + b"\\x85R.").hex().encode())`;
  const r = spawnSync(PY, ['-c', code, marker], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout
    .trim()
    .split('\n')
    .map((h) => Buffer.from(h, 'hex'));
}

/** Connect to a listener and write each payload (with a length prefix too, as a store's framing might expect). */
function probe(l: TcpSocket, data: Buffer[]): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({
      host: l.address.startsWith('::ffff:') ? l.address.slice(7) : l.address.includes(':') ? '::1' : l.address,
      port: l.port,
    });
    const done = (why: string) => {
      s.destroy();
      resolve(why);
    };
    s.on('error', (e) => done(`error ${e.message}`));
    s.on('connect', () => {
      for (const d of data) {
        const len = Buffer.alloc(8);
        len.writeBigUInt64LE(BigInt(d.length));
        s.write(Buffer.concat([len, d, d]));
      }
      setTimeout(() => done('written'), 300);
    });
  });
}

test('2 ranks training: every listener is loopback, no store is on a socket, and a pickle written to each port is never unpickled', {
  skip,
}, async () => {
  const marker = path.join(tmp, 'unpickled-marker');
  const t = await TrainerClient.start({ env, ranks: 2, startTimeoutMs: 120_000 });
  try {
    assert.equal(t.ready!.world_size, 2);
    // The rendezvous is a file in a folder only this user can enter.
    const store = environOf(t.pids[0]!).TOOLSMITH_TRAINER_STORE!;
    assert.ok(store, 'the ranks meet through TOOLSMITH_TRAINER_STORE');
    const st = fs.statSync(path.dirname(store));
    assert.equal(st.mode & 0o777, 0o700);
    assert.equal(st.uid, process.getuid!());
    await t.init(init);
    let steps = 0;
    const training = (async () => {
      for (let i = 0; i < 25; i++) {
        await t.sftStep({ sequences: SEQS, micro_batch: 2 });
        steps++;
      }
    })();
    await until('a first step', () => steps > 0, 60_000);
    const procs = processesInGroups(t.pids);
    assert.ok(t.pids.every((p) => procs.includes(p)));
    const sockets = tcpSockets(procs);
    const listeners = listening(sockets);
    // gloo's pair listeners (one per rank) are there to be probed; the test would prove nothing without them.
    assert.ok(listeners.length >= 2, `listeners: ${JSON.stringify(sockets)}`);
    for (const l of listeners)
      assert.ok(isLoopback(l.address), `a listener on ${l.proto} ${l.address}:${l.port}, not loopback`);
    for (const s of sockets) assert.ok(isLoopback(s.address), `a socket on ${s.address}:${s.port}`);
    const data = payloads(marker);
    const results = await Promise.all(listeners.map((l) => probe(l, data)));
    assert.ok(
      results.some((r) => r === 'written'),
      results.join(', '),
    );
    await training;
    assert.equal(steps, 25, 'training went on');
    assert.equal((await t.info()).world_size, 2);
    await t.close();
    assert.equal(fs.existsSync(path.dirname(store)), false, 'the store folder is removed with the group');
    for (const p of procs) assert.ok(gone(p), `process ${p} outlived the group`);
    // Checked once every process of the group is gone, not after a pause: whatever they read has been handled, and
    // an unpickled payload would have touched the marker (os.system waits for touch).
    assert.equal(fs.existsSync(marker), false, 'a rank unpickled what was written to its port');
  } finally {
    await t.close();
  }
});

test('one process listens on nothing; a group of one (gloo in an in-memory HashStore) listens on loopback only', {
  skip,
}, async () => {
  const one = await TrainerClient.start({ env });
  try {
    await one.init(init);
    await one.sftStep({ sequences: SEQS });
    assert.deepEqual(listening(tcpSockets([one.pid!])), []);
  } finally {
    await one.close();
  }
  // gpu_check.py --cpu-smoke shards with FSDP2 in a group of one, as one GPU does: sample its sockets while it runs.
  const child = spawn(PY, [path.join(ROOT, 'workers/trainer/gpu_check.py'), '--cpu-smoke', '--steps', '6'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, HF_HUB_OFFLINE: '1' },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const seen = new Map<string, TcpSocket>();
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  let running = true;
  void exited.then(() => {
    running = false;
  });
  while (running) {
    for (const s of listening(tcpSockets([child.pid!]))) seen.set(`${s.address}:${s.port}`, s);
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(await exited, 0, out);
  assert.ok(
    JSON.parse(
      out
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .pop()!,
    ).reload_logits_equal !== undefined,
    out,
  );
  assert.ok(seen.size > 0, 'sampled the group while it ran (gloo opens one listener even alone)');
  for (const s of seen.values()) assert.ok(isLoopback(s.address), `gpu_check listened on ${s.address}:${s.port}`);
});

test("the group dies together: a killed rank takes rank 0 down and its stderr is in the tail; the parent's death kills every rank", {
  skip,
}, async () => {
  const t = await TrainerClient.start({ env, ranks: 2, startTimeoutMs: 120_000 });
  const store = path.dirname(environOf(t.pids[0]!).TOOLSMITH_TRAINER_STORE!);
  // An error every rank raises: rank 1's traceback reaches the tail, marked with its rank.
  await assert.rejects(t.init({ ...init, vocab: ['a', 'b'] }), (e: TrainerError) => e.type !== 'exited');
  await until("rank 1's traceback", () => /\[rank 1\] .*Error/.test(t.stderrTail));
  const pending = t.call('sleep', { seconds: 60 });
  await new Promise((r) => setTimeout(r, 200));
  process.kill(t.pids[1]!, 'SIGKILL');
  await assert.rejects(
    pending,
    (e: TrainerError) => e.type === 'exited' && /rank 1 of the trainer exited \(SIGKILL\)/.test(e.message),
  );
  await t.exited;
  for (const p of t.pids) assert.ok(gone(p), `rank ${p} outlived rank 1`);
  assert.equal(fs.existsSync(store), false);

  // A process that starts a group and is SIGKILLed (a worker killed by the OOM killer): its ranks die with it.
  const script = `import { TrainerClient } from ${JSON.stringify(path.join(ROOT, 'workers/trainer/client.ts'))};
const t = await TrainerClient.start({ ranks: 2, startTimeoutMs: 120000 });
console.log(JSON.stringify(t.pids));
await t.call('sleep', { seconds: 120 });`;
  const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  parent.stdout.on('data', (d) => (out += d));
  parent.stderr.on('data', (d) => (out += d));
  await until("the parent's group to start", () => /^\[\d+,\d+\]$/m.test(out), 120_000);
  const pids = JSON.parse(/^\[\d+,\d+\]$/m.exec(out)![0]) as number[];
  const orphanStore = path.dirname(environOf(pids[0]!).TOOLSMITH_TRAINER_STORE!);
  await new Promise((r) => setTimeout(r, 300)); // both ranks inside the 120 s sleep
  assert.ok(pids.every((p) => !gone(p)));
  parent.kill('SIGKILL');
  await until('every rank to die with its parent', () => pids.every(gone), 60_000);
  fs.rmSync(orphanStore, { recursive: true, force: true }); // a killed parent cannot remove its store folder
});
