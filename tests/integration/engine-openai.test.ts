// @no-database: runs once, not once per database.
// `npx toolsmith serve-model` (a real process) and OpenAIEngine against it, on a random model exported at test
// time by workers/trainer/export_onnx.py. Needs the trainer's Python (.venv, built by set-up) with torch; skipped without it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { OnnxEngine } from '../../workers/engines/onnx-engine.ts';
import { OpenAIEngine } from '../../workers/engines/openai-engine.ts';
import type { GenerateRequest } from '../../workers/engines/types.ts';
import { ROOT, waitFor } from '../helpers/proc.ts';
import { trainerPython } from '../../workers/trainer/python.ts';

const PY = trainerPython();
const pyEnv = { ...process.env, PYTHONDONTWRITEBYTECODE: '1' };
const TRAINER = path.join(ROOT, 'workers/trainer');
const hasTorch = spawnSync(PY, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
const skip = hasTorch ? false : `needs ${PY} with torch (node scripts/setup.mjs builds it)`;
const CONFIG = JSON.stringify({ n_layer: 2, n_head: 4, n_embd: 64, block_size: 96, init_std: 0.3 });
const KEY = 'test-key-123';
const MODEL = 'tiny';

let tmp = '';
let dir = '';
let direct: OnnxEngine;
let server: { child: ChildProcess; exited: Promise<number | null>; out: () => string } | null = null;
let base = ''; // http://127.0.0.1:PORT

const req = (prompt: string, o: Partial<GenerateRequest> = {}): GenerateRequest => ({
  prompt,
  maxTokens: 20,
  temperature: 0,
  topP: 1,
  stop: [],
  ...o,
});

/** `npx toolsmith serve-model`, the real CLI. */
function startServer(args: string[]) {
  const argv = [path.join(ROOT, 'bin/toolsmith.mjs'), 'serve-model', ...args];
  // The key travels in the environment: serve-model refuses secrets on its command line.
  const env = { ...process.env, TOOLSMITH_SERVE_API_KEY: KEY };
  const child = spawn(process.execPath, argv, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => out };
}

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function post(body: unknown, key: string | null = KEY) {
  return fetch(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Parse an SSE body into its `data:` payloads. */
async function sse(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((e) => {
      assert.ok(e.startsWith('data: '), e);
      return e.slice(6);
    });
}

const engine = (o: Partial<ConstructorParameters<typeof OpenAIEngine>[0]> = {}) =>
  new OpenAIEngine({
    baseUrls: [base],
    model: MODEL,
    apiKey: KEY,
    timeoutMs: 20000,
    retries: 2,
    totalTokens: 8 * 96,
    backoffMs: 10,
    ...o,
  });

before(async () => {
  if (!hasTorch) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'openai-engine-'));
  dir = path.join(tmp, 'model');
  execFileSync(PY, [path.join(TRAINER, 'export_onnx.py'), '--out', dir, '--seed', '1', '--config', CONFIG], {
    stdio: 'pipe',
    env: pyEnv,
  });
  direct = await OnnxEngine.load(dir);
  server = startServer(['--checkpoint', dir, '--port', '0', '--model-name', MODEL]);
  const s = server;
  base = await waitFor(
    'serve-model to listen',
    () => {
      if (s.child.exitCode !== null) throw new Error(`serve-model exited with ${s.child.exitCode}:\n${s.out()}`);
      return /on (http:\/\/\S+)\/v1/.exec(s.out())?.[1];
    },
    { timeoutMs: 60000, detail: s.out },
  );
});

after(async () => {
  if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
  if (direct) await direct.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('/v1/models lists the served model; a wrong or missing API key → 401 in OpenAI error shape', {
  skip,
}, async () => {
  const r = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
  assert.equal(r.status, 200);
  const j = await r.json();
  assert.equal(j.object, 'list');
  assert.deepEqual(
    j.data.map((m: { id: string }) => m.id),
    [MODEL],
  );
  for (const key of ['wrong', null]) {
    const bad = await fetch(`${base}/v1/models`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
    assert.equal(bad.status, 401);
    const e = await bad.json();
    assert.equal(e.error.code, 'invalid_api_key');
    assert.equal(typeof e.error.message, 'string');
  }
  assert.equal((await post({ model: MODEL, prompt: 'x' }, 'wrong')).status, 401);
});

test('non-streaming completion equals the OnnxEngine greedy output (text, token ids, logprobs, usage)', {
  skip,
}, async () => {
  const prompt = 'Q: 12+30=';
  const ref = await direct.generate(req(prompt, { maxTokens: 24 }));
  const r = await post({ model: MODEL, prompt, max_tokens: 24, temperature: 0, logprobs: 0, return_token_ids: true });
  assert.equal(r.status, 200);
  const j = await r.json();
  assert.equal(j.object, 'text_completion');
  assert.equal(j.model, MODEL);
  const c = j.choices[0];
  assert.equal(c.text, ref.text);
  assert.equal(c.finish_reason, 'length');
  assert.deepEqual(c.token_ids, ref.tokenIds);
  assert.deepEqual(c.prompt_token_ids, direct.tokenizer.encode(prompt));
  assert.equal(c.logprobs.tokens.join(''), ref.text);
  assert.equal(c.logprobs.token_logprobs.length, 24);
  c.logprobs.token_logprobs.forEach((x: number, i: number) =>
    assert.ok(Math.abs(x - ref.logprobs![i]) < 1e-3, `${x} vs ${ref.logprobs![i]}`),
  );
  assert.deepEqual(j.usage, { prompt_tokens: prompt.length, completion_tokens: 24, total_tokens: prompt.length + 24 });
  // No logprobs asked → null; no return_token_ids → no token_ids.
  const plain = (await (await post({ model: MODEL, prompt, max_tokens: 24, temperature: 0 })).json()).choices[0];
  assert.equal(plain.text, ref.text);
  assert.equal(plain.logprobs, null);
  assert.equal(plain.token_ids, undefined);
});

test('streaming completion: SSE chunks then [DONE]; joined text and token ids equal the OnnxEngine greedy output', {
  skip,
}, async () => {
  const prompt = 'Hello';
  const ref = await direct.generate(req(prompt, { maxTokens: 30 }));
  const r = await post({
    model: MODEL,
    prompt,
    max_tokens: 30,
    temperature: 0,
    stream: true,
    logprobs: 1,
    return_token_ids: true,
    stream_options: { include_usage: true },
  });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /text\/event-stream/);
  const events = await sse(r);
  assert.equal(events.pop(), '[DONE]');
  const chunks = events.map((e) => JSON.parse(e));
  const usage = chunks.pop();
  assert.deepEqual(usage.choices, []);
  assert.equal(usage.usage.completion_tokens, 30);
  assert.ok(chunks.length > 1);
  assert.equal(chunks.map((c) => c.choices[0].text).join(''), ref.text);
  assert.deepEqual(
    chunks.flatMap((c) => c.choices[0].token_ids),
    ref.tokenIds,
  );
  assert.equal(chunks.flatMap((c) => c.choices[0].logprobs?.token_logprobs ?? []).length, 30);
  assert.equal(chunks.at(-1).choices[0].finish_reason, 'length');
  assert.ok(chunks.slice(0, -1).every((c) => c.choices[0].finish_reason === null));
});

test('OpenAIEngine against serve-model: same greedy text, token ids and logprobs as the OnnxEngine; capacity bookkeeping', {
  skip,
}, async () => {
  const e = engine({ tokenizer: direct.tokenizer });
  for (const prompt of ['Q: 4831*297+1234', '<tool_call>{"code":"print(1)"}']) {
    const ref = await direct.generate(req(prompt, { maxTokens: 25 }));
    const chunks: string[] = [];
    const p = e.generate(req(prompt, { maxTokens: 25 }), (c) => chunks.push(c.text));
    assert.equal(e.capacity().inFlight, 1);
    assert.equal(e.capacity().freeTokens, 8 * 96 - prompt.length - 25);
    const r = await p;
    assert.equal(r.finishReason, 'length');
    assert.equal(r.text, ref.text);
    assert.deepEqual(r.tokenIds, ref.tokenIds);
    assert.equal(r.promptTokens, prompt.length);
    assert.equal(chunks.join(''), r.text);
    assert.equal(r.logprobs!.length, 25);
    r.logprobs!.forEach((x, i) => assert.ok(Math.abs(x - ref.logprobs![i]) < 1e-3));
  }
  assert.deepEqual(e.capacity(), { totalTokens: 8 * 96, freeTokens: 8 * 96, inFlight: 0 });
  assert.equal(e.countTokens('hello'), 5);
  assert.equal(engine().countTokens('hello world!'), 3); // chars/4 estimate without a tokenizer
});

test('stop string: the server strips it (stop_reason names it); OpenAIEngine adds it back like the OnnxEngine keeps it', {
  skip,
}, async () => {
  const prompt = 'Q: 7*6=';
  const free = await direct.generate(req(prompt, { maxTokens: 30 }));
  const stop = free.text.slice(5, 7);
  const ref = await direct.generate(req(prompt, { maxTokens: 30, stop: ['\u0000never', stop] }));
  assert.equal(ref.stopString, stop);
  const stripped = ref.text.slice(0, -stop.length);

  const j = await (
    await post({ model: MODEL, prompt, max_tokens: 30, temperature: 0, stop: ['\u0000never', stop] })
  ).json();
  assert.equal(j.choices[0].text, stripped);
  assert.equal(j.choices[0].finish_reason, 'stop');
  assert.equal(j.choices[0].stop_reason, stop);
  const events = await sse(await post({ model: MODEL, prompt, max_tokens: 30, temperature: 0, stop, stream: true }));
  assert.equal(events.pop(), '[DONE]');
  const chunks = events.map((x) => JSON.parse(x).choices[0]);
  assert.equal(chunks.map((c) => c.text).join(''), stripped);
  assert.equal(chunks.at(-1).stop_reason, stop);

  const texts: string[] = [];
  const r = await engine().generate(req(prompt, { maxTokens: 30, stop: ['\u0000never', stop] }), (c) =>
    texts.push(c.text),
  );
  assert.equal(r.finishReason, 'stop');
  assert.equal(r.stopString, stop);
  assert.equal(r.text, ref.text);
  assert.deepEqual(r.tokenIds, ref.tokenIds);
  assert.equal(texts.join(''), r.text);
});

test('two base URLs, the first a closed port: the request succeeds via the second; all closed → error', {
  skip,
}, async () => {
  const dead = `http://127.0.0.1:${await closedPort()}`;
  const ref = await direct.generate(req('x', { maxTokens: 10 }));
  const e = engine({ baseUrls: [dead, `${base}/v1`], retries: 1 });
  for (let i = 0; i < 2; i++) {
    // whichever the round-robin starts with
    const r = await e.generate(req('x', { maxTokens: 10 }));
    assert.equal(r.finishReason, 'length', r.error);
    assert.equal(r.text, ref.text);
  }
  const none = await engine({ baseUrls: [dead], retries: 1 }).generate(req('x', { maxTokens: 10 }));
  assert.equal(none.finishReason, 'error');
  assert.match(none.error!, /2 attempt/);
  // A 4xx is not retried and says why.
  const bad = await engine({ apiKey: 'wrong' }).generate(req('x'));
  assert.equal(bad.finishReason, 'error');
  assert.match(bad.error!, /HTTP 401/);
});

test('bad bodies → 400 with the field named (OpenAI error shape); unknown model → 404', { skip }, async () => {
  const cases: [unknown, string | null][] = [
    [{ model: MODEL, prompt: 5 }, 'prompt'],
    [{ prompt: 'x' }, 'model'],
    [{ model: MODEL, prompt: 'x', max_tokens: -1 }, 'max_tokens'],
    [{ model: MODEL, prompt: 'x', temperature: 'hot' }, 'temperature'],
    [{ model: MODEL, prompt: 'x', stop: [1] }, 'stop'],
    [{ model: MODEL, prompt: 'x', logprobs: 9 }, 'logprobs'],
    ['{not json', null],
  ];
  for (const [body, param] of cases) {
    const r = await post(body);
    assert.equal(r.status, 400, JSON.stringify(body));
    const e = await r.json();
    assert.equal(e.error.type, 'invalid_request_error');
    if (param) {
      assert.equal(String(e.error.param).split('.')[0], param);
      assert.match(e.error.message, new RegExp(param));
    }
  }
  const r = await post({ model: 'other', prompt: 'x' });
  assert.equal(r.status, 404);
  assert.equal((await r.json()).error.param, 'model');
  const long = await post({ model: MODEL, prompt: 'y'.repeat(200) });
  assert.equal(long.status, 400);
});

test('SGLang weight routes: the API key guards them, every completion names its weight_version, reloads only from under the weights root', {
  skip,
}, async () => {
  const get = (route: string, key: string | null = KEY) =>
    fetch(`${base}${route}`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  assert.equal((await get('/get_weight_version', null)).status, 401);
  assert.deepEqual(await (await get('/get_weight_version')).json(), { weight_version: '0' });
  const j = await (await post({ model: MODEL, prompt: 'Hi', max_tokens: 3, temperature: 0 })).json();
  assert.equal(j.weight_version, '0');
  const update = (body: unknown, key: string | null = KEY) =>
    fetch(`${base}/update_weights_from_disk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });
  assert.equal((await update({ model_path: dir }, null)).status, 401);
  // This server runs with the default root (data/weight-sync); the test's model lies elsewhere.
  const r = await update({ model_path: dir, weight_version: '1' });
  assert.equal(r.status, 403);
  assert.match((await r.json()).message, /model_path: .* is not under the weights root/);
  const bad = await update({ weight_version: '1' });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).message, /^model_path: /);
  assert.deepEqual(await (await get('/get_weight_version')).json(), { weight_version: '0' });
});

test('SIGTERM stops serve-model cleanly (exit 0)', { skip }, async () => {
  server!.child.kill('SIGTERM');
  // Bounds a hang only: the exit must come (unref'd, so a passing test does not wait the bound out).
  const code = await Promise.race([server!.exited, new Promise((r) => setTimeout(() => r('timeout'), 60_000).unref())]);
  assert.equal(code, 0, server!.out());
  assert.match(server!.out(), /serve-model stopped/);
});
