// @no-database: runs once, not once per database.
// The PyTorch trainer (workers/trainer/trainer.py) over its JSON-lines RPC (workers/trainer/client.ts), on tiny
// Hugging Face models (Qwen3 configs from random weights). Needs the trainer's Python (.venv, built by set-up) with
// torch and transformers; skipped without it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TrainerClient, TrainerError } from '../../workers/trainer/client.ts';
import type { InitParams } from '../../workers/trainer/types.ts';
import { HfTokenizer } from '../../workers/engines/hf-tokenizer.ts';
import { OnnxEngine } from '../../workers/engines/onnx-engine.ts';
import { CharTokenizer, EMBEDDED_VOCAB, embeddedTokenizerSpec } from '../../workers/engines/tokenizer.ts';
import { trainerPython } from '../../workers/trainer/python.ts';

const PY = trainerPython();
const hasTorch = spawnSync(PY, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
const skip = hasTorch ? false : `needs ${PY} with torch (node scripts/setup.mjs builds it)`;
const env = { ...process.env, TOOLSMITH_TRAINER_THREADS: '1' };

const tok = new CharTokenizer(embeddedTokenizerSpec());
const MODEL = { n_layer: 2, n_head: 4, n_embd: 32, block_size: 128 };
const initParams = (o: Partial<InitParams> = {}): InitParams => ({
  model: MODEL,
  vocab: EMBEDDED_VOCAB,
  seed: 1,
  device: 'cpu',
  ...o,
});
const TEXTS = [
  'Q: 12+30=\n<answer>42</answer>',
  'Q: 7*6=\n<answer>42</answer>',
  'Q: 100-1=\n<answer>99</answer>',
  'Q: 3*3=\n<answer>9</answer>',
];
const SEQS = TEXTS.map((s) => tok.encode(s));

async function rejectsWith(p: Promise<unknown>, type: string, re?: RegExp): Promise<TrainerError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof TrainerError, `expected a TrainerError, got ${e}`);
    assert.equal(e.type, type, e.message);
    if (re) assert.match(e.message, re);
    return e;
  }
  assert.fail(`expected a ${type} error`);
}

