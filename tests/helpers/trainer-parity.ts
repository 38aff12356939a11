/**
 * What the trainer-group tests share (tests/integration/trainer-dist.test.ts, tests/ray/trainer-ray.test.ts): a tiny
 * Qwen3 to initialise on every transport, seven sequences of different lengths, a relative tolerance check and the
 * largest weight difference between two HF exports.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { EMBEDDED_VOCAB } from '../../workers/engines/tokenizer.ts';
import { trainerPython } from '../../workers/trainer/python.ts';
import type { InitParams, Trainer } from '../../workers/trainer/types.ts';

export const PARITY_INIT: InitParams = {
  model: { arch: 'qwen3', n_layer: 2, n_head: 4, n_kv_head: 2, n_embd: 32, block_size: 64 },
  vocab: EMBEDDED_VOCAB,
  seed: 3,
  device: 'cpu',
  optim: { lr: 1e-2, warmup_steps: 0, weight_decay: 0.01 },
};

/** Seven sequences of different lengths: with micro_batch 2 two ranks get 2 and 2 micro-batches (one padded round). */
export const PARITY_SEQS = Array.from({ length: 7 }, (_, i) =>
  Array.from({ length: 10 + 3 * i }, (_, j) => 3 + ((i * 11 + j * 5) % 95)),
);

export const near = (a: number, b: number, tol: number, what: string) =>
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

/** Largest absolute difference between the weights of two HF directories (the trainer's export_hf). */
export function maxWeightDiff(a: string, b: string): number {
  const code = `import sys
from safetensors.torch import load_file
x, y = load_file(sys.argv[1] + "/model.safetensors"), load_file(sys.argv[2] + "/model.safetensors")
assert x.keys() == y.keys(), (sorted(x), sorted(y))
print(max(float((x[k] - y[k]).abs().max()) for k in x))`;
  return Number(execFileSync(trainerPython(), ['-c', code, a, b], { encoding: 'utf8' }).trim());
}

/** One SFT step and the log-probs after it on both trainers (the group with micro-batches): the same figures. */
export async function assertSameSftAndLogprobs(one: Trainer, group: Trainer) {
  const [s1, s2] = await Promise.all([
    one.sftStep({ sequences: PARITY_SEQS }),
    group.sftStep({ sequences: PARITY_SEQS, micro_batch: 2 }),
  ]);
  near(s2.loss, s1.loss, 1e-5, 'sft loss');
  near(s2.grad_norm, s1.grad_norm, 1e-4, 'grad norm');
  const [l1, l2] = await Promise.all([
    one.logprobs({ sequences: PARITY_SEQS }),
    group.logprobs({ sequences: PARITY_SEQS, micro_batch: 3 }),
  ]);
  for (const [i, row] of l1.entries())
    for (const [j, x] of row.entries()) {
      if (x === null) assert.equal(l2[i]![j], null);
      else near(l2[i]![j]!, x, 1e-4, `logprob ${i},${j}`);
    }
  return l1;
}
