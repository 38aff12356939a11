// @no-database. The GPU check (workers/trainer/gpu_check.py, `npm run check:gpu`): without a GPU it says so and exits 0;
// with --cpu-smoke the same code path (FSDP2 on one gloo rank, SFT and policy steps with the trainer's losses, an
// HF-format save and from_pretrained reload) runs on a tiny Qwen3 model and reports what it measured.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { trainerPython } from '../../workers/trainer/python.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PY = trainerPython();
const ready = spawnSync(PY, ['-c', 'import torch, transformers'], { stdio: 'ignore' }).status === 0;
const skip = ready ? false : `needs ${PY} with torch and transformers (node scripts/setup.mjs builds it)`;
const hasGpu =
  ready && spawnSync(PY, ['-c', 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)']).status === 0;

function check(...args: string[]) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/check-gpu.mjs'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 240_000,
  });
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 1, `one JSON line on stdout, got:\n${r.stdout}`);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

test('without a GPU the check says so and exits 0', {
  skip: skip || (hasGpu ? 'this machine has a GPU' : false),
}, () => {
  const out = check();
  assert.equal(out.gpu, false);
  assert.match(String(out.message), /no GPU/);
});

test('--cpu-smoke: FSDP2 SFT and policy steps, then an HF-format reload with the same logits', { skip }, () => {
  const out = check('--cpu-smoke');
  assert.equal(out.world_size, 1);
  assert.equal(out.dtype, 'fp32');
  assert.ok(Number(out.parameters) > 100_000, `parameters ${out.parameters}`);
  assert.ok(Number(out.tokens_per_s) > 0);
  assert.ok(
    Number.isFinite(out.sft_loss_first) && Number(out.sft_loss_last) < Number(out.sft_loss_first),
    `SFT loss falls: ${out.sft_loss_first} → ${out.sft_loss_last}`,
  );
  assert.ok(Number(out.policy_step_max_weight_change) > 0, 'the policy step moved the weights');
  assert.equal(out.reload_logits_equal, true, `max |Δ| ${out.reload_max_abs_diff}`);
});
