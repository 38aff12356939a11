import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  advantages,
  isPositive,
  selectGroup,
  selectStep,
  splitQuota,
  DEFAULT_ROC_OPTIONS,
  type RocSample,
} from '../../workers/rl/grpo-roc.ts';
import { penalties, trajectoryFacts, trajectoryPenalties } from '../../workers/rl/penalties.ts';
import { inclusionProbabilities, uniformSample, weightedSample } from '../../workers/rl/sampling.ts';
import { mulberry32 } from '../../workers/engines/sampling.ts';
import {
  newTrajectory,
  appendAssistantTurn,
  appendToolResult,
  parseErrorRecord,
} from '../../workers/rollout/trajectory.ts';
import type { ToolCallRecord, Trajectory, ParseResult } from '../../contracts/trajectory.ts';
import { toolResponseTurn } from '../../workers/rollout/template.ts';

const TOOL = 'execute_python_code_with_standard_io';
const CALL: ParseResult = { kind: 'call', name: TOOL, arguments: { code: '1', input: '' }, raw: '' };
const PERR_MSG = 'Failed to decode tool call: x';
const PERR: ParseResult = { kind: 'parse_error', message: PERR_MSG, raw: '<tool_call>x</tool_call>' };
const near = (a: number, b: number, tol = 1e-6) => assert.ok(Math.abs(a - b) <= tol, `${a} ≉ ${b}`);

function rec(status: ToolCallRecord['status']): ToolCallRecord {
  return {
    name: TOOL,
    arguments: { code: '1', input: '' },
    status,
    text: 'x',
    appendedText: toolResponseTurn('x'),
    tokens: 3,
    appended: true,
    queuedAt: 0,
    startedAt: 0,
    finishedAt: 0,
    durationMs: 1,
    queueMs: 0,
  };
}

/** A trajectory whose turns make calls with these statuses, then a final turn without a call. */
function traj(statuses: ToolCallRecord['status'][], finalText: string, earlierText = 'step'): Trajectory {
  let t = newTrajectory('P', 1);
  for (const st of statuses) {
    const parse = st === 'parse_error' ? PERR : CALL;
    t = appendAssistantTurn(t, {
      text: earlierText,
      tokens: 2,
      engineFinish: 'stop',
      genStartedAt: 0,
      genFinishedAt: 0,
      parse,
    });
    t = appendToolResult(
      t,
      st === 'parse_error' ? parseErrorRecord(PERR_MSG, toolResponseTurn(PERR_MSG), 3, 0) : rec(st),
    );
  }
  return appendAssistantTurn(t, {
    text: finalText,
    tokens: 2,
    engineFinish: 'stop',
    genStartedAt: 0,
    genFinishedAt: 0,
    parse: { kind: 'none' },
  });
}
const ANSWER = 'done </reason><answer>\\boxed{2}</answer>';

const pos = (pErr = 0, pFormat = 0): RocSample => ({ reward: 1, pErr, pFormat });
const neg = (pErr = 0, pFormat = 0): RocSample => ({ reward: 0, pErr, pFormat });
const rep = <T>(n: number, f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));

test('penalties: p_err (no tool call → 0.5) and p_format (paper)', () => {
  assert.deepEqual(penalties({ toolCalls: 0, toolErrors: 0, answerBlocks: 1, turns: 1 }), {
    pErr: 0.5,
    pFormat: 0,
    pTotal: 0.5,
  });
  assert.deepEqual(penalties({ toolCalls: 4, toolErrors: 1, answerBlocks: 1, turns: 5 }), {
    pErr: 0.25,
    pFormat: 0,
    pTotal: 0.25,
  });
  assert.deepEqual(penalties({ toolCalls: 2, toolErrors: 2, answerBlocks: 0, turns: 3 }), {
    pErr: 1,
    pFormat: 1,
    pTotal: 2,
  });
  // two answers in four turns: (2 − 1) / 4; three answers in two turns: capped at 1
  assert.deepEqual(penalties({ toolCalls: 3, toolErrors: 0, answerBlocks: 2, turns: 4 }), {
    pErr: 0,
    pFormat: 0.25,
    pTotal: 0.25,
  });
  assert.equal(penalties({ toolCalls: 1, toolErrors: 0, answerBlocks: 3, turns: 2 }).pFormat, 1);
  assert.throws(() => penalties({ toolCalls: 1, toolErrors: 2, answerBlocks: 1, turns: 1 }), /errors > 1 calls/);
  assert.throws(() => penalties({ toolCalls: -1, toolErrors: 0, answerBlocks: 1, turns: 1 }), /non-negative integer/);
  assert.throws(() => penalties({ toolCalls: 1.5, toolErrors: 0, answerBlocks: 1, turns: 1 }), /non-negative integer/);
});

