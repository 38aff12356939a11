import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CLUSTER_PRESETS,
  DEFAULT_CONSTANTS,
  type PlanConstants,
  parseCluster,
  planRun,
  runPhaseLines,
  sessionLine,
  whyBound,
} from '../../contracts/plan.ts';
import { calibrate, measuredSteps } from '../../contracts/plan-calibration.ts';
import { coresForLatency, erlangC, meanLatency } from '../../contracts/plan-queueing.ts';
import { parseRecipe, type RecipeInput } from '../../contracts/recipe.ts';

const close = (a: number, b: number, rel = 1e-9) =>
  assert.ok(Math.abs(a - b) <= rel * Math.max(1, Math.abs(b)), `${a} ≉ ${b}`);

/** One RL stage of `steps` steps: 4 prompts × 8 rollouts, G = 4, 100-token budget. */
const recipeInput = (async = false, steps = 10): RecipeInput =>
  ({
    name: 'plan-test',
    model: { kind: 'model', name: 'm' },
    stages: [
      {
        type: 'rl',
        name: 'rl',
        data: { kind: 'generated', n: 100, seed: 1 },
        steps,
        promptsPerStep: 4,
        rolloutsPerPrompt: 8,
        keep: 4,
        maxResponseTokens: 100,
        maxTurns: 4,
        async: { enabled: async, maxStaleness: 1 },
      },
    ],
  }) as RecipeInput;
const recipe = (async = false, steps = 10) => parseRecipe(recipeInput(async, steps));

const fixed = (over: Partial<Record<keyof PlanConstants, number>>): PlanConstants => {
  const c = { ...DEFAULT_CONSTANTS };
  for (const [k, v] of Object.entries(over))
    c[k as keyof PlanConstants] = { value: v, source: { kind: 'default', detail: 'test' } };
  return c;
};

test('a CPU cluster: every phase by hand', () => {
  const c = fixed({
    responseShare: 0.5,
    callsPerTrajectory: 2,
    promptTokens: 50,
    engineTokensPerS: 400,
    trainTokensPerS: 200,
    syncFixedS: 0.5,
    syncBytesPerS: 1e9,
    overheadS: 0.1,
    bytesPerToken: 10,
    bytesPerTrajectory: 1000,
    metricsPerStep: 60,
  });
  const p = planRun(recipe(), 1e6, parseCluster(CLUSTER_PRESETS.local), c);
  const s = p.stages[0]!;
  // 32 trajectories × 50 tokens = 1,600 generated at 400/s = 4 s; 16 kept × (50 + 50) = 1,600 trained at 200/s = 8 s.
  assert.equal(s.trajectories, 32);
  close(s.generatedTokens, 1600);
  close(s.rolloutS, 4);
  close(s.trainedTokens, 1600);
  close(s.trainS, 8);
  // 0.5 s + 2 bytes × 1e6 / 1e9.
  close(s.syncS, 0.502);
  close(s.stepS, 4 + 8 + 0.502 + 0.1);
  assert.equal(s.boundBy, 'train');
  assert.equal(s.toolCalls, 64);
  close(s.storageBytes, 32 * (1000 + 50 * 10));
  assert.equal(s.dbRows, 32 + 64 + 60);
  close(p.runSeconds, 10 * s.stepS);
  assert.equal(p.gpuHours, 0, 'no GPU on this machine');
  assert.equal(p.trainMemoryGbPerGpu, null);
});

test('async: a step takes the longer of rollout and train + sync', () => {
  const c = fixed({
    engineTokensPerS: 400,
    trainTokensPerS: 200,
    syncFixedS: 0.5,
    syncBytesPerS: 1e9,
    overheadS: 0.1,
    promptTokens: 50,
  });
  const sync = planRun(recipe(false), 1e6, parseCluster(CLUSTER_PRESETS.local), c).stages[0]!;
  const asy = planRun(recipe(true), 1e6, parseCluster(CLUSTER_PRESETS.local), c).stages[0]!;
  close(asy.stepS, Math.max(sync.rolloutS, sync.trainS + sync.syncS) + 0.1);
  assert.ok(asy.stepS < sync.stepS);
  assert.equal(asy.boundBy, 'train');
});

