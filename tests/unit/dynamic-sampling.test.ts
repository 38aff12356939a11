// Groups that carry a signal (docs/method.md §5 "Dynamic sampling and the pass-rate curriculum"): the pure
// decisions (rounds, which groups train, the draw order, the curriculum's tiers), the recipe fields and their bounds,
// and the per-stage totals of `train --report`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32 } from '../../workers/engines/sampling.ts';
import {
  isMixed,
  nextRoundSize,
  PromptDraw,
  surplusGroup,
  trainedGroups,
  type RoundState,
} from '../../workers/rl/dynamic-sampling.ts';
import { curriculumOrder, outcomesById, passRate, passTier } from '../../workers/rl/curriculum.ts';
import { samplePrompts } from '../../workers/train/rl-stage.ts';
import { parseRecipe, validateRecipe } from '../../contracts/recipe.ts';
import { stageGroups, type RunReport } from '../../server/store/run-report.ts';
import { formatRunReport } from '../../cli/run-report.ts';
import { PANEL_KEYS } from '../../components/runs/dashboard.ts';

const state = (over: Partial<RoundState>): RoundState => ({
  target: 8,
  drawn: 0,
  mixed: 0,
  rounds: 0,
  maxRounds: 4,
  available: 1000,
  ...over,
});

test('isMixed: a group whose rewards are not all equal', () => {
  assert.equal(isMixed([0, 0, 0, 0]), false);
  assert.equal(isMixed([1, 1]), false);
  assert.equal(isMixed([0, 1, 0, 0]), true);
  assert.equal(isMixed([]), false);
});

test('nextRoundSize: the first round draws the target; later ones what is missing at the mixed share seen', () => {
  assert.equal(nextRoundSize(state({})), 8);
  // All-equal so far: a whole round again.
  assert.equal(nextRoundSize(state({ drawn: 8, mixed: 0, rounds: 1 })), 8);
  // 2 of 8 mixed: 6 missing at 1/4 → 24, never more than the target.
  assert.equal(nextRoundSize(state({ drawn: 8, mixed: 2, rounds: 1 })), 8);
  // 6 of 8 mixed: 2 missing at 3/4 → ⌈2.67⌉ = 3.
  assert.equal(nextRoundSize(state({ drawn: 8, mixed: 6, rounds: 1 })), 3);
  // 7 of 8: 1 missing at 7/8 → ⌈1.14⌉ = 2; never fewer than are missing.
  assert.equal(nextRoundSize(state({ drawn: 8, mixed: 7, rounds: 1 })), 2);
  assert.equal(nextRoundSize(state({ target: 4, drawn: 400, mixed: 1, rounds: 1 })), 4);
});

test('nextRoundSize: stops at the target, at the cap, and when the pool runs out; a round never passes the pool', () => {
  assert.equal(nextRoundSize(state({ drawn: 8, mixed: 8, rounds: 1 })), 0);
  assert.equal(nextRoundSize(state({ drawn: 12, mixed: 9, rounds: 2 })), 0);
  assert.equal(nextRoundSize(state({ drawn: 32, mixed: 0, rounds: 4 })), 0, 'the cap holds');
  assert.equal(nextRoundSize(state({ maxRounds: 1, drawn: 8, mixed: 0, rounds: 1 })), 0, 'off: one round');
  assert.equal(nextRoundSize(state({ drawn: 8, mixed: 0, rounds: 1, available: 0 })), 0);
  assert.equal(nextRoundSize(state({ drawn: 8, mixed: 0, rounds: 1, available: 3 })), 3);
  assert.equal(nextRoundSize(state({ available: 5 })), 5, 'a pool smaller than the step');
});

test('nextRoundSize over a whole step: at most maxRounds × target groups drawn whatever the rewards', () => {
  for (const share of [0, 0.1, 0.5, 1]) {
    const rng = mulberry32(7);
    let s = state({ target: 8, maxRounds: 5 });
    for (let n = nextRoundSize(s); n > 0; n = nextRoundSize(s)) {
      let mixed = 0;
      for (let i = 0; i < n; i++) if (rng() < share) mixed++;
      s = { ...s, drawn: s.drawn + n, mixed: s.mixed + mixed, rounds: s.rounds + 1, available: s.available - n };
    }
    assert.ok(s.rounds <= 5 && s.drawn <= 40, `share ${share}: ${s.rounds} rounds, ${s.drawn} drawn`);
    assert.ok(s.mixed >= 8 || s.rounds === 5, `share ${share}: stops only at the target or the cap`);
  }
});

test('trainedGroups: the first target mixed groups in draw order train; equal ones go to RoC (dropped there)', () => {
  const mixed = [false, true, true, false, true, true];
  assert.deepEqual(trainedGroups(mixed, 2), [true, true, true, true, false, false]);
  assert.deepEqual(
    trainedGroups(mixed, 10),
    mixed.map(() => true),
  );
  assert.deepEqual(
    trainedGroups(mixed, null),
    mixed.map(() => true),
    'off: every group',
  );
});

