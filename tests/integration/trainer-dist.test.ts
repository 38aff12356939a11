// @no-database: runs once, not once per database.
// The trainer as a group of ranks (workers/trainer/dist.py, started by client.ts): 2 ranks with FSDP2 on CPU (gloo) against 1 process on
// the same batches, from the same initialisation: the same losses and log-probs, the same weights after updates
// (within float tolerance: the reductions add in another order), checkpoints written by 2 ranks resumed by 1 and
// the reverse, gradient accumulation over a token budget, gradient checkpointing. Needs the trainer's Python.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TrainerClient } from '../../workers/trainer/client.ts';
import type { PolicyParams } from '../../workers/trainer/types.ts';
import { assertSameSftAndLogprobs, maxWeightDiff, near, PARITY_INIT, PARITY_SEQS } from '../helpers/trainer-parity.ts';
import { trainerPython } from '../../workers/trainer/python.ts';

const PY = trainerPython();
const hasTorch = spawnSync(PY, ['-c', 'import torch.distributed.fsdp'], { stdio: 'ignore' }).status === 0;
const skip = hasTorch ? false : `needs ${PY} with torch (node scripts/setup.mjs builds it)`;
const env = { ...process.env, TOOLSMITH_TRAINER_THREADS: '1', TOOLSMITH_TRAINER_DEVICE: 'cpu' };
const init = PARITY_INIT;
const SEQS = PARITY_SEQS;

/** PPO ratios exp(d) of 1.05, 1.49 and 0.67 (clipped high for Â > 0, low for Â < 0) and TIS ratios π_old / π_rollout
 *  of 1, e (truncated at 2) and e^-1.2: every per-token state occurs, on sequences that the two ranks split. */
function policyParams(lp: (number | null)[][], adv: number[]): PolicyParams {
  const d = [0.05, 0.4, -0.4];
  const e = [0, 1, -1.2, 0.2];
  const old = lp.map((row) => row.slice(5).map((x, j) => x! - d[j % 3]!));
  return {
    sequences: SEQS,
    response_start: SEQS.map(() => 5),
    response_mask: SEQS.map((s) => s.slice(5).map((_, j) => (j % 4 === 3 ? 0 : 1))),
    old_logprobs: old,
    advantages: adv,
    rollout_logprobs: old.map((row) => row.map((x, j) => x - e[j % 4]!)),
    tis_mode: 'token',
    tis_cap: 2,
  };
}

