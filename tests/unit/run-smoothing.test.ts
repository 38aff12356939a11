import { test } from 'node:test';
import assert from 'node:assert/strict';
import { debiasedEma, smoothingWeight } from '../../components/runs/smoothing.ts';
import { stageBoundaries } from '../../contracts/recipe.ts';
import {
  chartRows,
  controlsFor,
  estimateEta,
  formatDuration,
  mergeStageEvents,
  stageOf,
  stepTimes,
} from '../../components/runs/dashboard.ts';
import {
  applyRollouts,
  clearFinished,
  groupByGroupId,
  rolloutsOf,
  type LiveRollout,
} from '../../components/runs/rollout-board.ts';

const close = (a: number | null, b: number, msg?: string) =>
  assert.ok(a !== null && Math.abs(a - b) < 1e-9, `${msg ?? ''} ${a} ≈ ${b}`);
const pts = (...v: [number, number][]) => v.map(([step, value]) => ({ step, value }));

test('debiasedEma: weight 0 is the identity', () => {
  assert.deepEqual(
    debiasedEma(pts([1, 4], [2, 7]), 0).map((p) => p.smoothed),
    [4, 7],
  );
});

test('debiasedEma: hand-computed values, w = 0.5, evenly spaced', () => {
  // last: 0.5, 1.75, 3.375; debias 1-0.5^n: 0.5, 0.75, 0.875
  const s = debiasedEma(pts([1, 1], [2, 3], [3, 5]), 0.5).map((p) => p.smoothed);
  close(s[0]!, 1, 'first point is its own value');
  close(s[1]!, 1.75 / 0.75);
  close(s[2]!, 3.375 / 0.875);
});

test('debiasedEma: hand-computed values, w = 0.9', () => {
  // last: 0.1·10 = 1 → /0.1 = 10; 0.9 + 0.1·20 = 2.9 → /0.19 = 15.263…
  const s = debiasedEma(pts([0, 10], [1, 20]), 0.9).map((p) => p.smoothed);
  close(s[0]!, 10);
  close(s[1]!, 2.9 / 0.19);
});

test('debiasedEma: a constant series stays constant (the debias removes the pull to 0)', () => {
  for (const p of debiasedEma(pts([1, 3], [2, 3], [3, 3], [4, 3]), 0.95)) close(p.smoothed, 3);
});

test('debiasedEma: time weighting, a gap of two steps decays by w^2', () => {
  // steps 1, 2, 4 (unit 1): third point's weight 0.25; last = 1.75·0.25 + 0.75·5 = 4.1875; decay 0.5·0.5·0.25
  const s = debiasedEma(pts([1, 1], [2, 3], [4, 5]), 0.5).map((p) => p.smoothed);
  close(s[2]!, 4.1875 / (1 - 0.0625));
  // Uniform spacing of 10 steps is the same as dense spacing.
  const sparse = debiasedEma(pts([10, 1], [20, 3], [30, 5]), 0.5).map((p) => p.smoothed);
  close(sparse[2]!, 3.375 / 0.875);
});

test('debiasedEma: non-finite values are skipped', () => {
  const s = debiasedEma(pts([1, 1], [2, NaN], [3, 3]), 0.5).map((p) => p.smoothed);
  assert.equal(s[1], null);
  // step 3 comes two units after step 1: weight 0.25; last = 0.5·0.25 + 0.75·3 = 2.375, decay 0.125
  close(s[2]!, 2.375 / 0.875);
  assert.equal(smoothingWeight(-1), 0);
  assert.equal(smoothingWeight(1), 0.999);
});

test('chartRows: one row per step, raw and smoothed, null where a key has no point', () => {
  const rows = chartRows({ a: pts([1, 1], [2, 3]), b: pts([2, 10]) }, ['a', 'b'], 0.5);
  assert.equal(rows.length, 2);
  assert.equal(rows[0]!.a, 1);
  assert.equal(rows[0]!.b, null);
  close(rows[1]!['a~'] ?? null, 1.75 / 0.75);
  assert.equal(rows[1]!['b~'], 10);
});

test("stageBoundaries (the run page uses the recipe schema's): rl steps and sft epochs × ⌈n / batch⌉ capped by maxSteps", () => {
  const spec = {
    stages: [
      { name: 'sft', type: 'sft', epochs: 2, batch: 8, data: { n: 20 } },
      { name: 'rl1', type: 'rl', steps: 10 },
      { name: 'sft2', type: 'sft', epochs: 5, batch: 8, data: { n: 80 }, maxSteps: 7 },
    ],
  };
  assert.deepEqual(
    stageBoundaries(spec).map((b) => [b.name, b.startStep, b.endStep]),
    [
      ['sft', 1, 6],
      ['rl1', 7, 16],
      ['sft2', 17, 23],
    ],
  );
  assert.deepEqual(stageBoundaries(null), []);
  assert.deepEqual(stageBoundaries({ stages: [{ type: 'rl' }] }), []);
});

test("mergeStageEvents: events move a stage start and add unknown stages; stageOf finds a step's stage", () => {
  const b = mergeStageEvents(
    [{ stage: 0, name: 'a', type: 'sft', startStep: 1, endStep: 5 }],
    [{ stage: 1, name: 'b', type: 'rl', startStep: 6 }],
  );
  assert.deepEqual(
    b.map((x) => [x.name, x.startStep]),
    [
      ['a', 1],
      ['b', 6],
    ],
  );
  assert.equal(stageOf(b, 7)?.name, 'b');
  assert.equal(stageOf(b, 0), null);
});