test('surplusGroup: stored with nothing kept and the reason on every sample', () => {
  const g = surplusGroup([
    { reward: 1, pErr: 0, pFormat: 0 },
    { reward: 0, pErr: 0.5, pFormat: 0 },
  ]);
  assert.equal(g.dropped, true);
  assert.deepEqual(g.keptIndices, []);
  assert.deepEqual([g.positives, g.negatives], [1, 1]);
  assert.ok(g.samples.every((s) => !s.selected && s.advantage === null && /surplus/.test(s.reason)));
  assert.equal(g.samples[1]!.pTotal, 0.5);
});

test('PromptDraw: its first round is samplePrompts exactly; later rounds continue without repeats', () => {
  const pool = Array.from({ length: 50 }, (_, i) => i);
  for (const n of [1, 8, 50, 80]) {
    const d = new PromptDraw(pool);
    assert.deepEqual(d.take(n, mulberry32(5)), samplePrompts(pool, n, mulberry32(5)), `n = ${n}`);
  }
  const d = new PromptDraw(pool);
  const step = mulberry32(9);
  const more = mulberry32(10);
  const all = [...d.take(8, step), ...d.take(8, more), ...d.take(40, more)];
  assert.equal(all.length, 50);
  assert.equal(new Set(all).size, 50);
  assert.equal(d.available, 0);
  assert.deepEqual(d.take(3, more), []);
});

test('passTier: sometimes needs no minimum; always / never need minSamples outcomes', () => {
  assert.equal(passTier({ n: 2, correct: 1 }, 4), 'sometimes');
  assert.equal(passTier(undefined, 4), 'unknown');
  assert.equal(passTier({ n: 3, correct: 0 }, 4), 'unknown');
  assert.equal(passTier({ n: 4, correct: 0 }, 4), 'never');
  assert.equal(passTier({ n: 8, correct: 8 }, 4), 'always');
  assert.equal(passRate({ n: 8, correct: 2 }), 0.25);
  assert.equal(passRate(undefined), null);
});

test('curriculumOrder: sometimes first, then untried, always/never last; seeded; a draw skips the last', () => {
  const pool = Array.from({ length: 12 }, (_, i) => ({ id: `p${i}` }));
  const outcomes = outcomesById([
    { problemId: 'p0', n: 8, correct: 8 }, // always
    { problemId: 'p1', n: 8, correct: 0 }, // never
    { problemId: 'p2', n: 8, correct: 3 }, // sometimes
    { problemId: 'p3', n: 2, correct: 1 }, // sometimes
    { problemId: 'p4', n: 2, correct: 0 }, // unknown (too few)
    { problemId: 'elsewhere', n: 8, correct: 4 }, // not in the pool
  ]);
  const c = curriculumOrder(pool, outcomes, 4, mulberry32(1));
  assert.deepEqual(c.counts, { sometimes: 2, unknown: 8, always: 1, never: 1 });
  assert.equal(c.skipFrom, 10);
  assert.deepEqual(new Set(c.order.slice(0, 2).map((p) => p.id)), new Set(['p2', 'p3']));
  assert.deepEqual(new Set(c.order.slice(10).map((p) => p.id)), new Set(['p0', 'p1']));
  assert.equal(new Set(c.order).size, 12);
  assert.deepEqual(curriculumOrder(pool, outcomes, 4, mulberry32(1)).order, c.order, 'seeded');
  assert.notDeepEqual(curriculumOrder(pool, outcomes, 4, mulberry32(2)).order, c.order);

  const d = PromptDraw.inOrder(c.order, c.skipFrom);
  const rng = mulberry32(3);
  assert.deepEqual(d.take(4, rng), c.order.slice(0, 4));
  assert.equal(d.skipped, 2);
  d.take(6, rng);
  assert.equal(d.skipped, 2, 'the untried ones exhaust first');
  assert.deepEqual(d.take(1, rng), [c.order[10]]);
  assert.equal(d.skipped, 1, 'drawn once nothing else is left: no longer skipped');
});

