// @no-database: runs once, not once per database.
// The embedded ONNX engine on HF-format Qwen3 models (random weights, grouped-query attention) exported at test
// time by workers/trainer/export_onnx.py (~2 s each). Needs the trainer's Python (.venv, built by set-up) with
// torch and transformers; skipped without it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { OnnxEngine } from '../../workers/engines/onnx-engine.ts';
import { loadDir } from '../../workers/engines/onnx-model.ts';
import { entropyOf, logSoftmax } from '../../workers/engines/sampling.ts';
import { HfTokenizer } from '../../workers/engines/hf-tokenizer.ts';
import type { GenerateRequest } from '../../workers/engines/types.ts';
import { trainerPython } from '../../workers/trainer/python.ts';

const PY = trainerPython();
const env = { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }; // no __pycache__ in workers/trainer
const TRAINER = path.join(import.meta.dirname, '../../workers/trainer');
const hasTorch = spawnSync(PY, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
const skip = hasTorch ? false : `needs ${PY} with torch (node scripts/setup.mjs builds it)`;
// init_std 0.3 makes random-init logits peaked, so greedy decoding is far from ties and outputs vary by prompt.
const CONFIG = JSON.stringify({
  arch: 'qwen3',
  n_layer: 2,
  n_head: 4,
  n_kv_head: 2,
  n_embd: 64,
  block_size: 96,
  init_std: 0.3,
});

let tmp = '';
let dirA = '',
  dirB = '';
let engine: OnnxEngine;

/** The ONNX export in dir and, in dir + '-hf', the same model in HF format (what transformers loads). */
function exportModel(dir: string, seed: number, weights = 'float32') {
  execFileSync(
    PY,
    [
      path.join(TRAINER, 'export_onnx.py'),
      '--out',
      dir,
      '--seed',
      String(seed),
      '--config',
      CONFIG,
      '--weights',
      weights,
      ...(weights === 'float32' ? ['--save-hf', `${dir}-hf`] : []),
    ],
    { stdio: 'pipe', env },
  );
}

const req = (prompt: string, o: Partial<GenerateRequest> = {}): GenerateRequest => ({
  prompt,
  maxTokens: 20,
  temperature: 0,
  topP: 1,
  stop: [],
  ...o,
});

before(async () => {
  if (!hasTorch) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'onnx-engine-'));
  dirA = path.join(tmp, 'a');
  dirB = path.join(tmp, 'b');
  exportModel(dirA, 1);
  exportModel(dirB, 2);
  engine = await OnnxEngine.load(dirA, { maxBatch: 8 });
});
after(async () => {
  if (engine) await engine.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('export writes model.onnx, config.json and the HF tokenizer files; the char tokenizer round-trips, unknown → <unk>', {
  skip,
}, () => {
  for (const f of ['model.onnx', 'tokenizer.json', 'tokenizer_config.json', 'config.json'])
    assert.ok(fs.existsSync(path.join(dirA, f)), f);
  const cfg = JSON.parse(fs.readFileSync(path.join(dirA, 'config.json'), 'utf8'));
  assert.deepEqual([cfg.model_type, cfg.n_head, cfg.n_kv_head, cfg.eos_token_id], ['qwen3', 4, 2, 1]);
  const tok = HfTokenizer.fromDir(dirA);
  assert.equal(tok.vocabSize, cfg.vocab_size);
  assert.equal(tok.decode(tok.encode('Q: 4831*297+1234\n')), 'Q: 4831*297+1234\n');
  const ids = tok.encode('a→b');
  assert.equal(ids.length, 3);
  assert.equal(ids[1], 0); // <unk>
  assert.equal(tok.decode(ids), 'a<unk>b');
  assert.equal(engine.countTokens('hello'), 5);
});

test("the graph's log-sum-exp and entropy of a row (the sampler's, float64) equal those of its logits", {
  skip,
}, async () => {
  const m = await loadDir(dirA);
  try {
    const { n_layer, n_kv_head: H, head_dim: D, vocab_size: V } = m.config;
    const ids = m.tokenizer.encode('What is 6 times 7?');
    const T = ids.length;
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, T]),
      position_ids: new ort.Tensor(
        'int64',
        BigInt64Array.from(ids, (_, i) => BigInt(i)),
        [1, T],
      ),
      // One empty cached position (mask 0), then the prompt.
      attention_mask: new ort.Tensor('float32', Float32Array.from([0, ...ids.map(() => 1)]), [1, 1 + T]),
    };
    for (let l = 0; l < n_layer; l++) {
      feeds[`past_key_${l}`] = new ort.Tensor('float32', new Float32Array(H * D), [1, H, D, 1]);
      feeds[`past_value_${l}`] = new ort.Tensor('float32', new Float32Array(H * D), [1, H, 1, D]);
    }
    const out = await m.session.run(feeds);
    const lsm = logSoftmax((out.logits.data as Float32Array).subarray(0, V));
    const lse = (out.logsumexp.data as Float64Array)[0]!;
    const h = (out.entropy.data as Float64Array)[0]!;
    assert.ok(Math.abs(lse - ((out.logits.data as Float32Array)[0]! - lsm[0]!)) < 1e-6, `log-sum-exp ${lse}`);
    assert.ok(Math.abs(h - entropyOf(lsm)) < 1e-6, `entropy ${h} vs ${entropyOf(lsm)}`);
    assert.ok(h > 0);
  } finally {
    await m.session.release();
  }
});