test('stepTimes and estimateEta: the rate over the recent steps, the time left', () => {
  const t = stepTimes({
    x: [
      { step: 1, value: 0, time: 1000 },
      { step: 2, value: 0, time: 3000 },
    ],
    y: [
      { step: 1, value: 0, time: 500 },
      { step: 3, value: 0, time: 5000 },
    ],
  });
  assert.deepEqual(t, [
    { step: 1, time: 500 },
    { step: 2, time: 3000 },
    { step: 3, time: 5000 },
  ]);
  const eta = estimateEta(t, 3, 12);
  close(eta!.rate, 2 / 4.5);
  close(eta!.etaSeconds!, 9 / (2 / 4.5));
  assert.equal(estimateEta(t.slice(0, 1), 1, 10), null);
  assert.equal(estimateEta(t, 3, null)!.etaSeconds, null);
  assert.equal(eta!.waitingFor, null);
  assert.equal(formatDuration(9), '9 s');
  assert.equal(formatDuration(75), '1 min 15 s');
  assert.equal(formatDuration(3725), '1 h 2 min');
});

test('controlsFor: pause for live training runs, resume for paused ones, cancel while not finished', () => {
  assert.deepEqual(controlsFor('running', 'train'), { cancel: true, pause: true, resume: false });
  assert.deepEqual(controlsFor('paused', 'train'), { cancel: true, pause: false, resume: true });
  assert.deepEqual(controlsFor('succeeded', 'diagnostics'), { cancel: false, pause: false, resume: false });
  assert.deepEqual(controlsFor('running', 'eval'), { cancel: true, pause: false, resume: false });
});

const r = (id: string, status: LiveRollout['status'], updatedAt: number, text = ''): LiveRollout => ({
  id,
  status,
  turns: [{ text, tool: null }],
  updatedAt,
});

test('applyRollouts: replace by id, newer wins, cap drops finished first', () => {
  let b = applyRollouts([], [r('a', 'generating', 1, 'x'), r('b', 'generating', 2)]);
  b = applyRollouts(b, [r('a', 'tool', 3, 'xy')]);
  assert.deepEqual(
    b.map((x) => [x.id, x.status]),
    [
      ['a', 'tool'],
      ['b', 'generating'],
    ],
  );
  b = applyRollouts(b, [r('a', 'generating', 2, 'stale')]);
  assert.equal(b.find((x) => x.id === 'a')!.turns[0]!.text, 'xy');
  const many = Array.from({ length: 60 }, (_, i) => r(`r${i}`, i < 20 ? 'finished' : 'generating', 100 + i));
  const capped = applyRollouts([], many, 50);
  assert.equal(capped.length, 50);
  assert.equal(capped.filter((x) => x.status === 'generating').length, 40);
  assert.equal(clearFinished(capped).length, 40);
  assert.deepEqual(
    rolloutsOf([{ id: 'q', turns: [] }, null, 3]).map((x) => x.id),
    ['q'],
  );
  assert.deepEqual(rolloutsOf({}), []);
});

test('groupByGroupId: groups in first-seen order with mean reward and kept count', () => {
  const row = (id: string, groupId: string, sampleIndex: number, reward: number, selected: boolean) => ({
    id,
    groupId,
    sampleIndex,
    reward,
    selected,
    selectReason: null,
    pErr: null,
    pFormat: null,
    responseTokens: 0,
    turns: 1,
    toolCalls: 0,
    toolErrors: 0,
    finishReason: 'stop',
    problemId: `p-${groupId}`,
  });
  const g = groupByGroupId([row('1', 'g2', 1, 1, true), row('2', 'g1', 0, 0, false), row('3', 'g2', 0, 0, true)]);
  assert.deepEqual(
    g.map((x) => [x.groupId, x.meanReward, x.kept, x.items.map((i) => i.id)]),
    [
      ['g2', 0.5, 2, ['3', '1']],
      ['g1', 0, 0, ['2']],
    ],
  );
});

test('estimateEta by stage: RL steps left are timed at the RL rate, not the SFT rate; an unmeasured stage ahead waits', () => {
  const stages = [
    { stage: 0, name: 'sft', type: 'sft', startStep: 1, endStep: 10 },
    { stage: 1, name: 'grpo', type: 'rl', startStep: 11, endStep: 15 },
  ];
  // SFT: a step a second; RL: a step a minute.
  const sft = Array.from({ length: 10 }, (_, i) => ({ step: i + 1, time: i * 1000 }));
  const rl = [
    { step: 11, time: 69_000 },
    { step: 12, time: 129_000 },
  ];
  const eta = estimateEta([...sft, ...rl], 12, 15, 20, stages)!;
  close(eta.rate, 1 / 60);
  close(eta.etaSeconds!, 3 * 60);
  close(eta.timeFraction!, 129 / (129 + 180));
  // By step count the run would look 80% done; by time it is 42%.
  assert.ok(eta.timeFraction! < 0.5);
  // SFT done, no RL step measured yet: no ETA from the SFT rate, but what it waits for.
  const before = estimateEta(sft, 10, 15, 20, stages)!;
  assert.equal(before.etaSeconds, null);
  assert.equal(before.waitingFor, 'rl');
  // A second RL stage ahead is timed at the first RL stage's rate; during SFT, before any RL step, the ETA waits.
  const two = [...stages, { stage: 2, name: 'grpo-2', type: 'rl', startStep: 16, endStep: 17 }];
  const mid = estimateEta([...sft, ...rl], 12, 17, 20, two)!;
  close(mid.etaSeconds!, 5 * 60);
  assert.equal(estimateEta(sft.slice(0, 5), 5, 15, 20, stages)!.waitingFor, 'rl');
});