test('penalties from a trajectory: timeouts, parse errors and every non-ok status are tool errors', () => {
  const t = traj(['ok', 'timeout', 'parse_error', 'memory'], ANSWER);
  assert.deepEqual(trajectoryFacts(t), { toolCalls: 4, toolErrors: 3, answerBlocks: 1, turns: 5 });
  assert.deepEqual(trajectoryPenalties(t), { pErr: 0.75, pFormat: 0, pTotal: 0.75 });
  for (const st of ['error', 'timeout', 'memory', 'output_limit', 'internal', 'parse_error'] as const) {
    assert.equal(trajectoryPenalties(traj(['ok', st], ANSWER)).pErr, 0.5, st);
  }
  assert.equal(trajectoryPenalties(traj(['ok', 'ok'], ANSWER)).pErr, 0);
});

test('penalties from a trajectory: no tool calls, no answer, two answers', () => {
  assert.deepEqual(trajectoryPenalties(traj([], ANSWER)), { pErr: 0.5, pFormat: 0, pTotal: 0.5 });
  assert.deepEqual(trajectoryPenalties(traj(['ok'], 'gave up')), { pErr: 0, pFormat: 1, pTotal: 1 });
  // an answer in the calling turn and another in the final turn: (2 − 1) / 2 turns
  const two = traj(['ok'], ANSWER, 'guess <answer>\\boxed{1}</answer> <tool_call>…</tool_call>');
  assert.deepEqual(trajectoryFacts(two), { toolCalls: 1, toolErrors: 0, answerBlocks: 2, turns: 2 });
  assert.deepEqual(trajectoryPenalties(two), { pErr: 0, pFormat: 0.5, pTotal: 0.5 });
  // two answers in one turn, no call: p_total 0.5 + min(1, 1/1) = 1.5
  assert.deepEqual(trajectoryPenalties(traj([], ANSWER + ANSWER)), { pErr: 0.5, pFormat: 1, pTotal: 1.5 });
});

test('advantages: population std by default, sample std on request, no NaN on equal rewards', () => {
  assert.deepEqual(advantages([1, 1, 0, 0], 0), [1, 1, -1, -1]);
  // mean 0.25, population std √0.1875: (1 − 0.25)/0.4330 = √3, (0 − 0.25)/0.4330 = −1/√3
  const a = advantages([1, 0, 0, 0], 0);
  near(a[0], Math.sqrt(3));
  for (const x of a.slice(1)) near(x, -1 / Math.sqrt(3));
  // sample std √(0.75/3) = 0.5
  assert.deepEqual(advantages([1, 0, 0, 0], 0, 'sample'), [1.5, -0.5, -0.5, -0.5]);
  near(advantages([1, 0])[0], 0.5 / (0.5 + 1e-6), 1e-12);
  assert.deepEqual(advantages([1, 1], 0), [0, 0]);
  assert.deepEqual(advantages([1], 0, 'sample'), [0]);
  assert.deepEqual(advantages([]), []);
});

test('splitQuota: ⌊|neg|·G/n⌋ negatives, the rest positives, minima taken from the other sign', () => {
  const q = (p: number, n: number, g: number, m = 2) => {
    const r = splitQuota(p, n, g, m);
    return [r.positives, r.negatives];
  };
  assert.deepEqual(q(16, 16, 16), [8, 8]);
  assert.deepEqual(q(27, 5, 16), [14, 2]); // ⌊5/2⌋ = 2, ⌈27/2⌉ = 14
  assert.deepEqual(q(25, 7, 16), [13, 3]); // ⌊7/2⌋ = 3, ⌈25/2⌉ = 13
  assert.deepEqual(q(29, 3, 16), [14, 2]); // ⌊3/2⌋ = 1 raised to 2, taken from the positives
  assert.equal(splitQuota(29, 3, 16, 2).raisedNegatives, true);
  assert.deepEqual(q(31, 1, 16), [15, 1]); // only one negative available
  assert.deepEqual(q(2, 30, 16), [2, 14]); // ⌈2/2⌉ = 1 raised to 2
  assert.equal(splitQuota(2, 30, 16, 2).raisedPositives, true);
  assert.deepEqual(q(5, 4, 4, 0), [3, 1]); // n = 9, G = 4: ⌊16/9⌋ = 1
  assert.deepEqual(q(3, 2, 2), [2, 2]); // G below both minima: the minima win, total 4 > G
  assert.deepEqual(q(10, 0, 5), [5, 0]);
  assert.deepEqual(q(3, 3, 10), [3, 3]); // G clamped to n
  assert.deepEqual(q(0, 0, 4), [0, 0]);
});