test("greedy through the KV cache equals transformers' own greedy generate() on the same weights", {
  skip,
}, async () => {
  const tok = HfTokenizer.fromDir(dirA);
  for (const prompt of ['Q: 12+30=', '<|im_start|>user\n7*6<|im_end|>\n']) {
    const r = await engine.generate(req(prompt, { maxTokens: 24 }));
    const script = `
import json, torch
from transformers import AutoModelForCausalLM
m = AutoModelForCausalLM.from_pretrained(${JSON.stringify(`${dirA}-hf`)}).eval()
ids = torch.tensor([${JSON.stringify(tok.encode(prompt))}])
with torch.no_grad():
    out = m.generate(ids, do_sample=False, max_new_tokens=${r.tokenIds.length}, eos_token_id=None, pad_token_id=1)
print(json.dumps(out[0, ids.shape[1]:].tolist()))`;
    const ref = JSON.parse(execFileSync(PY, ['-c', script], { encoding: 'utf8', env }).trim().split('\n').pop()!);
    assert.deepEqual(r.tokenIds, ref.slice(0, r.tokenIds.length), prompt);
    assert.ok(r.tokenIds.length > 0);
  }
});

test('continuous batching: greedy alone equals greedy in a batch of 4 joining at different times', {
  skip,
}, async () => {
  const prompts = ['Hello', 'Q: 4831*297+1234', 'x', '<tool_call>{"code":"print(1)"}'];
  const alone = [];
  for (const p of prompts) alone.push((await engine.generate(req(p, { maxTokens: 30 }))).tokenIds);
  const stepsBefore = engine.steps;
  // Each joins once the one before it has 3 tokens (or has ended): counted in tokens, not time, so the requests
  // overlap the same way on a busy machine as on an idle one.
  const joined: Promise<number[]>[] = [];
  const join = (i: number) => {
    let n = 0;
    let started = false;
    const next = () => {
      if (started || i + 1 >= prompts.length) return;
      started = true;
      join(i + 1);
    };
    joined.push(
      engine
        .generate(req(prompts[i], { maxTokens: 30 + 5 * i }), () => {
          if (++n === 3) next();
        })
        .then((r) => {
          next();
          return r.tokenIds.slice(0, 30);
        }),
    );
  };
  join(0);
  const batched: number[][] = [];
  for (let i = 0; i < prompts.length; i++) batched.push(await joined[i]!);
  assert.deepEqual(batched, alone);
  // They really overlapped: fewer decode steps than one after another (maxTokens - 1 each: the prefill gives the first).
  assert.ok(engine.steps - stepsBefore < 29 + 34 + 39 + 44, `steps ${engine.steps - stepsBefore}`);
});

test('seeded sampling: same seed → same output (alone or batched), different seeds differ', { skip }, async () => {
  const s = (seed: number) => req('Once upon a time', { temperature: 1, topP: 0.95, seed, maxTokens: 40 });
  const a = await engine.generate(s(7));
  const [b, , c] = await Promise.all([
    engine.generate(s(7)),
    engine.generate(req('noise', { temperature: 1, maxTokens: 33 })),
    engine.generate(s(8)),
  ]);
  assert.deepEqual(b.tokenIds, a.tokenIds);
  assert.equal(b.text, a.text);
  assert.notDeepEqual(c.tokenIds, a.tokenIds);
});

