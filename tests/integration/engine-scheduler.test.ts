// @no-database: runs once, not once per database.
// The docs/method.md §6 scheduler over two real embedded engines (random-weight models exported at test time).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { OnnxEngine } from '../../workers/engines/onnx-engine.ts';
import { EngineScheduler } from '../../workers/engines/scheduler.ts';
import type { GenerateRequest } from '../../workers/engines/types.ts';
import { trainerPython } from '../../workers/trainer/python.ts';

const PY = trainerPython();
const TRAINER = path.join(import.meta.dirname, '../../workers/trainer');
const skip =
  spawnSync(PY, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0
    ? false
    : `needs ${PY} with torch (node scripts/setup.mjs builds it)`;
const CONFIG = JSON.stringify({ n_layer: 2, n_head: 4, n_embd: 64, block_size: 96, init_std: 0.3 });

let tmp = '';
let small: OnnxEngine, large: OnnxEngine, single: OnnxEngine;

const req = (prompt: string, maxTokens = 30): GenerateRequest => ({
  prompt,
  maxTokens,
  temperature: 0,
  topP: 1,
  stop: [],
});

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-scheduler-'));
  execFileSync(PY, [path.join(TRAINER, 'export_onnx.py'), '--out', tmp, '--seed', '3', '--config', CONFIG], {
    stdio: 'pipe',
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  // Two engines with the same weights and different KV budgets (in tokens), and one to compare outputs with.
  small = await OnnxEngine.load(tmp, { id: 'small', maxBatch: 4, totalTokens: 100 });
  large = await OnnxEngine.load(tmp, { id: 'large', maxBatch: 8, totalTokens: 400 });
  single = await OnnxEngine.load(tmp, { id: 'single', maxBatch: 1 });
});

after(async () => {
  await Promise.all([small, large, single].filter(Boolean).map((e) => e.close()));
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('requests are spread by free budget, never past it, and give the same outputs as one engine', {
  skip,
}, async () => {
  const scheduler = new EngineScheduler([small, large]);
  const prompts = Array.from({ length: 12 }, (_, i) => `Q${i}: ${'abc'.repeat(i % 4)}?`);
  let peakSmall = 0,
    peakLarge = 0;
  const watch = setInterval(() => {
    peakSmall = Math.max(peakSmall, small.capacity().totalTokens - small.capacity().freeTokens);
    peakLarge = Math.max(peakLarge, large.capacity().totalTokens - large.capacity().freeTokens);
  }, 1);
  const results = await Promise.all(prompts.map((p) => scheduler.generate(req(p))));
  clearInterval(watch);
  const expected = [];
  for (const p of prompts) expected.push(await single.generate(req(p)));
  assert.deepEqual(
    results.map((r) => r.tokenIds),
    expected.map((r) => r.tokenIds),
    'same greedy outputs as a single engine',
  );
  assert.ok(results.every((r) => r.finishReason !== 'error'));
  // Each engine's own reservations never exceeded its budget, and both engines took work.
  assert.ok(peakSmall <= 100 && peakLarge <= 400, `peaks ${peakSmall}/100, ${peakLarge}/400`);
  const busy = scheduler.busyFraction();
  assert.ok(busy.small > 0 && busy.large > 0, `busy fractions ${JSON.stringify(busy)}`);
  assert.ok(busy.large <= 1 && busy.small <= 1);
  assert.equal(scheduler.capacity().freeTokens, 500, 'every reservation released');
  assert.equal(scheduler.waiting(), 0);
});

test('a request that can never fit is answered with an error naming the sizes, not queued forever', {
  skip,
}, async () => {
  const scheduler = new EngineScheduler([small]);
  const r = await scheduler.generate(req('x'.repeat(60), 80));
  assert.equal(r.finishReason, 'error');
  assert.match(r.error ?? '', /needs \d+ tokens .* no engine holds more than 100/);
});