let t: TrainerClient;
let tmp = '';
before(async () => {
  if (!hasTorch) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trainer-'));
  t = await TrainerClient.start({ env });
});
after(async () => {
  if (t) await t.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('SFT loss falls on a few fixed sequences; eval_loss agrees with the step loss', { skip }, async () => {
  const info = await t.init(initParams({ optim: { lr: 3e-3, warmup_steps: 0, weight_decay: 0 } }));
  assert.equal(info.config!.vocab_size, EMBEDDED_VOCAB.length);
  assert.equal(info.step, 0);
  const ev = await t.evalLoss({ sequences: SEQS });
  const losses: number[] = [];
  for (let i = 0; i < 30; i++) {
    const m = await t.sftStep({ sequences: SEQS, micro_batch: 3 });
    assert.equal(m.step, i + 1);
    assert.equal(
      m.tokens,
      SEQS.reduce((s, x) => s + x.length, 0),
    );
    assert.ok(m.grad_norm > 0 && m.tokens_per_s > 0);
    losses.push(m.loss);
  }
  assert.ok(Math.abs(ev.loss - losses[0]) < 1e-5, `eval ${ev.loss} vs first step ${losses[0]}`);
  assert.ok(losses[0] > 4, `random-init loss ${losses[0]} should be near ln(${EMBEDDED_VOCAB.length})`);
  assert.ok(losses[29] < 0.6 * losses[0], `loss ${losses[0]} → ${losses[29]}`);
  // Loss masks: training only on the answers gives a different (masked) loss.
  const masks: number[][] = SEQS.map((s, i) => s.map((_, j) => (j >= TEXTS[i].indexOf('<answer>') ? 1 : 0)));
  const masked = await t.evalLoss({ sequences: SEQS, loss_masks: masks });
  assert.equal(
    masked.masked_tokens,
    masks.flat().reduce((a, b) => a + b, 0),
  );
});

test('policy_step with all-zero advantages leaves every weight bit-identical (default optimiser config)', {
  skip,
}, async () => {
  await t.init(initParams({ seed: 5 })); // default AdamW: weight decay 0.01, warm-up
  await t.sftStep({ sequences: SEQS }); // non-zero Adam moments, so a step would move weights even with zero grads
  const before = await t.digest();
  const rs = SEQS.map((s) => s.length - 6);
  const old = await t.logprobs({ sequences: SEQS, response_start: rs });
  const params = {
    sequences: SEQS,
    response_start: rs,
    response_mask: old.map((r) => r.map(() => 1)),
    old_logprobs: old,
  };
  const m = await t.policyStep({ ...params, advantages: SEQS.map(() => 0) });
  assert.equal(m.skipped, true);
  assert.equal(m.step, before.step);
  assert.equal(m.grad_norm, 0);
  assert.equal(m.loss, 0);
  assert.ok(Math.abs(m.approx_kl) < 1e-6, `on-policy KL ${m.approx_kl}`);
  assert.ok(m.entropy > 0);
  assert.equal((await t.digest()).model, before.model);
  // A non-zero advantage does move them.
  const m2 = await t.policyStep({ ...params, advantages: [1, -1, 0.5, 0] });
  assert.equal(m2.skipped, false);
  assert.equal(m2.step, before.step + 1);
  assert.notEqual((await t.digest()).model, before.model);
});

test('clip fractions, dual clip, loss and approx KL on constructed ratios', { skip }, async () => {
  await t.init(initParams({ seed: 2 }));
  const seqs = ['Q: 1+1=\n<answer>2</a', 'Q: 2+2=\n<answer>4</answer'].map((s) => tok.encode(s));
  const rs = seqs.map((s) => s.length - 10);
  const cur = await t.logprobs({ sequences: seqs, response_start: rs });
  assert.deepEqual(
    cur.map((r) => r.length),
    [10, 10],
  );
  // Sequence 0 (advantage −1): ratios; the last token is a tool token (mask 0, old logprob null).
  const rA = [0.5, 0.5, 0.5, 1, 1, 1, 1.5, 4, 4, 7];
  const rB = [1.5, 1.5, 1.5, 1.5, 0.5, 0.5, 1, 1, 1.2, 1.25]; // advantage +1
  const maskA = [1, 1, 1, 1, 1, 1, 1, 1, 1, 0];
  const old = [
    cur[0].map((lp, j) => (maskA[j] ? lp! - Math.log(rA[j]) : null)),
    cur[1].map((lp, j) => lp! - Math.log(rB[j])),
  ];
  const m = await t.policyStep({
    sequences: seqs,
    response_start: rs,
    response_mask: [maskA, rB.map(() => 1)],
    old_logprobs: old,
    advantages: [-1, 1],
    eps_low: 0.2,
    eps_high: 0.28,
    dual_clip: 3,
  });
  const N = 19;
  assert.equal(m.masked_tokens, N);
  assert.ok(Math.abs(m.clip_frac_low - 3 / N) < 1e-9, `low ${m.clip_frac_low}`); // A<0, ρ=0.5 < 0.8
  assert.ok(Math.abs(m.clip_frac_high - 4 / N) < 1e-9, `high ${m.clip_frac_high}`); // A>0, ρ=1.5 > 1.28 (1.2, 1.25 are not)
  assert.ok(Math.abs(m.dual_clip_frac - 2 / N) < 1e-9, `dual ${m.dual_clip_frac}`); // A<0, ρ=4 > 3
  // Objective per token: A: 3×(−0.8) + 3×(−1) + 1×(−1.5) + 2×max(−4, −3) ; B: 4×1.28 + 2×0.5 + 2×1 + 1.2 + 1.25.
  const objective = 3 * -0.8 + 3 * -1 + 1 * -1.5 + 2 * -3 + (4 * 1.28 + 2 * 0.5 + 2 * 1 + 1.2 + 1.25);
  assert.ok(Math.abs(m.loss - -objective / N) < 1e-4, `loss ${m.loss} vs ${-objective / N}`);
  const kl = [...rA.slice(0, 9), ...rB].reduce((s, r) => s + (r - 1 - Math.log(r)), 0) / N;
  assert.ok(Math.abs(m.approx_kl - kl) < 1e-4, `kl ${m.approx_kl} vs ${kl}`);
  assert.equal(m.skipped, false);
  assert.ok(m.grad_norm > 0);
  // Without the dual clip nothing is dual-clipped and the two ρ=4 tokens count at −4.
  await t.init(initParams({ seed: 2 }));
  const m2 = await t.policyStep({
    sequences: seqs,
    response_start: rs,
    response_mask: [maskA, rB.map(() => 1)],
    old_logprobs: old,
    advantages: [-1, 1],
  });
  assert.equal(m2.dual_clip_frac, 0);
  assert.ok(Math.abs(m2.loss - -(objective - 2) / N) < 1e-4, `loss ${m2.loss}`);
});

test('TIS through policy_step: weights, clip states and metrics per mode on constructed ratios', { skip }, async () => {
  await t.init(initParams({ seed: 2 }));
  const seqs = ['Q: 1+1=\n<answer>2</a', 'Q: 2+2=\n<answer>4</answer'].map((s) => tok.encode(s));
  const rs = seqs.map((s) => s.length - 10);
  const cur = await t.logprobs({ sequences: seqs, response_start: rs });
  // PPO ratios π_θ / π_old (ρ) and TIS ratios π_old / π_rollout (q). Sequence A (Â = −1): ρ = 0.5 clips low at
  // tokens 0, 1; token 8 has no engine logprob, token 9 is a tool token. Sequence B (Â = +1): ρ = 1.5 clips high at 0.
  const rA = [0.5, 0.5, 1, 1, 1, 1, 1, 1, 1, 1];
  const qA = [3, 1, 3, 0.25, 1.5, 1, 1, 1, null, null];
  const rB = [1.5, 1, 1, 1, 1, 1, 1, 1, 1, 1];
  const qB = [1.5, 1.2, 1, 1, 1, 1, 1, 1, 1, 1];
  const maskA = [1, 1, 1, 1, 1, 1, 1, 1, 1, 0];
  const old = [
    cur[0].map((lp, j) => (maskA[j] ? lp! - Math.log(rA[j]) : null)),
    cur[1].map((lp, j) => lp! - Math.log(rB[j])),
  ];
  const rollout = [
    old[0].map((o, j) => (o === null || qA[j] === null ? null : o - Math.log(qA[j]!))),
    old[1].map((o, j) => o! - Math.log(qB[j])),
  ];
  const params = {
    sequences: seqs,
    response_start: rs,
    response_mask: [maskA, rB.map(() => 1)],
    old_logprobs: old,
    advantages: [-1, 1],
  };
  const N = 19; // trained tokens
  const V = 18; // of which with an engine logprob
  const k3 = [...qA.slice(0, 8), ...qB].reduce((a: number, q) => a + (q! - 1 - Math.log(q!)), 0) / V;
  const step = async (tis_mode: 'off' | 'token' | 'sequence' | 'mask', withRollout = true) => {
    await t.init(initParams({ seed: 2 })); // the same weights for every mode
    return t.policyStep({ ...params, ...(withRollout ? { rollout_logprobs: rollout } : {}), tis_mode, tis_cap: 2 });
  };
  const close = (a: number[], b: number[], what: string) =>
    a.forEach((x, i) => assert.ok(Math.abs(x - b[i]!) < 1e-5, `${what}[${i}]: ${x} vs ${b[i]}`));

  // token: w = min(q, 2). Objective: A −0.8·2 −0.8·1 −1·2 −1·0.25 −1·1.5 −3 −1 = −10.15; B 1.28·1.5 + 1.2 + 8 = 11.12.
  const tk = await step('token');
  assert.equal(tk.tis_applied, true);
  assert.equal(tk.tis_tokens, V);
  close(tk.token_weights[0]!, [2, 1, 2, 0.25, 1.5, 1, 1, 1, 1, 1], 'token weights A');
  close(tk.token_weights[1]!, [1.5, 1.2, 1, 1, 1, 1, 1, 1, 1, 1], 'token weights B');
  assert.deepEqual(tk.token_clip, [
    [1, 1, 4, 0, 0, 0, 0, 0, 0, 0],
    [2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
  ]); // PPO's low wins at token 0
  assert.ok(Math.abs(tk.loss - -(-10.15 + 11.12) / N) < 1e-4, `loss ${tk.loss}`);
  assert.ok(Math.abs(tk.mismatch_kl - k3) < 1e-6, `mismatch_kl ${tk.mismatch_kl} vs ${k3}`);
  assert.ok(Math.abs(tk.tis_truncated_frac - 2 / V) < 1e-9);
  assert.ok(Math.abs(tk.tis_mean_weight - (9.75 + 10.7) / V) < 1e-6, `mean weight ${tk.tis_mean_weight}`);
  assert.equal(tk.tis_masked_frac, 0);
  assert.ok(Math.abs(tk.clip_frac_low - 2 / N) < 1e-9 && Math.abs(tk.clip_frac_high - 1 / N) < 1e-9);

  // sequence: A's Π q = 3.375 → 2 on its 8 valid tokens (truncated); B's 1.8 on all 10.
  const sq = await step('sequence');
  close(sq.token_weights[0]!, [2, 2, 2, 2, 2, 2, 2, 2, 1, 1], 'sequence weights A');
  close(sq.token_weights[1]!, Array(10).fill(1.8), 'sequence weights B');
  assert.deepEqual(sq.token_clip, [
    [1, 1, 4, 4, 4, 4, 4, 4, 0, 0],
    [2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
  ]);
  assert.ok(Math.abs(sq.tis_truncated_frac - 8 / V) < 1e-9);
  assert.ok(Math.abs(sq.loss - -(-16.2 + 1.8 * 10.28) / N) < 1e-4, `loss ${sq.loss}`);

  // mask: q ∉ [1/2, 2] (3, 3, 0.25 in A) get weight 0, the rest 1.
  const mk = await step('mask');
  close(mk.token_weights[0]!, [0, 1, 0, 0, 1, 1, 1, 1, 1, 1], 'mask weights A');
  close(mk.token_weights[1]!, Array(10).fill(1), 'mask weights B');
  assert.deepEqual(mk.token_clip, [
    [1, 1, 5, 5, 0, 0, 0, 0, 0, 0],
    [2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
  ]);
  assert.ok(Math.abs(mk.tis_masked_frac - 3 / V) < 1e-9);
  assert.equal(mk.tis_truncated_frac, 0);
  assert.ok(Math.abs(mk.loss - -(-0.8 - 5 + 10.28) / N) < 1e-4, `loss ${mk.loss}`);

  // off, and an engine without logprobs: the plain step (the same loss), still measured when logprobs exist.
  const off = await step('off');
  const none = await step('token', false);
  for (const m of [off, none]) {
    assert.equal(m.tis_applied, false);
    assert.ok(m.token_weights.flat().every((w) => w === 1));
    assert.deepEqual(m.token_clip, [
      [1, 1, 0, 0, 0, 0, 0, 0, 0, 0],
      [2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    ]);
    assert.ok(Math.abs(m.loss - none.loss) < 1e-7);
  }
  assert.ok(Math.abs(off.loss - -(2 * -0.8 + 7 * -1 + 1.28 + 9) / N) < 1e-4, `plain loss ${off.loss}`); // A −0.8·2 −1·7; B 1.28 + 9
  assert.ok(Math.abs(off.mismatch_kl - k3) < 1e-6);
  assert.deepEqual([none.tis_tokens, none.mismatch_kl, none.tis_mean_weight], [0, 0, 1]);
  await rejectsWith(
    t.policyStep({ ...params, rollout_logprobs: rollout, tis_mode: 'clip' as 'off' }),
    'bad_request',
    /^tis_mode/,
  );
  await rejectsWith(t.policyStep({ ...params, tis_cap: 1 }), 'bad_request', /^tis_cap/);
  await rejectsWith(t.policyStep({ ...params, rollout_logprobs: [rollout[0]] }), 'bad_request', /^rollout_logprobs/);
});

test('save → load (in a fresh process) restores weights, optimiser, RNG and step exactly', { skip }, async () => {
  await t.init(initParams({ seed: 9, optim: { lr: 1e-3, warmup_steps: 5 } }));
  for (let i = 0; i < 3; i++) await t.sftStep({ sequences: SEQS });
  const ck = path.join(tmp, 'ck', 'step3');
  const saved = await t.save(ck);
  assert.equal(saved.step, 3);
  assert.deepEqual(fs.readdirSync(path.dirname(ck)), ['step3']); // no temp directory left
  // Plain HF format beside the trainer's own state: weights in safetensors, the optimiser through DCP.
  for (const f of [
    'config.json',
    'model.safetensors',
    'tokenizer.json',
    'tokenizer_config.json',
    'trainer_state.json',
    'optimizer',
  ]) {
    assert.ok(fs.existsSync(path.join(ck, f)), `checkpoint has no ${f}`);
  }
  assert.equal(JSON.parse(fs.readFileSync(path.join(ck, 'config.json'), 'utf8')).model_type, 'qwen3');
  const lp = await t.logprobs({ sequences: SEQS });
  assert.equal(lp[0][0], null);
  assert.equal(lp[0].length, SEQS[0].length);
  const next = await t.sftStep({ sequences: SEQS });
  const after1 = await t.digest();

  const u = await TrainerClient.start({ env });
  try {
    const info = await u.load({ path: ck });
    assert.equal(info.step, 3);
    assert.deepEqual(info.optim, (await t.info()).optim);
    assert.deepEqual(await u.logprobs({ sequences: SEQS }), lp);
    const again = await u.sftStep({ sequences: SEQS });
    assert.equal(again.loss, next.loss);
    assert.equal(again.grad_norm, next.grad_norm);
    assert.equal(again.lr, next.lr);
    assert.equal((await u.digest()).model, after1.model); // identical AdamW update ⇒ optimiser state came back
    // reset_optimizer: same weights, fresh moments ⇒ a different update.
    await u.load({ path: ck, reset_optimizer: true });
    await u.sftStep({ sequences: SEQS });
    assert.notEqual((await u.digest()).model, after1.model);
  } finally {
    await u.close();
  }
});

test("export_onnx writes the engine directory atomically; the ONNX engine matches the trainer's logprobs", {
  skip,
}, async () => {
  await t.init(initParams({ seed: 3, model: { ...MODEL, init_std: 0.3 } }));
  const dir = path.join(tmp, 'export', 'policy');
  const r = await t.exportOnnx(dir);
  assert.deepEqual(r.files, ['config.json', 'model.onnx', 'tokenizer.json', 'tokenizer_config.json']);
  // The export carries the model's tokenizer (HF format): it gives the ids of the embedded char vocabulary.
  const hf = HfTokenizer.fromDir(dir);
  for (const s of TEXTS) assert.deepEqual(hf.encode(s), tok.encode(s));
  assert.equal(hf.eosId, 1);
  const check = async () => {
    const engine = await OnnxEngine.load(dir, { maxBatch: 2 });
    try {
      const prompt = 'Q: 12+30=';
      const g = await engine.generate({ prompt, maxTokens: 12, temperature: 0, topP: 1, stop: [] });
      const ids = [...tok.encode(prompt), ...g.tokenIds];
      const [lp] = await t.logprobs({ sequences: [ids], response_start: [tok.encode(prompt).length] });
      const engineLp = g.logprobs!;
      assert.equal(lp.length, engineLp.length);
      lp.forEach((x, i) =>
        assert.ok(Math.abs(x! - engineLp[i]) < 1e-4, `token ${i}: trainer ${x} engine ${engineLp[i]}`),
      );
      return g.tokenIds;
    } finally {
      await engine.close();
    }
  };
  const first = await check();
  // Train a little and export over the same directory: it is replaced whole, nothing is left beside it.
  await t.init(initParams({ seed: 3, model: { ...MODEL, init_std: 0.3 }, optim: { lr: 1e-2, warmup_steps: 0 } }));
  for (let i = 0; i < 3; i++) await t.sftStep({ sequences: SEQS });
  await t.exportOnnx(dir);
  assert.deepEqual(fs.readdirSync(path.dirname(dir)), ['policy']);
  const second = await check();
  assert.notDeepEqual(second, first);
});

test('a NaN loss is an error (nan_loss), the update is not applied, and the worker keeps answering', {
  skip,
}, async () => {
  await t.init(initParams({ optim: { lr: 1e30, warmup_steps: 0, grad_clip: null } }));
  let err: TrainerError | null = null;
  let ok = 0;
  for (let i = 0; i < 5 && !err; i++) {
    try {
      await t.sftStep({ sequences: SEQS });
      ok++;
    } catch (e) {
      err = e as TrainerError;
    }
  }
  assert.ok(err, 'expected a failing step');
  assert.equal(err.type, 'nan_loss', err.message);
  assert.match(err.message, /non-finite/);
  const info = await t.info();
  assert.equal(info.step, ok);
  await rejectsWith(t.sftStep({ sequences: SEQS }), 'nan_loss');
  const lp = await t.logprobs({ sequences: [SEQS[0]] });
  assert.ok(lp[0].slice(1).every((x) => x === null || typeof x === 'number')); // non-finite values arrive as null
});

test('malformed params are bad_request errors naming the field', { skip }, async () => {
  await t.init(initParams());
  await rejectsWith(t.call('sft_step', {}), 'bad_request', /^sequences/);
  await rejectsWith(t.sftStep({ sequences: SEQS, loss_masks: [[1]] }), 'bad_request', /^loss_masks/);
  await rejectsWith(
    t.sftStep({
      sequences: SEQS,
      loss_masks: SEQS.map((s) => s.map(() => 1)).map((m, i) => (i === 1 ? m.slice(1) : m)),
    }),
    'bad_request',
    /^loss_masks\[1\]/,
  );
  await rejectsWith(t.sftStep({ sequences: [[3, 9999, 4]] }), 'bad_request', /^sequences\[0\]\[1\]/);
  await rejectsWith(t.sftStep({ sequences: [Array(200).fill(5)] }), 'bad_request', /^sequences\[0\].*block_size/);
  const base = {
    sequences: [SEQS[0]],
    response_start: [3],
    response_mask: [SEQS[0].slice(3).map(() => 1)],
    old_logprobs: [SEQS[0].slice(3).map(() => -1)],
  };
  await rejectsWith(t.policyStep({ ...base, advantages: [] }), 'bad_request', /^advantages/);
  await rejectsWith(
    t.policyStep({ ...base, response_start: [0], advantages: [1] }),
    'bad_request',
    /^response_start\[0\]/,
  );
  await rejectsWith(
    t.policyStep({ ...base, old_logprobs: [[null, ...base.old_logprobs[0].slice(1)]], advantages: [1] }),
    'bad_request',
    /^old_logprobs\[0\]\[0\]/,
  );
  await rejectsWith(
    t.init({ ...initParams(), optim: { schedule: 'linear' as 'cosine' } }),
    'bad_request',
    /^optim\.schedule/,
  );
  await rejectsWith(t.init({ ...initParams(), vocab: 'abc' as unknown as string[] }), 'bad_request', /^vocab/);
  await rejectsWith(t.call('frobnicate'), 'bad_request', /^method/);
  await rejectsWith(t.load({ path: path.join(tmp, 'missing') }), 'bad_request', /^path/);
  await rejectsWith(t.init({ ...initParams(), model: { ...MODEL, n_kv_head: 3 } }), 'bad_request', /^model\.n_kv_head/);
  await rejectsWith(
    t.init({ ...initParams(), model: { ...MODEL, pos_emb: 'learned' } as never }),
    'bad_request',
    /^model\.pos_emb: unknown field/,
  );
  assert.equal((await t.info()).initialised, true); // still serving
});

test('load never unpickles: pickled weights are refused, and an optimiser metadata pickle is never read', {
  skip,
}, async () => {
  const marker = path.join(tmp, 'unpickled-marker');
  const evilPickle = (file: string) => {
    // A pickle whose loading calls os.system (as a hostile "checkpoint" would).
    const code = `import os, pickle, sys
class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + sys.argv[2],))
open(sys.argv[1], "wb").write(pickle.dumps({"x": Evil()}))`;
    const r = spawnSync(PY, ['-c', code, file, marker], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  };
  // 1. An HF directory whose weights are a pickle (pytorch_model.bin) only.
  await t.init(initParams({ seed: 4 }));
  const good = path.join(tmp, 'good');
  await t.sftStep({ sequences: SEQS });
  await t.save(good);
  const stepSaved = (await t.info()).step;
  const binOnly = path.join(tmp, 'bin-only');
  fs.mkdirSync(binOnly);
  fs.copyFileSync(path.join(good, 'config.json'), path.join(binOnly, 'config.json'));
  evilPickle(path.join(binOnly, 'pytorch_model.bin'));
  await rejectsWith(t.load({ path: binOnly }), 'bad_request', /^path.*safetensors/);
  // 2. The optimiser's metadata is JSON (DCP's pickle of it is deleted at save): a code-running pickle dropped
  //    beside it is never read, and the checkpoint still resumes with its optimiser state.
  assert.equal(fs.existsSync(path.join(good, 'optimizer', '.metadata')), false, 'no pickle is left in a checkpoint');
  const crafted = path.join(tmp, 'crafted');
  fs.cpSync(good, crafted, { recursive: true });
  evilPickle(path.join(crafted, 'optimizer', '.metadata'));
  assert.equal((await t.load({ path: crafted })).step, stepSaved);
  assert.equal(fs.existsSync(marker), false, 'the pickled code ran');
  // 3. A checkpoint whose only optimiser metadata is the pickle (as an older Toolsmith wrote, or an attacker) is
  //    refused, unread.
  fs.rmSync(path.join(crafted, 'optimizer', 'metadata.json'));
  await rejectsWith(
    t.load({ path: crafted }),
    'bad_request',
    /^path.*not an optimiser checkpoint this trainer reads \(no metadata\.json \(it holds only DCP's pickled \.metadata.*pickles are never read\)\)/,
  );
  assert.equal(fs.existsSync(marker), false, 'the pickled code ran');
  // 4. Crafted JSON pointing DCP outside the folder is refused naming the field.
  fs.writeFileSync(
    path.join(crafted, 'optimizer', 'metadata.json'),
    fs
      .readFileSync(path.join(good, 'optimizer', 'metadata.json'), 'utf8')
      .replace(/"file": "__0_0\.distcp"/, '"file": "../../model.distcp"'),
  );
  await rejectsWith(
    t.load({ path: crafted }),
    'bad_request',
    /^path.*not an optimiser checkpoint this trainer reads \(storage\[\d+\]\.file: '\.\.\/\.\.\/model\.distcp' is not a \.distcp file of the folder\)/,
  );
  // What the trainer writes is owner-only (it runs under umask 077).
  assert.equal(fs.statSync(good).mode & 0o777, 0o700);
  for (const f of ['model.safetensors', 'trainer_state.json', 'optimizer/metadata.json'])
    assert.equal(fs.statSync(path.join(good, f)).mode & 0o777, 0o600, f);
  // fresh (how a registered model is started from) never reads the optimiser files at all.
  assert.equal((await t.load({ path: crafted, fresh: true })).step, 0);
  assert.equal((await t.info()).initialised, true); // still serving
});

test('not initialised, timeouts, and a killed process rejects pending calls with "exited"', { skip }, async () => {
  const u = await TrainerClient.start({ env });
  assert.equal((await u.info()).initialised, false);
  await rejectsWith(u.sftStep({ sequences: SEQS }), 'not_initialised');
  await rejectsWith(u.call('sleep', { seconds: 0.5 }, { timeoutMs: 50 }), 'timeout');
  const pending = [u.call('sleep', { seconds: 30 }), u.info()];
  await new Promise((r) => setTimeout(r, 100));
  process.kill(u.pid!, 'SIGKILL');
  for (const p of pending) {
    const e = await rejectsWith(p, 'exited', /SIGKILL/);
    assert.equal(typeof e.stderr, 'string');
  }
  assert.equal(u.alive, false);
  await rejectsWith(u.info(), 'exited');
  await u.close(); // no-op on a dead process
});