test('stop string honoured (kept in text, reported); max tokens honoured; logprobs finite and ≤ 0; chunks stream', {
  skip,
}, async () => {
  const free = await engine.generate(req('Q: 7*6=', { maxTokens: 30 }));
  assert.equal(free.finishReason, 'length');
  assert.equal(free.tokenIds.length, 30);
  assert.equal(free.promptTokens, 7);
  assert.ok(free.logprobs!.every((x) => Number.isFinite(x) && x <= 0));
  // Use a piece of the greedy continuation as the stop string.
  const stop = free.text.slice(5, 7);
  const chunks: string[] = [];
  const r = await engine.generate(req('Q: 7*6=', { maxTokens: 30, stop: ['\u0000never', stop] }), (c) =>
    chunks.push(c.text),
  );
  assert.equal(r.finishReason, 'stop');
  assert.equal(r.stopString, stop);
  assert.ok(r.text.endsWith(stop));
  assert.equal(r.text, free.text.slice(0, free.text.indexOf(stop) + stop.length));
  assert.equal(chunks.join(''), r.text);
  assert.equal(chunks.length, r.tokenIds.length);
  const short = await engine.generate(req('Q: 7*6=', { maxTokens: 3 }));
  assert.deepEqual(short.tokenIds, free.tokenIds.slice(0, 3));
  assert.equal(short.finishReason, 'length');
});

test('context limit, empty prompt, abort', { skip }, async () => {
  const bs = engine.config.block_size;
  const long = await engine.generate(req('a'.repeat(bs - 4), { maxTokens: 100 }));
  assert.equal(long.finishReason, 'length');
  assert.equal(long.tokenIds.length, 4); // prompt + output fill the context exactly
  assert.equal((await engine.generate(req('a'.repeat(bs)))).finishReason, 'error');
  assert.equal((await engine.generate(req(''))).finishReason, 'error');
  const ac = new AbortController();
  let n = 0;
  const r = await engine.generate(req('abort me', { maxTokens: 80, signal: ac.signal }), () => {
    if (++n === 5) ac.abort();
  });
  assert.equal(r.finishReason, 'aborted');
  assert.ok(r.tokenIds.length >= 5 && r.tokenIds.length < 80);
});

test('capacity reports in-flight requests and reserved tokens', { skip }, async () => {
  const idle = engine.capacity();
  assert.equal(idle.inFlight, 0);
  assert.equal(idle.totalTokens, 8 * engine.config.block_size);
  assert.equal(idle.freeTokens, idle.totalTokens);
  const p = [engine.generate(req('abc', { maxTokens: 10 })), engine.generate(req('de', { maxTokens: 20 }))];
  const busy = engine.capacity();
  assert.equal(busy.inFlight, 2);
  assert.equal(busy.freeTokens, idle.totalTokens - (3 + 10) - (2 + 20));
  await Promise.all(p);
  assert.deepEqual(engine.capacity(), idle);
});

test('reload swaps weights between steps: output changes, in-flight requests finish', { skip }, async () => {
  const before = await engine.generate(req('Hello', { maxTokens: 20 }));
  const inflight = engine.generate(req('running during reload', { maxTokens: 40 }));
  await engine.reload(dirB);
  assert.equal(engine.weightVersion, 1);
  const afterB = await engine.generate(req('Hello', { maxTokens: 20 }));
  assert.notDeepEqual(afterB.tokenIds, before.tokenIds);
  const r = await inflight;
  assert.equal(r.finishReason, 'length');
  assert.equal(r.tokenIds.length, 40);
  await engine.reload(dirA);
  assert.deepEqual((await engine.generate(req('Hello', { maxTokens: 20 }))).tokenIds, before.tokenIds);
});

