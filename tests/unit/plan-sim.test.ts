import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type SimInput, simulateStep } from '../../contracts/plan-sim.ts';

const base: SimInput = {
  trajectories: 200,
  engines: 2,
  tokensPerS: 2000,
  perRequestTokensPerS: 100,
  maxBatch: 32,
  kvTokens: 40 * 600,
  promptTokens: 100,
  maxResponseTokens: 500,
  meanResponseTokens: 200,
  maxTurns: 6,
  meanCalls: 2,
  executors: 8,
  cpuPerCallS: 0.05,
  senders: 2,
  batchSize: 16,
  dispatchIntervalS: 0.01,
  dispatch: 'async',
  seed: 3,
};

test("tool calls are conserved: every turn but a trajectory's last makes one, under either dispatch", () => {
  for (const dispatch of ['async', 'turn_sync'] as const) {
    const r = simulateStep({ ...base, dispatch });
    assert.equal(r.toolCalls, r.turns - base.trajectories, dispatch);
    assert.ok(r.toolCalls > 0);
  }
});

test('more executors never make a step slower', () => {
  let last = Number.POSITIVE_INFINITY;
  for (const executors of [1, 2, 4, 8, 16, 64]) {
    const r = simulateStep({ ...base, executors });
    assert.ok(r.stepS <= last + 1e-9, `${executors} executors: ${r.stepS} s after ${last} s`);
    last = r.stepS;
  }
});

test('with no tool latency turn-synchronous dispatch equals async (equal trajectories, all admitted, no per-request cap)', () => {
  // Then an engine decodes at its full rate whenever it has work, whichever turn that work belongs to.
  const x = {
    ...base,
    cpuPerCallS: 0,
    dispatchIntervalS: 0,
    lengths: 'fixed' as const,
    kvTokens: 1e9,
    perRequestTokensPerS: base.tokensPerS,
  };
  const a = simulateStep({ ...x, dispatch: 'async' });
  const s = simulateStep({ ...x, dispatch: 'turn_sync' });
  assert.ok(Math.abs(a.stepS - s.stepS) < 1e-6 * a.stepS, `${a.stepS} vs ${s.stepS}`);
  assert.equal(a.toolCalls, s.toolCalls);
});

test('with real tool latency and uneven trajectories async dispatch is faster and idles the engines less', () => {
  const a = simulateStep({ ...base, dispatch: 'async' });
  const s = simulateStep({ ...base, dispatch: 'turn_sync' });
  assert.ok(a.stepS < s.stepS, `${a.stepS} vs ${s.stepS}`);
  assert.ok(a.engineIdleShare < s.engineIdleShare);
});

test('the same seed gives the same step; a mean tool latency at least the CPU time of a call', () => {
  assert.deepEqual(simulateStep(base), simulateStep(base));
  const r = simulateStep({ ...base, executors: 1000 });
  assert.ok(r.meanToolLatencyS >= 0.8 * base.cpuPerCallS, String(r.meanToolLatencyS));
});

test('the report preset: ~45K tool calls a step, async dispatch well ahead of turn-synchronous', async () => {
  const { CLUSTER_PRESETS, DEFAULT_CONSTANTS, parseCluster } = await import('../../contracts/plan.ts');
  const { REPORT_SIM, simInputFor } = await import('../../contracts/plan-sim.ts');
  const stage = { promptsPerStep: 512, rolloutsPerPrompt: 32, maxResponseTokens: 8192, maxTurns: 10 };
  const cluster = parseCluster(CLUSTER_PRESETS.report);
  const a = simulateStep(simInputFor(stage, 14.8e9, cluster, DEFAULT_CONSTANTS, REPORT_SIM, 'async'));
  const s = simulateStep(simInputFor(stage, 14.8e9, cluster, DEFAULT_CONSTANTS, REPORT_SIM, 'turn_sync'));
  assert.ok(Math.abs(a.toolCalls - 45_000) / 45_000 < 0.1, `${a.toolCalls} calls`);
  assert.equal(a.toolCalls, s.toolCalls, 'the same trajectories either way');
  assert.ok(s.stepS > 1.5 * a.stepS && s.engineIdleShare > a.engineIdleShare, `${a.stepS} vs ${s.stepS}`);
});
