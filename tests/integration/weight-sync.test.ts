// @no-database: runs once, not once per database.
// Weight sync end to end on real processes: the trainer (workers/trainer/client.ts) exports each version into the
// shared weight-sync folder (HF weights + the ONNX export), two `toolsmith serve-model` servers reload it through
// SGLang's /update_weights_from_disk, and OpenAIEngine waits for both, retries stale-version refusals and records
// the version of every result. "Not mixed" is checked on the text: every greedy result equals the embedded
// engine's greedy output of the version it says it was generated with (the two versions' outputs differ).
// Needs the trainer's Python (.venv) with torch; skipped without it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { OnnxEngine } from '../../workers/engines/onnx-engine.ts';
import { OpenAIEngine } from '../../workers/engines/openai-engine.ts';
import { remotePolicy } from '../../workers/engines/create.ts';
import type { GenerateRequest, GenerateResult } from '../../workers/engines/types.ts';
import { PolicySync } from '../../workers/policy/policy-sync.ts';
import { TrainerClient } from '../../workers/trainer/client.ts';
import { EMBEDDED_VOCAB } from '../../workers/engines/tokenizer.ts';
import { trainerPython } from '../../workers/trainer/python.ts';
import { ROOT, waitFor } from '../helpers/proc.ts';

const PY = trainerPython();
const hasTorch = spawnSync(PY, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
const skip = hasTorch ? false : `needs ${PY} with torch (node scripts/setup.mjs builds it)`;
const MODEL = { n_layer: 2, n_head: 4, n_embd: 32, block_size: 128, init_std: 0.3 };
const NAME = 'tiny';
const PROMPTS = ['Q: 12+30=', 'Q: 7*6=', 'Hello', 'Q: 100-1=', 'abc', 'Q: 3*3='];
const MAX = 40;

let tmp = '';
let wsRoot = '';
let trainer: TrainerClient;
const servers: { child: ChildProcess; out: () => string; url: string }[] = [];
let policy: PolicySync;
/** Greedy reference outputs by version folder (the embedded engine on that folder's onnx/). */
const refs = new Map<string, Map<string, string>>();

const req = (prompt: string, o: Partial<GenerateRequest> = {}): GenerateRequest => ({
  prompt,
  maxTokens: MAX,
  temperature: 0,
  topP: 1,
  stop: [],
  ...o,
});

// serve-model takes weight reloads only with its API key (docs/deploying-and-security.md "serve-model and sandbox nodes"); the engine sends it.
const KEY = 'weight-sync-test-key';
const AUTH = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };

async function startServer(checkpoint: string) {
  const env = { ...process.env, TOOLSMITH_SERVE_API_KEY: KEY };
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'bin/toolsmith.mjs'),
      'serve-model',
      '--checkpoint',
      checkpoint,
      '--port',
      '0',
      '--model-name',
      NAME,
      '--weights-root',
      wsRoot,
      '--threads',
      '1',
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = await waitFor(
    'serve-model to listen',
    () => {
      if (child.exitCode !== null) throw new Error(`serve-model exited with ${child.exitCode}:\n${out}`);
      return /on (http:\/\/\S+)\/v1/.exec(out)?.[1];
    },
    { timeoutMs: 60000, detail: () => out },
  );
  servers.push({ child, out: () => out, url });
}

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const getJson = async (url: string) => (await fetch(url, { headers: AUTH })).json();

/** The greedy outputs of every prompt on the export in `versionDir`. */
async function reference(versionDir: string): Promise<Map<string, string>> {
  const have = refs.get(versionDir);
  if (have) return have;
  const e = await OnnxEngine.load(path.join(versionDir, 'onnx'), { threads: 1 });
  const m = new Map<string, string>();
  for (const p of PROMPTS) m.set(p, (await e.generate(req(p))).text);
  await e.close();
  refs.set(versionDir, m);
  return m;
}

const engine = () => policy.engine as OpenAIEngine;

