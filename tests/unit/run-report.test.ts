// A run's stage report (docs/recipes-and-training.md "The default recipe"): stage wall times from the run's
// events, each stage's evaluation with its intervals, and the text that page's table is pasted from.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatRunReport } from '../../cli/run-report.ts';
import type { RunEvent } from '../../contracts/events.ts';
import { stageReports, type RunReport } from '../../server/store/run-report.ts';

const ev = (seq: number, time: number, type: string, data: unknown): RunEvent => ({
  runId: 'r',
  seq,
  time,
  level: 'info',
  type,
  message: type,
  data,
});
const summary = (pass1: number) => ({
  problems: 2,
  samples: 8,
  k: 4,
  pass1,
  passK: 0.9,
  pass1Ci: { lo: pass1 - 0.1, hi: pass1 + 0.1 },
  passKCi: { lo: 0.8, hi: 1 },
  meanLength: 90,
  toolCallsPerTrajectory: 0.8,
  toolErrorRate: 0.05,
  toolErrorRateCorrect: 0.02,
  noToolCallRate: 0.25,
  finishReasons: {},
});
const row = (step: number, pass1: number) => ({ step, benchmark: 'arith', details: JSON.stringify(summary(pass1)) });

test('stage wall times run from a stage start to the end of the evaluation after it; evals belong to the stage they end', () => {
  const events = [
    ev(1, 1_000, 'status', { status: 'running' }),
    ev(2, 6_000, 'stage', { stage: 0, name: 'sft', type: 'sft', startStep: 0 }),
    ev(3, 400_000, 'eval', null),
    ev(4, 400_001, 'stage', { stage: 1, name: 'rl-1', type: 'rl', startStep: 3000 }),
    // A crash and a resume: the stage starts again; its wall time spans the gap and the start is counted.
    ev(5, 450_000, 'status', { status: 'running' }),
    ev(6, 452_000, 'stage', { stage: 1, name: 'rl-1', type: 'rl', startStep: 3000 }),
    ev(7, 500_000, 'eval', null),
    ev(8, 500_001, 'stage', { stage: 2, name: 'rl-2', type: 'rl', startStep: 3016 }),
    ev(9, 560_000, 'status', { status: 'succeeded' }),
  ];
  const r = stageReports(events, [row(3000, 0.58), row(3016, 0.66)], 3028);
  assert.equal(r.setupS, 5);
  assert.deepEqual(
    r.stages.map((s) => [s.name, s.startStep, s.endStep, s.wallS, s.starts]),
    [
      ['sft', 0, 3000, 394, 1],
      ['rl-1', 3000, 3016, 99.999, 2],
      ['rl-2', 3016, 3028, 59.999, 1],
    ],
  );
  // rl-2 had no evaluation after it (it ends where the run succeeded).
  assert.deepEqual(
    r.stages.map((s) => s.evals.map((e) => e.pass1)),
    [[0.58], [0.66], []],
  );
  assert.equal(r.wallS, 559);
});

test('a running stage has no wall time and the run none', () => {
  const r = stageReports(
    [
      ev(1, 0, 'status', { status: 'running' }),
      ev(2, 10, 'stage', { stage: 0, name: 'sft', type: 'sft', startStep: 0 }),
    ],
    [],
    5,
  );
  assert.equal(r.stages[0]!.wallS, null);
  assert.equal(r.stages[0]!.endStep, null);
  assert.equal(r.wallS, null);
});

test('the report text: the commit and seed, a row per stage with intervals, the paired difference and whether it excludes zero', () => {
  const report: RunReport = {
    runId: 'run_1',
    name: 'default',
    status: 'succeeded',
    seed: 1,
    codeVersion: 'abc123',
    wallS: 700,
    setupS: 6,
    stages: [
      {
        stage: 0,
        name: 'sft',
        type: 'sft',
        startStep: 0,
        endStep: 3000,
        wallS: 420,
        starts: 1,
        evals: [{ ...summary(0.583), benchmark: 'arith', step: 3000 }],
      },
      {
        stage: 1,
        name: 'rl-1',
        type: 'rl',
        startStep: 3000,
        endStep: 3016,
        wallS: 90,
        starts: 2,
        evals: [{ ...summary(0.732), benchmark: 'arith', step: 3016 }],
      },
    ],
    paired: [
      {
        benchmark: 'arith',
        a: { pass1: 0.583, ci: null, problems: 2 },
        b: { pass1: 0.732, ci: null, problems: 2 },
        paired: { problems: 2, a: 0.583, b: 0.732, diff: 0.149, ci: { lo: 0.1, hi: 0.2 }, excludesZero: true },
      },
    ],
    firstEvalStep: 3000,
    lastEvalStep: 3016,
  };
  const text = formatRunReport(report);
  assert.match(text, /^run default \(run_1\): succeeded, seed 1, commit abc123, wall 700 s \(set-up 6 s\)/);
  assert.match(
    text,
    /\| sft \| 3000 \(→ 3000\) \| 420 s \| arith \(2 × 4\) \| 58\.3% \[48\.3–68\.3\] \| 90\.0% \[80\.0–100\.0\] \| 25\.0% \| 5\.0% \| 2\.0% \| 90 \|/,
  );
  assert.match(text, /\| rl-1 \(resumed ×1\) \| 16 \(→ 3016\) \| 90 s \|/);
  assert.match(
    text,
    /arith: step 3016 − step 3000 = \+14\.9 pts \[\+10\.0, \+20\.0\] on 2 problems \(paired bootstrap; excludes zero\)/,
  );
});