test('a GPU cluster: 2·N FLOPs per generated token at the decode efficiency, 8·N per trained token at the MFU', () => {
  const c = fixed({
    responseShare: 1,
    promptTokens: 0,
    engineDecodeEfficiency: 0.05,
    mfu: 0.4,
    syncFixedS: 0,
    syncBytesPerS: 1e10,
    overheadS: 0,
  });
  const cluster = parseCluster(CLUSTER_PRESETS.h200);
  const N = 1e9;
  const p = planRun(recipe(), N, cluster, c);
  const s = p.stages[0]!;
  const perGpu = (0.05 * 989e12) / (2 * N);
  close(s.rolloutS, 3200 / (perGpu * 8));
  close(s.trainS, (8 * N * 1600) / (8 * 989e12 * 0.4));
  close(s.syncS, (2 * N) / 1e10);
  close(p.gpuHours, (8 * p.runSeconds) / 3600);
  close(p.trainMemoryGbPerGpu!, (16 * N) / 8 / 1e9);
});

test('Erlang C and the cores that hold a latency', () => {
  // One server: the wait probability is the load; the latency that of M/M/1, s / (1 − ρ).
  close(erlangC(0.5, 1, 1), 0.5);
  close(meanLatency(0.5, 1, 1), 2);
  // Two servers at load 1: C = 1/3 (textbook), latency 1/3 · 1 / (2 − 1) + 1.
  close(erlangC(1, 1, 2), 1 / 3);
  close(meanLatency(1, 1, 2), 4 / 3);
  assert.equal(meanLatency(3, 1, 2), Number.POSITIVE_INFINITY, 'the cores cannot keep up');
  // 100 calls/s of 0.05 s: 5 cores busy; the fewest that keep the mean within 0.06 s.
  const c = coresForLatency(100, 0.05, 0.06);
  assert.ok(meanLatency(100, 0.05, c) <= 0.06 && meanLatency(100, 0.05, c - 1) > 0.06, String(c));
  // More cores never make it slower.
  for (let k = 6; k < 20; k++) assert.ok(meanLatency(100, 0.05, k + 1) <= meanLatency(100, 0.05, k));
});

test('the report preset: ~45K tool calls a step and 510 steps in about a week (the published figures)', () => {
  const report = parseRecipe({
    name: 'report-shape',
    model: { kind: 'model', name: 'qwen3-14b-sft' },
    stages: [
      {
        type: 'rl',
        name: 's1',
        data: { kind: 'generated', n: 100 },
        steps: 300,
        promptsPerStep: 512,
        rolloutsPerPrompt: 32,
        keep: 16,
        maxResponseTokens: 8192,
        maxTurns: 10,
      },
      {
        type: 'rl',
        name: 's2',
        data: { kind: 'generated', n: 100 },
        steps: 85,
        promptsPerStep: 512,
        rolloutsPerPrompt: 32,
        keep: 16,
        maxResponseTokens: 12288,
        maxTurns: 10,
      },
      {
        type: 'rl',
        name: 's3',
        data: { kind: 'generated', n: 100 },
        steps: 125,
        promptsPerStep: 512,
        rolloutsPerPrompt: 32,
        keep: 16,
        maxResponseTokens: 12288,
        maxTurns: 10,
      },
    ],
  } as RecipeInput);
  const p = planRun(report, 14.8e9, parseCluster(CLUSTER_PRESETS.report));
  close(p.toolCallsPerStep, 45_056, 0.05);
  assert.equal(p.steps, 510);
  const days = p.runSeconds / 86400;
  assert.ok(days > 3.5 && days < 10, `${days.toFixed(1)} days`);
  assert.equal(p.boundBy, 'rollout');
});

test('calibration on a run: constants fitted from its steps; a run predicts itself', () => {
  const r = recipe(false, 4);
  const series: Record<string, { step: number; value: number }[]> = {};
  const put = (key: string, step: number, value: number) => (series[key] ??= []).push({ step, value });
  for (const step of [31, 32, 33, 34]) {
    put('time/rollout', step, 4);
    put('time/train', step, 1);
    put('time/sync', step, 0.4);
    put('time/reward', step, 0.05);
    put('time/roc', step, 0);
    put('time/storage', step, 0.05);
    put('time/step', step, 5.5);
    put('rollout/response_length', step, 60);
    put('rollout/tool_calls', step, 1.5);
  }
  put('sft/loss', 1, 2); // an SFT step: not an RL step
  const steps = measuredSteps(r, series);
  assert.equal(steps.length, 4);
  const c = calibrate(steps, 'run_x');
  close(c.responseShare.value, 0.6);
  close(c.engineTokensPerS.value, (32 * 60) / 4);
  close(c.trainTokensPerS.value, (16 * (60 + DEFAULT_CONSTANTS.promptTokens.value)) / 1);
  assert.equal(c.callsPerTrajectory.value, 1.5);
  assert.match(c.engineTokensPerS.source.detail, /run_x, 4 steps/);
  assert.equal(c.engineTokensPerS.source.kind, 'measured');
  assert.equal(c.mfu.source.kind, 'default', 'GPU constants are not fitted on a CPU run');
  const p = planRun(r, 1e6, parseCluster(CLUSTER_PRESETS.local), c);
  close(p.stepSeconds, 4 + 1 + 0.4 + 0.1 + (2 * 1e6) / DEFAULT_CONSTANTS.syncBytesPerS.value, 1e-6);
});