before(async () => {
  if (!hasTorch) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'weight-sync-'));
  wsRoot = path.join(tmp, 'weight-sync');
  fs.mkdirSync(wsRoot);
  trainer = await TrainerClient.start({ env: { ...process.env, TOOLSMITH_TRAINER_THREADS: '1' } });
  await trainer.init({ model: MODEL, vocab: EMBEDDED_VOCAB, seed: 1, device: 'cpu' });
  // The servers start on some other weights (as SGLang starts on the base model): the first sync replaces them.
  const start = path.join(wsRoot, 'start');
  await trainer.exportOnnx(start);
  await Promise.all([startServer(start), startServer(start)]);
  const factory = remotePolicy(
    {
      urls: servers.map((s) => s.url),
      model: NAME,
      apiKey: KEY,
      totalTokens: 16 * 128,
      timeoutMs: 30000,
      weightSync: { mode: 'sglang', onnx: true, timeoutMs: 60000 },
    },
    path.join(wsRoot, 'run-1'),
  );
  policy = new PolicySync(trainer, factory, path.join(tmp, 'unused-export'));
});

after(async () => {
  await policy?.close();
  for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  await trainer?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('PolicySync with a real trainer: each sync writes a version folder (HF + ONNX), both serve-model servers reload it, the last two are kept', {
  skip,
}, async () => {
  await policy.sync();
  const run = path.join(wsRoot, 'run-1');
  const v1 = path.join(run, 'v000001');
  assert.deepEqual(
    fs.readdirSync(run).filter((n) => !n.includes('.tmp-')),
    ['v000001'],
  );
  for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'onnx'])
    assert.ok(fs.existsSync(path.join(v1, f)), `${f} in ${fs.readdirSync(v1)}`);
  assert.equal(engine().weightVersion, 0);
  for (const s of servers) {
    assert.deepEqual(await getJson(`${s.url}/get_weight_version`), { weight_version: '0' });
    assert.equal((await getJson(`${s.url}/model_info`)).model_path, fs.realpathSync(v1));
  }
  const ref1 = await reference(v1);
  const r = await engine().generate(req(PROMPTS[0]));
  assert.equal(r.finishReason, 'length');
  assert.equal(r.weightVersion, 0);
  assert.equal(r.text, ref1.get(PROMPTS[0]));

  // New weights (a re-initialised model: outputs surely differ), then two more syncs.
  await trainer.init({ model: MODEL, vocab: EMBEDDED_VOCAB, seed: 2, device: 'cpu' });
  policy.updated();
  assert.ok((await policy.sync()) > 0);
  assert.equal(await policy.sync(), 0, 'nothing to do without an update');
  assert.equal(engine().weightVersion, 1);
  const v2 = path.join(run, 'v000002');
  const ref2 = await reference(v2);
  assert.notEqual(
    ref2.get(PROMPTS[0]),
    ref1.get(PROMPTS[0]),
    'the two versions must generate different text for this test to see mixing',
  );
  for (const s of servers) assert.equal((await getJson(`${s.url}/get_weight_version`)).weight_version, '1');
  const r2 = await engine().generate(req(PROMPTS[0]));
  assert.equal(r2.weightVersion, 1);
  assert.equal(r2.text, ref2.get(PROMPTS[0]));

  await trainer.init({ model: MODEL, vocab: EMBEDDED_VOCAB, seed: 3, device: 'cpu' });
  policy.updated();
  await policy.sync();
  assert.equal(engine().weightVersion, 2);
  assert.deepEqual(
    fs
      .readdirSync(run)
      .filter((n) => !n.includes('.tmp-'))
      .sort(),
    ['v000002', 'v000003'],
    'older versions are deleted',
  );
});