test('all positives and all negatives: the group is dropped; every trajectory says why', () => {
  for (const [s, label] of [
    [rep(4, () => pos(0.5, 0)), 'all 1'],
    [rep(4, () => neg(0.25, 1)), 'all 0'],
  ] as const) {
    const r = selectGroup(s, {}, mulberry32(1));
    assert.equal(r.dropped, true);
    assert.equal(r.reason, `dropped: equal rewards (${label})`);
    assert.deepEqual(r.keptIndices, []);
    for (const x of r.samples) {
      assert.equal(x.selected, false);
      assert.equal(x.reason, 'dropped: equal rewards');
      assert.equal(x.advantage, null);
      assert.equal(x.pTotal, x.pErr + x.pFormat);
    }
  }
  // with dropping off, an all-negative group is kept (half of it) with zero advantages
  const r = selectGroup(
    rep(4, () => neg()),
    { dropEqualReward: false },
    mulberry32(1),
  );
  assert.equal(r.dropped, false);
  assert.equal(r.keptIndices.length, 2);
  assert.deepEqual(
    r.samples.filter((x) => x.selected).map((x) => x.advantage),
    [0, 0],
  );
  assert.equal(selectGroup([], {}, mulberry32(1)).reason, 'dropped: empty group');
});

test('odd counts: 27 positives and 5 negatives of 32 keep 14 + 2 = 16, advantages over the kept 16', () => {
  const s = [...rep(27, (i) => pos((i % 4) / 4, 0)), ...rep(5, () => neg(0.5, 1))];
  const r = selectGroup(s, {}, mulberry32(3));
  assert.equal(r.dropped, false);
  assert.equal(r.reason, 'kept: 14 of 27 positives, 2 of 5 negatives');
  assert.equal(r.keptIndices.length, 16);
  assert.equal(r.keptPositives, 14);
  assert.equal(r.keptNegatives, 2);
  // mean 14/16 = 0.875, population std √(0.875·0.125)
  const sd = Math.sqrt(0.875 * 0.125);
  for (const x of r.samples) {
    if (!x.selected) {
      assert.equal(x.advantage, null);
      assert.equal(x.reason, `not kept: ${x.sign} sampled out`);
    } else if (x.sign === 'positive') {
      near(x.advantage!, 0.125 / (sd + 1e-6));
      assert.match(x.reason, /^kept: positive \(weight 0\.\d\d\)$/);
    } else {
      near(x.advantage!, -0.875 / (sd + 1e-6));
      assert.equal(x.reason, 'kept: negative (uniform)');
    }
  }
  near(
    r.samples.filter((x) => x.selected).reduce((a, x) => a + x.advantage!, 0),
    0,
  );
  // 25 + 7: ⌊7/2⌋ = 3 negatives, 13 positives
  const r2 = selectGroup([...rep(25, () => pos()), ...rep(7, () => neg())], {}, mulberry32(3));
  assert.deepEqual([r2.keptPositives, r2.keptNegatives], [13, 3]);
});

test('fewer than the minimum: a lone negative is always kept; three negatives keep two', () => {
  const s = [...rep(31, (i) => pos(i % 2 ? 0.5 : 0, 0)), neg()];
  const r = selectGroup(s, {}, mulberry32(5));
  assert.deepEqual([r.keptPositives, r.keptNegatives], [15, 1]);
  const lone = r.samples[31];
  assert.equal(lone.selected, true);
  assert.equal(lone.reason, 'kept: below minimum');
  // mean 15/16, std √(15/16·1/16) = √15/16: advantages −√15 and 1/√15 (up to eps)
  near(lone.advantage!, -Math.sqrt(15), 1e-4);
  for (const x of r.samples.filter((y) => y.selected && y.sign === 'positive'))
    near(x.advantage!, 1 / Math.sqrt(15), 1e-4);

  const r3 = selectGroup([...rep(29, () => pos()), ...rep(3, () => neg())], {}, mulberry32(5));
  assert.deepEqual([r3.keptPositives, r3.keptNegatives], [14, 2]);
  const negs = r3.samples.filter((x) => x.sign === 'negative');
  assert.equal(negs.filter((x) => x.reason === 'kept: negative (uniform, raised to minimum)').length, 2);
  assert.equal(negs.filter((x) => x.reason === 'not kept: negative sampled out').length, 1);

  // two positives of 32: ⌈2/2⌉ = 1 raised to 2 → both kept, below minimum
  const r4 = selectGroup([pos(), pos(1, 1), ...rep(30, () => neg())], {}, mulberry32(5));
  assert.deepEqual([r4.keptPositives, r4.keptNegatives], [2, 14]);
  assert.deepEqual(
    r4.samples.slice(0, 2).map((x) => x.reason),
    ['kept: below minimum', 'kept: below minimum'],
  );
  // one positive: its share ⌈1/2⌉ = 1 already keeps it
  const r5 = selectGroup([pos(), ...rep(31, () => neg())], {}, mulberry32(5));
  assert.equal(r5.samples[0].reason, 'kept: positive (all kept)');
});