test('bad clusters are refused naming the field', () => {
  assert.throws(() => parseCluster({ nodes: 0, gpusPerNode: 1, cpuCoresPerNode: 4 }), /nodes/);
  assert.throws(
    () =>
      parseCluster({ nodes: 1, gpusPerNode: 1, cpuCoresPerNode: 4, gpu: { name: 'x', peakTflops: -1, memoryGb: 1 } }),
    /gpu\.peakTflops/,
  );
});

test('whyBound names the bound phase, what it is made of, and its seconds against the step and the others', () => {
  const stage = {
    name: 'grpo',
    steps: 10,
    trajectories: 64,
    generatedTokens: 65_536,
    trainedTokens: 70_000,
    toolCalls: 128,
    rolloutS: 30,
    trainS: 5,
    syncS: 1,
    overheadS: 0.5,
    stepS: 36.5,
    boundBy: 'rollout' as const,
    sandboxCores: 2,
    toolLatencyS: 0.1,
    sessions: 0,
    sessionMemoryBytes: 0,
    storageBytes: 1e6,
    dbRows: 300,
  };
  assert.equal(
    whyBound(stage),
    'grpo: rollout bounds the step — generating 65,536 tokens and running 128 tool calls takes 30.00 s of its 36.50 s (train 5.00 s, sync 1.00 s, overhead 0.50 s)',
  );
  assert.match(
    whyBound({ ...stage, boundBy: 'train', trainS: 40, stepS: 71.5 }),
    /^grpo: train bounds the step — training on 70,000 tokens takes 40.00 s of its 1.2 min \(rollout 30.00 s, /,
  );
});

test('on CPUs the rates depend on the model: the lower of the tiny-model ceiling and the FLOP/s at 2·N and 8·N', () => {
  const c = fixed({
    responseShare: 0.5,
    promptTokens: 50,
    engineTokensPerS: 400,
    cpuEngineFlops: 4e9,
    trainTokensPerS: 200,
    cpuTrainFlops: 8e9,
  });
  const local = parseCluster(CLUSTER_PRESETS.local);
  // 1M parameters: under both FLOP bounds (2 GFLOP/s of decode, 1.6 of training), so the ceilings hold.
  const small = planRun(recipe(), 1e6, local, c).stages[0]!;
  close(small.rolloutS, 1600 / 400);
  close(small.trainS, 1600 / 200);
  // 100M parameters: 4e9 / 2e8 = 20 tokens/s generated, 8e9 / 8e8 = 10 trained.
  const big = planRun(recipe(), 1e8, local, c).stages[0]!;
  close(big.rolloutS, 1600 / 20);
  close(big.trainS, 1600 / 10);
});

/** An SFT stage, an RL stage, and evaluations on a generated and a stored set. */
const fullRecipe = (evalOver: Record<string, unknown> = {}) =>
  parseRecipe({
    name: 'plan-full',
    model: { kind: 'model', name: 'm' },
    stages: [
      { type: 'sft', name: 'sft', data: { kind: 'generated', n: 100, seed: 1 }, epochs: 3, batch: 8, maxLength: 400 },
      {
        type: 'rl',
        name: 'rl',
        data: { kind: 'generated', n: 100, seed: 1 },
        steps: 10,
        promptsPerStep: 4,
        rolloutsPerPrompt: 8,
        keep: 4,
        maxResponseTokens: 100,
        maxTurns: 4,
      },
    ],
    eval: {
      datasets: [
        { kind: 'generated', n: 20, seed: 3 },
        { kind: 'stored', name: 'gsm', split: 'test', limit: 30 },
      ],
      k: 4,
      maxTokens: 200,
      ...evalOver,
    },
  } as RecipeInput);

test('SFT stages and evaluations are planned: steps, tokens and seconds, and the run is their sum with RL', () => {
  const c = fixed({ responseShare: 0.5, sftLengthShare: 0.5, engineTokensPerS: 400, trainTokensPerS: 200 });
  const local = parseCluster(CLUSTER_PRESETS.local);
  const p = planRun(fullRecipe(), 1e6, local, c, { datasetSplits: { gsm: { train: 500, test: 47 } } });
  // SFT: ceil(100 × 3 / 8) = 38 steps, 300 demonstrations × 200 tokens; an SFT token costs 6/8 of an RL token.
  const sft = p.sft[0]!;
  assert.equal(sft.steps, 38);
  assert.equal(sft.demos, 300);
  close(sft.trainedTokens, 60_000);
  close(sft.seconds, 60_000 / (200 * (8 / 6)));
  // Evaluations: after each of the 2 stages; 20 generated + min(30, 47) stored problems × k 4 × 100 tokens.
  const e = p.evaluation!;
  assert.equal(e.evaluations, 2);
  assert.equal(e.problems, 50);
  assert.equal(e.samples, 200);
  close(e.secondsEach, (200 * 100) / 400);
  close(e.seconds, 2 * e.secondsEach);
  assert.deepEqual(e.unsized, []);
  close(p.phaseSeconds.rl, 10 * p.stages[0]!.stepS);
  close(p.runSeconds, p.phaseSeconds.sft + p.phaseSeconds.rl + p.phaseSeconds.eval);
  // Every 3 RL steps but the stage's last (3, 6, 9) and the starting model: 2 + 3 + 1.
  const often = planRun(fullRecipe({ everySteps: 3, atStart: true }), 1e6, local, c, {
    datasetSplits: { gsm: { test: 47 } },
  });
  assert.equal(often.evaluation!.evaluations, 6);
  // A stored set of unknown size is named, not guessed.
  const unknown = planRun(fullRecipe(), 1e6, local, c);
  assert.equal(unknown.evaluation!.problems, 20);
  assert.deepEqual(unknown.evaluation!.unsized, ['gsm']);
  assert.match(runPhaseLines(unknown).join('\n'), /not counted, size unknown here: gsm/);
  assert.match(runPhaseLines(p).join('\n'), /^run .*: SFT .*, RL .*, evaluation /);
  assert.equal(planRun(recipe(), 1e6, local, c).evaluation, null, 'no eval section, no evaluation');
});

test("calibrating with the model's size keeps the measured CPU rates whatever the FLOP defaults say", () => {
  const r = recipe();
  const metrics = {
    'time/rollout': 4,
    'time/train': 2,
    'rollout/response_length': 60,
  };
  const steps = [{ metrics, stage: r.stages[0] as Parameters<typeof calibrate>[0][number]['stage'] }];
  const base = fixed({ cpuEngineFlops: 1, cpuTrainFlops: 1 }); // FLOP bounds far below what was measured
  const c = calibrate(steps, 'run_y', base, 1e8);
  const s = planRun(r, 1e8, parseCluster(CLUSTER_PRESETS.local), c).stages[0]!;
  close(s.rolloutS, 4); // the measured rollout and training times come back
  close(s.trainS, 2);
  assert.equal(c.cpuEngineFlops.source.kind, 'measured');
  assert.match(c.cpuTrainFlops.source.detail, /run_y.*8·N/);
});

test('tool.session "trajectory": a stage holds one interpreter per trajectory in flight, and the plan says what they cost', () => {
  const fresh = planRun(recipe(), 135e6, parseCluster(CLUSTER_PRESETS.local), fixed({ sessionBytes: 1e8 }));
  assert.equal(fresh.stages[0]!.sessions, 0);
  assert.equal(sessionLine(fresh.stages[0]!), null);
  const withTool = (where: 'recipe' | 'stage', session: 'trajectory' | true) => {
    const input = recipeInput() as RecipeInput & { tool?: unknown };
    if (where === 'recipe') input.tool = { session };
    else (input.stages[0] as { tool?: unknown }).tool = { session };
    return parseRecipe(input);
  };
  for (const where of ['recipe', 'stage'] as const) {
    const p = planRun(
      withTool(where, 'trajectory'),
      135e6,
      parseCluster(CLUSTER_PRESETS.local),
      fixed({ sessionBytes: 1e8 }),
    );
    assert.equal(p.stages[0]!.sessions, 32, `${where}: 4 prompts × 8 rollouts`);
    assert.equal(p.stages[0]!.sessionMemoryBytes, 3.2e9);
    assert.match(
      sessionLine(p.stages[0]!) ?? '',
      /^rl: tool.session "trajectory" holds 32 interpreters at once .*3\.2 GB/,
    );
  }
  const replay = planRun(
    { ...recipe(), tool: { ...recipe().tool, session: true } },
    135e6,
    parseCluster(CLUSTER_PRESETS.local),
  );
  assert.equal(replay.stages[0]!.sessions, 0, 'replay runs each call fresh');
});