test('reload while requests are generating: those in flight finish on the old version, the ones sent during it wait for the new one; none is mixed', {
  skip,
}, async () => {
  const e = engine();
  const run = path.join(wsRoot, 'run-1');
  // Alternate between the two version folders on disk so that consecutive versions differ.
  const from = e.weightVersion;
  const dirOld = policy.lastDir!;
  const dirNew = path.join(run, 'v000002') === dirOld ? path.join(run, 'v000003') : path.join(run, 'v000002');
  const [refOld, refNew] = [await reference(dirOld), await reference(dirNew)];
  assert.notEqual(refOld.get(PROMPTS[0]), refNew.get(PROMPTS[0]));
  const before: Promise<GenerateResult & { done: number }>[] = [];
  let seq = 0;
  const tagged = (p: Promise<GenerateResult>) => p.then((r) => ({ ...r, done: ++seq }));
  for (const p of PROMPTS) before.push(tagged(e.generate(req(p))));
  const reloaded = e.reload(dirNew).then(() => ++seq);
  const during = PROMPTS.map((p) => tagged(e.generate(req(p))));
  const [a, reloadAt, b] = [await Promise.all(before), await reloaded, await Promise.all(during)];
  a.forEach((r, i) => {
    assert.equal(r.weightVersion, from, `request ${i} sent before the reload`);
    assert.equal(r.text, refOld.get(PROMPTS[i]), `request ${i}: the old version's text`);
    assert.ok(r.done < reloadAt, 'the reload resolved only after the requests in flight finished');
  });
  b.forEach((r, i) => {
    assert.equal(r.weightVersion, from + 1, `request ${i} sent during the reload`);
    assert.equal(r.text, refNew.get(PROMPTS[i]), `request ${i}: the new version's text`);
    assert.ok(r.done > reloadAt);
  });
  for (const s of servers)
    assert.equal((await getJson(`${s.url}/get_weight_version`)).weight_version, String(from + 1));
});

test('serve-model reloaded under running requests lets them finish on the old version; a stale request is refused (409) and retried on the other server', {
  skip,
}, async () => {
  const e = engine();
  const v = e.weightVersion;
  const [a, b] = servers;
  const current = (await getJson(`${a.url}/model_info`)).model_path as string;
  const ref = await reference(current);
  // Requests in flight at server A (sent straight to it, streaming: their first chunk has arrived), then A is moved
  // to another label under them.
  const streams = await Promise.all(
    PROMPTS.slice(0, 3).map(async (p) => {
      const res = await fetch(`${a.url}/v1/completions`, {
        method: 'POST',
        headers: AUTH,
        body: JSON.stringify({
          model: NAME,
          prompt: p,
          max_tokens: MAX,
          temperature: 0,
          stream: true,
          weight_version: String(v),
        }),
      });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      const first = await reader.read(); // generation has started
      return { reader, text: new TextDecoder().decode(first.value) };
    }),
  );
  // The other version folder: the requests in flight would change text if they ran on into the new weights.
  const other = fs
    .readdirSync(path.dirname(current))
    .filter((n) => /^v\d+$/.test(n))
    .map((n) => path.join(path.dirname(current), n))
    .find((d) => d !== current)!;
  assert.notEqual((await reference(other)).get(PROMPTS[0]), ref.get(PROMPTS[0]));
  const upd = fetch(`${a.url}/update_weights_from_disk`, {
    method: 'POST',
    headers: AUTH,
    body: JSON.stringify({ model_path: other, weight_version: '77' }),
  });
  const done = await Promise.all(
    streams.map(async (s) => {
      let text = s.text;
      for (let r = await s.reader.read(); !r.done; r = await s.reader.read()) text += new TextDecoder().decode(r.value);
      const chunks = text
        .split('\n\n')
        .filter((x) => x.startsWith('data: {'))
        .map((x) => JSON.parse(x.slice(6)));
      return {
        versions: new Set(chunks.map((c) => c.weight_version)),
        text: chunks.map((c) => c.choices[0]?.text ?? '').join(''),
      };
    }),
  );
  const u = await upd;
  assert.equal(u.status, 200);
  assert.equal((await u.json()).success, true);
  done.forEach((d, i) => {
    assert.deepEqual([...d.versions], [String(v)], 'generated before the update: the old label on every chunk');
    assert.equal(d.text, ref.get(PROMPTS[i]));
  });
  // A refuses version v now, before generating anything.
  const refused = await fetch(`${a.url}/v1/completions`, {
    method: 'POST',
    headers: AUTH,
    body: JSON.stringify({ model: NAME, prompt: 'x', weight_version: String(v) }),
  });
  assert.equal(refused.status, 409);
  const rj = await refused.json();
  assert.equal(rj.error.code, 'stale_weight_version');
  assert.equal(rj.weight_version, '77');
  assert.match(rj.error.message, new RegExp(`serves weight version 77; the request asked for ${v}`));
  // Through the engine: requests alternate between the servers; the one that lands on A is refused, then B serves it.
  const refusals = e.staleRefusals;
  const rs = [];
  for (const p of PROMPTS.slice(0, 2)) rs.push(await e.generate(req(p)));
  assert.ok(e.staleRefusals > refusals, 'one request was refused by A');
  rs.forEach((r, i) => {
    assert.equal(r.weightVersion, v);
    assert.equal(r.text, ref.get(PROMPTS[i]));
  });
  // A request for a version nobody serves yet is retried until the servers serve it.
  const want = v + 1;
  const before = e.staleRefusals;
  const pending = e.generate(req(PROMPTS[1], { weightVersion: want }));
  await waitFor('a stale refusal', () => e.staleRefusals > before, { timeoutMs: 20000 });
  for (const s of [a, b]) {
    const u = await fetch(`${s.url}/update_weights_from_disk`, {
      method: 'POST',
      headers: AUTH,
      body: JSON.stringify({ model_path: current, weight_version: String(want) }),
    });
    assert.equal(u.status, 200);
  }
  const late = await pending;
  assert.equal(late.finishReason, 'length');
  assert.equal(late.weightVersion, want);
  assert.equal(late.text, ref.get(PROMPTS[1]));
  // Bounded: a version that never comes fails with stale: true, naming the versions.
  const quick = new OpenAIEngine({
    baseUrls: [a.url],
    model: NAME,
    apiKey: KEY,
    timeoutMs: 20000,
    retries: 0,
    totalTokens: 1024,
    backoffMs: 20,
    staleTimeoutMs: 300,
    weightSync: { mode: 'sglang', timeoutMs: 10000 },
  });
  const never = await quick.generate(req('x', { weightVersion: 99 }));
  assert.equal(never.finishReason, 'error');
  assert.equal(never.stale, true);
  assert.match(never.error ?? '', /serves weight version \d+; the request asked for 99/);
  await quick.close();
});