test('"lowest": the quota with the lowest p_total, ties by index; a no-tool answer (0.5) loses to clean calls', () => {
  // p_total: 0.5 (no tool call), 0, 1, 0.25, 0, 1.5; two negatives. n = 8, G = 5: negatives ⌊10/8⌋ = 1 → 2, positives 3.
  const s = [pos(0.5, 0), pos(0, 0), pos(0, 1), pos(0.25, 0), pos(0, 0), pos(0.5, 1), neg(), neg()];
  const r = selectGroup(s, { positiveSelection: 'lowest', keep: 5 }, mulberry32(9));
  assert.deepEqual(r.keptIndices, [1, 3, 4, 6, 7]);
  assert.equal(r.samples[1].reason, 'kept: positive (lowest p_total 0.00)');
  assert.equal(r.samples[3].reason, 'kept: positive (lowest p_total 0.25)');
  assert.equal(r.samples[0].reason, 'not kept: positive sampled out');
  assert.equal(r.samples[0].weight, null);
  // ties: equal p_total → lower index first
  const t = selectGroup(
    [pos(0.5), pos(0.5), pos(0.5), pos(0.5), neg(), neg(), neg(), neg()],
    { positiveSelection: 'lowest', minPerSign: 0 },
    mulberry32(9),
  );
  assert.deepEqual(
    t.keptIndices.filter((i) => i < 4),
    [0, 1],
  );
});

test('plain GRPO (roc: false) keeps every sample of a mixed group; equal groups are still dropped', () => {
  const r = selectGroup([pos(1, 1), neg(), neg(), neg()], { roc: false }, mulberry32(1));
  assert.deepEqual(r.keptIndices, [0, 1, 2, 3]);
  assert.ok(r.samples.every((x) => x.reason === 'kept: plain GRPO'));
  near(r.samples[0].advantage!, Math.sqrt(3) * (Math.sqrt(0.1875) / (Math.sqrt(0.1875) + 1e-6)), 1e-12);
  assert.equal(selectGroup([pos(), pos()], { roc: false }, mulberry32(1)).dropped, true);
});

test('weights: p_total 0 gives a finite weight; shares sum to 1; reward > 0 is positive', () => {
  const r = selectGroup(
    [pos(0, 0), pos(0.5, 0.5), pos(0, 0.01), ...rep(3, () => neg())],
    { minPerSign: 0 },
    mulberry32(2),
  );
  const w = r.samples.slice(0, 3).map((x) => x.weight!);
  assert.ok(w.every(Number.isFinite));
  near(
    w.reduce((a, b) => a + b, 0),
    1,
    1e-12,
  );
  near(w[1] / w[0], 1e-6 / (1 + 1e-6), 1e-12);
  assert.ok(r.samples.slice(3).every((x) => x.weight === null));
  assert.deepEqual([0, 1, 0.5, -1].map(isPositive), [false, true, true, false]);
});

test('sampling helpers: exact inclusion probabilities by hand, guards', () => {
  // weights 2,1,1, pick 2: P(0) = 1/2 + 1/4·2/3 + 1/4·2/3 = 5/6; P(1) = P(2) = 1/4 + 1/2·1/2 + 1/4·1/3 = 7/12
  const p = inclusionProbabilities([2, 1, 1], 2);
  near(p[0], 5 / 6, 1e-12);
  near(p[1], 7 / 12, 1e-12);
  near(p[2], 7 / 12, 1e-12);
  assert.deepEqual(inclusionProbabilities([2, 1, 1], 1), [0.5, 0.25, 0.25]);
  assert.deepEqual([...weightedSample([1, 2, 3], 3, mulberry32(4))].sort(), [0, 1, 2]);
  assert.deepEqual([...uniformSample(5, 5, mulberry32(4))].sort(), [0, 1, 2, 3, 4]);
  assert.deepEqual(uniformSample(5, 0, mulberry32(4)), []);
  assert.throws(() => uniformSample(2, 3, mulberry32(4)), /cannot pick 3 of 2/);
  assert.throws(() => weightedSample([1, 0], 1, mulberry32(4)), /bad weight 0/);
  // u at the top of [0, 1): the last index, never out of range
  assert.deepEqual(
    weightedSample([1, 1], 1, () => 0.9999999999999999),
    [1],
  );
  assert.deepEqual(
    weightedSample([1, 1], 1, () => 0),
    [0],
  );
});