let one: TrainerClient;
let two: TrainerClient;
let tmp = '';
before(async () => {
  if (!hasTorch) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trainer-dist-'));
  [one, two] = await Promise.all([
    TrainerClient.start({ env }),
    TrainerClient.start({ env, ranks: 2, startTimeoutMs: 120_000 }),
  ]);
});
after(async () => {
  await one?.close();
  await two?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test("2 ranks (FSDP2, gloo) give 1 rank's losses, log-probs, metrics and weights on the same batches", {
  skip,
}, async () => {
  assert.equal(two.ready!.world_size, 2);
  const [i1, i2] = await Promise.all([one.init(init), two.init(init)]);
  assert.equal(i2.world_size, 2);
  assert.equal(i1.params, i2.params);
  assert.equal(i2.trainable_params, i1.trainable_params); // a sharded parameter's numel() is already the whole tensor's
  const [e1, e2] = await Promise.all([
    one.evalLoss({ sequences: SEQS }),
    two.evalLoss({ sequences: SEQS, micro_batch: 2 }),
  ]);
  near(e2.loss, e1.loss, 1e-5, 'eval loss');
  const l1 = await assertSameSftAndLogprobs(one, two);
  const adv = [1, -1, 0.5, -0.5, 1, 0, -1];
  const [p1, p2] = await Promise.all([
    one.policyStep(policyParams(l1, adv)),
    two.policyStep({ ...policyParams(l1, adv), micro_batch: 2 }),
  ]);
  for (const k of [
    'loss',
    'clip_frac_low',
    'clip_frac_high',
    'approx_kl',
    'entropy',
    'grad_norm',
    'mismatch_kl',
    'tis_mean_weight',
    'tis_truncated_frac',
  ] as const)
    near(p2[k], p1[k], 1e-4, k);
  assert.equal(p2.masked_tokens, p1.masked_tokens);
  // Per-token outputs come back whole from rank 0, each rank's micro-batches included.
  assert.deepEqual(p2.token_clip, p1.token_clip);
  assert.deepEqual(
    p2.token_clip.map((r) => r.length),
    SEQS.map((s) => s.length - 5),
  );
  for (const c of [1, 2, 4]) assert.ok(p1.token_clip.flat().includes(c as 1 | 2 | 4), `clip state ${c} occurs`);
  p1.token_weights.forEach((row, i) =>
    row.forEach((w, j) => near(p2.token_weights[i]![j]!, w, 1e-6, `weight ${i},${j}`)),
  );
  assert.ok(p1.tis_applied && p1.tis_truncated_frac > 0);
  await Promise.all([one.exportHf(path.join(tmp, 'w1')), two.exportHf(path.join(tmp, 'w2'))]);
  const d = maxWeightDiff(path.join(tmp, 'w1'), path.join(tmp, 'w2'));
  assert.ok(d < 2e-4, `weights differ by ${d} after two updates`); // lr 1e-2: AdamW moves every weight by ~1e-2
  assert.ok(maxWeightDiff(path.join(tmp, 'w1'), path.join(tmp, 'w1')) === 0);
});

test('a checkpoint written by 2 ranks resumes in 1, and one written by 1 resumes in 2 (DCP reshards the optimiser)', {
  skip,
}, async () => {
  await Promise.all([one.init(init), two.init(init)]);
  await Promise.all([one.sftStep({ sequences: SEQS }), two.sftStep({ sequences: SEQS, micro_batch: 2 })]);
  const ck1 = path.join(tmp, 'ck1');
  const ck2 = path.join(tmp, 'ck2');
  await Promise.all([one.save(ck1), two.save(ck2)]);
  assert.ok(
    fs.readdirSync(path.join(ck2, 'optimizer')).filter((f) => f.endsWith('.distcp')).length === 2,
    'one optimiser shard per rank',
  );
  // The next update, continued in place, is the reference for both swaps.
  const next = SEQS.slice(2);
  const [r1] = await Promise.all([one.sftStep({ sequences: next }), two.sftStep({ sequences: next, micro_batch: 2 })]);
  await one.exportHf(path.join(tmp, 'ref'));
  // Swap: the 1-rank trainer takes the 2-rank checkpoint and the reverse.
  const [a, b] = await Promise.all([one.load({ path: ck2 }), two.load({ path: ck1 })]);
  assert.equal(a.step, 1);
  assert.equal(b.step, 1);
  const [q1, q2] = await Promise.all([
    one.sftStep({ sequences: next }),
    two.sftStep({ sequences: next, micro_batch: 2 }),
  ]);
  near(q1.loss, r1.loss, 1e-5, '2→1 resumed loss');
  near(q2.loss, r1.loss, 1e-5, '1→2 resumed loss');
  assert.equal(q1.step, 2);
  await Promise.all([one.exportHf(path.join(tmp, 'from2')), two.exportHf(path.join(tmp, 'from1'))]);
  for (const w of ['from2', 'from1']) {
    const d = maxWeightDiff(path.join(tmp, 'ref'), path.join(tmp, w));
    assert.ok(d < 2e-4, `${w}: weights differ by ${d}: the optimiser state did not come back`);
  }
  // Without the optimiser state the same update differs (the test can fail).
  await one.load({ path: ck2, reset_optimizer: true });
  await one.sftStep({ sequences: next });
  await one.exportHf(path.join(tmp, 'reset'));
  assert.ok(maxWeightDiff(path.join(tmp, 'ref'), path.join(tmp, 'reset')) > 1e-3);
});

test('a token budget accumulates gradients: the same update as the whole batch at once; gradient checkpointing too', {
  skip,
}, async () => {
  await one.init(init);
  const whole = await one.sftStep({ sequences: SEQS });
  await one.exportHf(path.join(tmp, 'whole'));
  await one.init(init);
  const budget = await one.sftStep({ sequences: SEQS, micro_batch_tokens: 64 }); // ≤ 64 padded tokens per pass: 5 passes
  near(budget.loss, whole.loss, 1e-5, 'loss');
  near(budget.grad_norm, whole.grad_norm, 1e-4, 'grad norm');
  await one.exportHf(path.join(tmp, 'budget'));
  assert.ok(maxWeightDiff(path.join(tmp, 'whole'), path.join(tmp, 'budget')) < 2e-4);
  await one.init({ ...init, gradient_checkpointing: true });
  const ckpt = await one.sftStep({ sequences: SEQS, micro_batch_tokens: 64 });
  near(ckpt.loss, whole.loss, 1e-5, 'checkpointed loss');
  near(ckpt.grad_norm, whole.grad_norm, 1e-4, 'checkpointed grad norm');
});

test('closing a 2-rank trainer takes every rank down', { skip }, async () => {
  const t = await TrainerClient.start({ env, ranks: 2, startTimeoutMs: 120_000 });
  const ranks = t.pids;
  assert.equal(ranks.length, 2, `the group should have 2 rank processes, has ${ranks.length}`);
  for (const pid of ranks)
    assert.equal(
      fs
        .readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        .split('\0')
        .some((a) => a.endsWith('trainer.py')),
      true,
    );
  await t.close();
  for (const c of ranks) {
    let alive = true;
    try {
      process.kill(c, 0);
    } catch {
      alive = false;
    }
    assert.equal(alive, false, `rank ${c} outlived its trainer`);
  }
});