test('recipe: dynamicSampling and curriculum default off; errors name their fields; the bound counts the rounds', () => {
  const rl = (over: Record<string, unknown>) => ({
    name: 'r',
    stages: [{ type: 'rl', name: 'rl', data: { kind: 'generated', n: 64 }, ...over }],
  });
  const s = parseRecipe(rl({})).stages[0]!;
  assert.ok(s.type === 'rl');
  assert.deepEqual(s.dynamicSampling, { enabled: false, maxGenBatches: 4 });
  assert.deepEqual(s.curriculum, { enabled: false, minSamples: 4, windowSteps: 20 });
  const errors = (over: Record<string, unknown>) => {
    const v = validateRecipe(rl(over));
    return v.ok ? [] : v.errors.map((e) => `${e.path}: ${e.message}`);
  };
  assert.match(
    errors({ dynamicSampling: { enabled: true, maxGenBatches: 0 } })[0]!,
    /^stages\.0\.dynamicSampling\.maxGenBatches: /,
  );
  assert.match(errors({ curriculum: { enabled: true, windowSteps: 0 } })[0]!, /^stages\.0\.curriculum\.windowSteps: /);
  assert.match(
    errors({ dynamicSampling: { enabled: true }, roc: { dropEqualReward: false } })[0]!,
    /^stages\.0\.dynamicSampling\.enabled: .*roc\.dropEqualReward/,
  );
  // 512 × 8 = 4,096 fits the embedded model; × 2 rounds does not, and the error names maxGenBatches.
  assert.deepEqual(errors({ promptsPerStep: 512, rolloutsPerPrompt: 8 }), []);
  assert.deepEqual(errors({ promptsPerStep: 512, rolloutsPerPrompt: 8, dynamicSampling: { maxGenBatches: 2 } }), []);
  const e = errors({ promptsPerStep: 512, rolloutsPerPrompt: 8, dynamicSampling: { enabled: true, maxGenBatches: 2 } });
  assert.equal(e.length, 1, e.join('\n'));
  assert.match(e[0]!, /^stages\.0\.dynamicSampling\.maxGenBatches: .*× dynamicSampling\.maxGenBatches 2 = 8,192/);
});

test('stageGroups and train --report: each RL stage sums its steps; the run page draws the same keys', () => {
  const pts = (xs: [number, number][]) => xs.map(([step, value]) => ({ step, value }));
  const series = {
    'sampling/groups_drawn': pts([
      [31, 6],
      [32, 2],
      [41, 4],
    ]),
    'sampling/groups_mixed': pts([
      [31, 1],
      [32, 2],
      [41, 4],
    ]),
    'roc/groups_kept': pts([
      [31, 1],
      [32, 2],
      [41, 2],
    ]),
    'curriculum/skipped': pts([
      [32, 3],
      [41, 1],
    ]),
    'sampling/short': pts([
      [31, 1],
      [32, 0],
    ]),
    'time/rollout': pts([
      [31, 10],
      [32, 30],
      [41, 5],
    ]),
    'engine/mean_batch': pts([
      [31, 12],
      [32, 20],
    ]),
    'engine/prefill_fraction': pts([
      [31, 0.1],
      [32, 0.2],
    ]),
  };
  const generated = pts([
    [30, 999],
    [31, 1000],
    [32, 3000],
  ]);
  const stages = [
    { type: 'sft', startStep: 0 },
    { type: 'rl', startStep: 30 },
    { type: 'rl', startStep: 40 },
    { type: 'rl', startStep: 50 },
  ];
  const g = stageGroups(stages, series, generated);
  assert.equal(g[0], undefined);
  // Step 30 is the SFT stage's last: its tokens are not the RL stage's.
  assert.deepEqual(g[1], {
    steps: 2,
    drawn: 8,
    mixed: 3,
    kept: 3,
    skipped: 3,
    short: 1,
    rolloutTokensPerS: 100,
    meanBatch: 16,
    prefillFraction: (0.1 + 0.2) / 2,
  });
  assert.deepEqual(g[2], {
    steps: 1,
    drawn: 4,
    mixed: 4,
    kept: 2,
    skipped: 1,
    short: 0,
    rolloutTokensPerS: null,
    meanBatch: null,
    prefillFraction: null,
  });
  assert.equal(g[3], undefined, 'no points yet');

  const report: RunReport = {
    runId: 'run_1',
    name: 'r',
    status: 'succeeded',
    seed: 1,
    codeVersion: 'abc',
    wallS: 10,
    setupS: 1,
    stages: [
      { stage: 0, name: 'sft', type: 'sft', startStep: 0, endStep: 30, wallS: 5, starts: 1, evals: [] },
      { stage: 1, name: 'rl-1', type: 'rl', startStep: 30, endStep: 40, wallS: 5, starts: 1, evals: [], groups: g[1] },
    ],
    paired: [],
    firstEvalStep: null,
    lastEvalStep: null,
  };
  const text = formatRunReport(report);
  assert.match(
    text,
    /\| stage \| RL steps \| groups drawn \| with mixed rewards \| kept after RoC \| skipped by the curriculum \|/,
  );
  assert.match(text, /\| rl-1 \| 2 \| 8 \| 3 \(37\.5%\) \| 3 \| 3 \| 1 \| 100\.0 \| 16\.0 \| 15\.0% \|/);
  for (const k of ['sampling/groups_drawn', 'sampling/groups_mixed', 'roc/groups_kept', 'curriculum/skipped'])
    assert.ok(PANEL_KEYS.has(k), k);
});