test("prefix reuse: a session's next turn starts from its parked cache and decodes exactly what a full prefill gives", {
  skip,
}, async () => {
  const fresh = await OnnxEngine.load(dirA, { maxBatch: 8, prefixCacheTokens: 0 });
  try {
    const turn1 = await engine.generate(req('Turn one of a session', { maxTokens: 15, sessionId: 's1' }));
    const next = `Turn one of a session${turn1.text} and the tool said 42.`;
    const before = engine.reusedTokens;
    const turn2 = await engine.generate(req(next, { maxTokens: 25, sessionId: 's1' }));
    assert.ok(engine.reusedTokens - before >= 20, `reused ${engine.reusedTokens - before} prompt tokens`);
    const full = await fresh.generate(req(next, { maxTokens: 25 }));
    assert.equal(fresh.reusedTokens, 0);
    assert.deepEqual(turn2.tokenIds, full.tokenIds);
    for (let i = 0; i < full.logprobs!.length; i++)
      assert.ok(Math.abs(turn2.logprobs![i]! - full.logprobs![i]!) < 1e-4);
    // Another session never starts from s1's cache.
    const other = engine.reusedTokens;
    await engine.generate(req(next, { maxTokens: 5, sessionId: 's2' }));
    assert.equal(engine.reusedTokens, other);
  } finally {
    await fresh.close();
  }
});

test("a shared prompt (a GRPO group's first turn) is prefilled once for the group, and each request decodes what it would alone", {
  skip,
}, async () => {
  const alone = await OnnxEngine.load(dirA, { maxBatch: 8, prefixCacheTokens: 0 });
  try {
    const prompt = 'Eight rollouts of one group all start from this prompt:';
    const n = engine.countTokens(prompt);
    const [prefilled, reused] = [engine.prefillTokens, engine.reusedTokens];
    const group = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        engine.generate(req(prompt, { maxTokens: 12, sessionId: `group-${i}`, sharedPrompt: true })),
      ),
    );
    // All of it but the last token once, the last token by each of the eight (its logits are each one's own).
    assert.equal(engine.prefillTokens - prefilled, n - 1 + 8);
    assert.equal(engine.reusedTokens - reused, 7 * (n - 1));
    const full = await alone.generate(req(prompt, { maxTokens: 12 }));
    for (const r of group) {
      assert.deepEqual(r.tokenIds, full.tokenIds);
      for (let i = 0; i < full.logprobs!.length; i++) assert.ok(Math.abs(r.logprobs![i]! - full.logprobs![i]!) < 1e-4);
    }
    // The shared cache serves only requests that say they share the prompt; a session's next turn uses its own.
    const before = engine.reusedTokens;
    await engine.generate(req(prompt, { maxTokens: 3 }));
    await engine.generate(req(prompt, { maxTokens: 3, sessionId: 'not-of-the-group' }));
    assert.equal(engine.reusedTokens, before);
    await engine.generate(req(`${prompt}${group[0]!.text} then more`, { maxTokens: 3, sessionId: 'group-0' }));
    assert.ok(engine.reusedTokens - before >= n, `group-0's next turn reused ${engine.reusedTokens - before}`);
  } finally {
    await alone.close();
  }
});

test('entropies: one per token, within [0, ln V]; stats report the running batch, KV blocks and the weight version', {
  skip,
}, async () => {
  // The stats as the first token streams: all three are in flight then, whatever the machine's speed.
  let s: ReturnType<OnnxEngine['stats']>[number] | undefined;
  const p = Array.from({ length: 3 }, (_, i) =>
    engine.generate(req(`stats ${i}`, { maxTokens: 30, temperature: 1, seed: i }), () => {
      s ??= engine.stats()[0];
    }),
  );
  const rs = await Promise.all(p);
  assert.ok(s);
  assert.equal(s.running + s.waiting, 3);
  assert.ok(s!.kvBlocksUsed > 0 && s!.kvBlocksUsed <= s!.kvBlocksTotal);
  assert.equal(s!.weightVersion, engine.weightVersion);
  for (const r of rs) {
    assert.equal(r.entropies!.length, r.tokenIds.length);
    for (const h of r.entropies!) assert.ok(h >= 0 && h <= Math.log(engine.config.vocab_size) + 1e-9);
  }
  assert.ok(engine.stats()[0]!.tokensPerS > 0);
});