test('seeded sampling distribution: inclusion frequencies match successive sampling; same seed, same selection', () => {
  const pTotals = [0.1, 0.25, 0.5, 1.0, 1.5];
  const s = [...pTotals.map((p) => pos(p, 0)), ...rep(5, () => neg(0.5, 1))];
  // n = 10, G = 5: negatives ⌊25/10⌋ = 2 (uniform, 2/5 each), positives 3 weighted by 1/(p + 1e-6)
  const exact = inclusionProbabilities(
    pTotals.map((p) => 1 / (p + DEFAULT_ROC_OPTIONS.weightEps)),
    3,
  );
  const rng = mulberry32(12345);
  const trials = 20000;
  const kept = rep(10, () => 0);
  for (let t = 0; t < trials; t++) for (const i of selectGroup(s, {}, rng).keptIndices) kept[i]++;
  const freq = kept.map((k) => k / trials);
  for (let i = 0; i < 5; i++) near(freq[i], exact[i], 0.015);
  for (let i = 0; i < 4; i++)
    assert.ok(freq[i] > freq[i + 1] + 0.05, `p_total ${pTotals[i]} kept more often than ${pTotals[i + 1]}`);
  for (let i = 5; i < 10; i++) near(freq[i], 0.4, 0.015);
  // the cleanest is kept far more often than the dirtiest
  assert.ok(freq[0] > 0.95 && freq[4] < 0.35, JSON.stringify(freq));
  // first-draw share of p_total 0.1: 10 / (10 + 4 + 2 + 1 + 2/3) ≈ 0.57
  const one = selectGroup(s, {}, mulberry32(7));
  near(one.samples[0].weight!, 10 / (10 + 4 + 2 + 1 + 2 / 3), 1e-5);
  if (one.samples[0].selected) assert.equal(one.samples[0].reason, 'kept: positive (weight 0.57)');
  // determinism
  assert.deepEqual(selectGroup(s, {}, mulberry32(7)), one);
  const seen = new Set(rep(8, (k) => selectGroup(s, {}, mulberry32(100 + k)).keptIndices.join(',')));
  assert.ok(seen.size > 1, 'different seeds give different selections');
});

test('selectStep: one stream over the groups, with step counts', () => {
  const groups = [
    rep(4, () => pos()), // dropped, all positive
    rep(4, () => neg()), // dropped, all negative
    [pos(0, 0), pos(1, 0), pos(0.5, 0), neg(), neg(), neg(), neg(), neg()], // 3 pos, 5 neg → G 4: 2 neg, 2 pos
  ];
  const { groups: res, summary } = selectStep(groups, { positiveSelection: 'lowest' }, mulberry32(11));
  assert.equal(res.length, 3);
  assert.deepEqual(
    res[2].keptIndices.filter((i) => i < 3),
    [0, 2],
  );
  assert.deepEqual(summary, {
    groups: 3,
    droppedEqualReward: 2,
    droppedAllPositive: 1,
    droppedAllNegative: 1,
    keptGroups: 1,
    samples: 16,
    keptSamples: 4,
    positives: 7,
    negatives: 9,
    keptPositives: 2,
    keptNegatives: 2,
    meanPErrPositives: 1.5 / 7,
    meanPErrKeptPositives: 0.25,
    meanPTotalPositives: 1.5 / 7,
    meanPTotalKeptPositives: 0.25,
  });
  const empty = selectStep([], {}, mulberry32(1)).summary;
  assert.equal(empty.meanPErrPositives, null);
});

test('input and option validation', () => {
  const ok = [pos(), neg()];
  assert.throws(() => selectGroup([{ reward: NaN, pErr: 0, pFormat: 0 }, neg()], {}, mulberry32(1)), /reward NaN/);
  assert.throws(() => selectGroup([pos(-0.1), neg()], {}, mulberry32(1)), /pErr -0.1/);
  assert.throws(() => selectGroup(ok, { keep: -1 }, mulberry32(1)), /keep -1/);
  assert.throws(() => selectGroup(ok, { minPerSign: 1.5 }, mulberry32(1)), /minPerSign/);
  assert.throws(() => selectGroup(ok, { weightEps: 0 }, mulberry32(1)), /weightEps/);
});