test('reload waits for every server: an unreachable one fails it with its URL; serve-model refuses paths outside its weights root and exports without model.onnx', {
  skip,
}, async () => {
  const [a] = servers;
  const dead = `http://127.0.0.1:${await closedPort()}`;
  const e = new OpenAIEngine({
    baseUrls: [a.url, dead],
    model: NAME,
    apiKey: KEY,
    timeoutMs: 5000,
    retries: 0,
    totalTokens: 1024,
    weightSync: { mode: 'sglang', timeoutMs: 5000 },
  });
  const dir = policy.lastDir!;
  await assert.rejects(e.reload(dir), (err: Error) => err.message.includes(dead));
  assert.equal(e.weightVersion, 0, 'the engine does not claim a version some server lacks');
  await e.close();

  const post = (body: unknown) =>
    fetch(`${a.url}/update_weights_from_disk`, { method: 'POST', headers: AUTH, body: JSON.stringify(body) });
  const outside = fs.mkdtempSync(path.join(tmp, 'outside-'));
  const noKey = await fetch(`${a.url}/update_weights_from_disk`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model_path: dir }),
  });
  assert.equal(noKey.status, 401, 'a reload without the key');
  const r1 = await post({ model_path: outside });
  assert.equal(r1.status, 403);
  assert.match((await r1.json()).message, /not under the weights root/);
  const hfOnly = path.join(wsRoot, 'hf-only');
  fs.mkdirSync(hfOnly);
  fs.copyFileSync(path.join(dir, 'config.json'), path.join(hfOnly, 'config.json'));
  const r2 = await post({ model_path: hfOnly, weight_version: '5' });
  assert.equal(r2.status, 400);
  const j2 = await r2.json();
  assert.equal(j2.success, false);
  assert.match(j2.message, /no model\.onnx/);
  assert.notEqual(
    (await getJson(`${a.url}/get_weight_version`)).weight_version,
    '5',
    'a failed update keeps the old version',
  );
});