test('reload while requests generate: in-flight ones finish on the old weights (version recorded), later ones on the new; a stale version is refused', {
  skip,
}, async () => {
  const other = await OnnxEngine.load(dirB, { maxBatch: 8 });
  const solo = await OnnxEngine.load(dirA, { maxBatch: 8 });
  try {
    const prompts = ['first in flight', 'second in flight', 'third in flight'];
    const onA = await Promise.all(prompts.map((x) => solo.generate(req(x, { maxTokens: 40 }))));
    const onB = await other.generate(req('after the reload', { maxTokens: 20 }));
    const v = engine.weightVersion;
    let chunks = 0;
    let reloading: Promise<void> | null = null;
    let late: Promise<import('../../workers/engines/types.ts').GenerateResult> | null = null;
    const inflight = prompts.map((x) =>
      engine.generate(req(x, { maxTokens: 40 }), () => {
        if (++chunks === 6) {
          reloading = engine.reload(dirB);
          late = engine.generate(req('after the reload', { maxTokens: 20 }));
        }
      }),
    );
    const rs = await Promise.all(inflight);
    await reloading;
    rs.forEach((r, i) => {
      assert.equal(r.weightVersion, v);
      assert.deepEqual(r.tokenIds, onA[i]!.tokenIds);
    });
    const after = await late!;
    assert.equal(after.weightVersion, v + 1);
    assert.deepEqual(after.tokenIds, onB.tokenIds);
    const stale = await engine.generate(req('old version', { weightVersion: v }));
    assert.equal(stale.finishReason, 'error');
    assert.equal(stale.stale, true);
    assert.match(stale.error!, /weight version/);
    assert.equal(
      (await engine.generate(req('current version', { weightVersion: v + 1, maxTokens: 3 }))).finishReason,
      'length',
    );
    await engine.reload(dirA);
  } finally {
    await other.close();
    await solo.close();
  }
});

// Quantized weights (export_onnx.py --weights, workers/trainer/onnx_weights.py) against float32 on the same random
// weights. Greedy log-probs are compared only where both engines saw the same context: the shared greedy prefix
// and the first position where they part (there each is its distribution's largest log-prob, which moves
// continuously with the logits even when the argmax flips at a near-tie). Tolerances, in nats: this model's random
// weights (init_std 0.3) amplify rounding more than a trained model's, and the runs measured at most 0.25 (int8)
// and 0.95 (int4, mean 0.30 at the first token); the bounds leave 2x room and still fail a wrong bit layout, which
// scrambles the weights (differences of whole nats, ln 98 ≈ 4.6 being uniform).
test('quantized weights (int8, int4): smaller exports that run, log-probs finite and ≤ 0, within tolerance of float32', {
  skip,
}, async () => {
  const prompts = [
    'Hello world',
    'abc',
    'The quick brown fox',
    '12+34=',
    'x',
    'Once upon a time',
    'zzz',
    'Q: why?\nA:',
  ];
  const greedy = async (dir: string) => {
    const e = await OnnxEngine.load(dir, { maxBatch: 8 });
    try {
      return await Promise.all(prompts.map((p) => e.generate(req(p))));
    } finally {
      await e.close();
    }
  };
  const size = (dir: string) => fs.statSync(path.join(dir, 'model.onnx')).size;
  const ref = await greedy(dirA);
  const bounds = { int8: { max: 0.5, first: 0.2 }, int4: { max: 2, first: 0.6 } };
  for (const [weights, bound] of Object.entries(bounds)) {
    const dir = path.join(tmp, weights);
    exportModel(dir, 1, weights);
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')).weights, weights);
    assert.ok(size(dir) < size(dirA) / 2, `${weights}: ${size(dir)} bytes vs float32 ${size(dirA)}`);
    const got = await greedy(dir);
    let worst = 0;
    let first = 0;
    got.forEach((r, i) => {
      assert.ok(
        r.logprobs!.every((x) => Number.isFinite(x) && x <= 0),
        weights,
      );
      const f = ref[i]!;
      let n = 0;
      while (n < Math.min(r.tokenIds.length, f.tokenIds.length) - 1 && r.tokenIds[n] === f.tokenIds[n]) n++;
      for (let j = 0; j <= n; j++) worst = Math.max(worst, Math.abs(r.logprobs![j]! - f.logprobs![j]!));
      first += Math.abs(r.logprobs![0]! - f.logprobs![0]!) / prompts.length;
    });
    assert.ok(worst <= bound.max, `${weights}: greedy log-prob differs from float32 by ${worst} (bound ${bound.max})`);
    assert.ok(first <= bound.first, `${weights}: first-token mean difference ${first} (bound ${bound.first})`);
  }
  assert.ok(size(path.join(tmp, 'int4')) < size(path.join(tmp, 'int8')));
});

test("the quantizer's blocks: codes, scales and zero points laid out as MatMulNBits reads them (tests/python)", {
  skip,
}, () => {
  execFileSync(PY, ['-m', 'unittest', path.join(import.meta.dirname, '../python/test_onnx_weights.py')], {
    stdio: 'pipe',
    env,
  });
});
