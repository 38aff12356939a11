import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argmax, entropyOf, logSoftmax, mulberry32, nucleus, sampleToken } from '../../workers/engines/sampling.ts';

const logits = Float32Array.from([1.5, 0.2, 3.0, -1.0, 2.9, 0.0]);

test('mulberry32: same seed, same stream; different seeds differ; values in [0, 1)', () => {
  const a = mulberry32(42),
    b = mulberry32(42),
    c = mulberry32(43);
  const xa = Array.from({ length: 100 }, a),
    xb = Array.from({ length: 100 }, b),
    xc = Array.from({ length: 100 }, c);
  assert.deepEqual(xa, xb);
  assert.notDeepEqual(xa, xc);
  assert.ok(xa.every((x) => x >= 0 && x < 1));
});

test('logSoftmax: exp sums to 1, all ≤ 0, stable for huge logits', () => {
  const lp = logSoftmax(logits);
  assert.ok(Math.abs(lp.reduce((s, x) => s + Math.exp(x), 0) - 1) < 1e-12);
  assert.ok(lp.every((x) => x <= 0));
  const big = logSoftmax([1e30, 1e30 - 1e24, -1e30]);
  assert.ok(big.every((x) => Number.isFinite(x) || x === -Infinity));
  assert.ok(Math.abs(Math.exp(big[0]) + Math.exp(big[1]) + Math.exp(big[2]) - 1) < 1e-9);
});

test('greedy at temperature 0: argmax, lowest id on ties, no random draws', () => {
  let draws = 0;
  const rng = () => {
    draws++;
    return 0.5;
  };
  assert.equal(sampleToken(logits, { temperature: 0, topP: 1 }, rng).id, 2);
  assert.equal(argmax([1, 3, 3, 0]), 1);
  assert.equal(draws, 0);
  const r = sampleToken(logits, { temperature: 0, topP: 1 }, rng);
  assert.ok(Math.abs(r.logprob - logSoftmax(logits)[2]) < 1e-12);
});

test('top-p: the nucleus is the smallest most-likely set reaching p, renormalised', () => {
  const full = Array.from(logSoftmax(logits), Math.exp);
  const order = [2, 4, 0, 1, 5, 3];
  for (const p of [0.01, 0.5, 0.8, 0.95, 1]) {
    const { ids, probs } = nucleus(logits, 1, p);
    assert.deepEqual(ids, order.slice(0, ids.length));
    const mass = ids.reduce((s, i) => s + full[i], 0);
    const without = mass - full[ids[ids.length - 1]];
    assert.ok(mass >= p - 1e-12 && without < p, `p=${p}`);
    assert.ok(Math.abs(probs.reduce((s, x) => s + x, 0) - 1) < 1e-12);
  }
  // Sampling never leaves the nucleus.
  const rng = mulberry32(7);
  const allowed = new Set(nucleus(logits, 1, 0.8).ids);
  for (let i = 0; i < 2000; i++) assert.ok(allowed.has(sampleToken(logits, { temperature: 1, topP: 0.8 }, rng).id));
});

test('sampling frequencies follow softmax(logits / T)', () => {
  const rng = mulberry32(1);
  const n = 20000;
  const counts = new Array(logits.length).fill(0);
  for (let i = 0; i < n; i++) counts[sampleToken(logits, { temperature: 2, topP: 1 }, rng).id]++;
  const expected = Array.from(logSoftmax(Array.from(logits, (x) => x / 2)), Math.exp);
  counts.forEach((c, i) => assert.ok(Math.abs(c / n - expected[i]) < 0.02, `token ${i}: ${c / n} vs ${expected[i]}`));
});

test('a seeded request is deterministic whatever is interleaved with it', () => {
  const run = (interleave: boolean) => {
    const mine = mulberry32(123),
      other = mulberry32(999);
    const out: number[] = [];
    for (let i = 0; i < 50; i++) {
      if (interleave) sampleToken(logits, { temperature: 1, topP: 0.9 }, other);
      out.push(sampleToken(logits, { temperature: 1, topP: 0.9 }, mine).id);
    }
    return out;
  };
  assert.deepEqual(run(false), run(true));
  const a = mulberry32(1),
    b = mulberry32(2);
  const sa = Array.from({ length: 50 }, () => sampleToken(logits, { temperature: 1, topP: 1 }, a).id);
  const sb = Array.from({ length: 50 }, () => sampleToken(logits, { temperature: 1, topP: 1 }, b).id);
  assert.notDeepEqual(sa, sb);
});

test('a draw over a real-sized vocabulary picks what the whole sorted nucleus picks, for every top-p and temperature', () => {
  // The reference: nucleus() sorts the whole vocabulary; sampleToken walks it a band at a time.
  const gen = mulberry32(5);
  const V = 49152;
  for (let row = 0; row < 12; row++) {
    // Peaked and flat rows, with ties (rounded logits) and a masked token.
    const spread = row % 3 === 0 ? 1 : row % 3 === 1 ? 6 : 20;
    const logits = Float32Array.from({ length: V }, () => Math.round((gen() * 2 - 1) * spread * 8) / 8);
    logits[7] = -Infinity;
    for (const [temperature, topP] of [
      [1, 1],
      [1, 0.95],
      [0.7, 0.9],
      [1.3, 1],
      [1, 0.3],
    ] as const) {
      const { ids, probs } = nucleus(logits, temperature, topP);
      for (let k = 0; k < 40; k++) {
        const u = gen();
        let acc = 0;
        let want = ids[ids.length - 1];
        for (let j = 0; j < ids.length; j++) {
          acc += probs[j];
          if (u < acc) {
            want = ids[j];
            break;
          }
        }
        const got = sampleToken(logits, { temperature, topP }, () => u).id;
        assert.equal(got, want, `row ${row}, T ${temperature}, p ${topP}, u ${u}`);
      }
    }
    // The log-prob and entropy of the model's own distribution, whatever was drawn, greedy too; with the graph's
    // log-sum-exp and entropy given (as the engine's exports compute them), the same token from the same draw.
    const lsm = logSoftmax(logits);
    const stats = { logSumExp: logits[0]! - lsm[0]!, entropy: entropyOf(lsm) };
    for (const temperature of [0, 0.7, 1]) {
      for (const topP of [1, 0.9]) {
        const u = gen();
        const r = sampleToken(logits, { temperature, topP }, () => u);
        assert.equal(r.logprob, lsm[r.id], `row ${row}: the same log-prob, bit for bit`);
        assert.ok(Math.abs(r.entropy - stats.entropy) < 1e-9, `row ${row}: entropy ${r.entropy} vs ${stats.entropy}`);
        const given = sampleToken(logits, { temperature, topP }, () => u, stats);
        assert.deepEqual(given, { id: r.id, logprob: logits[r.id]! - stats.logSumExp, entropy: stats.entropy });
      }
    }
  }
});
