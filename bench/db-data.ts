/**
 * bench:db's data: deterministic (seeded) trajectories with their tool calls and token records, and metric series,
 * shaped like a real run's, so every run of the benchmark ingests byte-identical content (ids aside).
 */
import type { ClipState, TokenRecord } from '../contracts/trajectory.ts';
import type { MetricPointInput } from '../server/store/metrics.ts';
import type { ToolCallInput, TrajectoryInput } from '../server/store/trajectories.ts';
import { mulberry32 } from '../workers/engines/sampling.ts';

/** Read-back shapes are fixed (they are what the UI asks for); ingest sizes shrink with --quick. */
export const STEP_SIZE = 2_000; // trajectories per training step (readStep reads one step)
export const SERIES_LEN = 10_000; // points per metric (readSeries reads one metric)
export const GROUP = 8; // rollouts per prompt (G)

/** A seeded PRNG (mulberry32) so every run ingests byte-identical content (ids aside). */
export function prng(seed: number) {
  const next = mulberry32(seed);
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    normal: () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()),
  };
}
export type Rng = ReturnType<typeof prng>;

const WORDS = (
  'we need to find the value of so let us compute first then check whether this holds for all integers ' +
  'consider the equation sum product modulo prime factor divisor remainder since therefore hence note that it follows ' +
  'substitute into expression simplify verify with code the result gives answer wait that seems off recheck case ' +
  'boundary condition when n equals zero negative positive count number of solutions pairs triangle area radius ' +
  'probability expected value sequence recurrence term limit converges polynomial root coefficient'
).split(' ');

export function sentence(r: Rng, min: number, max: number): string {
  const n = r.int(min, max);
  const w: string[] = [];
  for (let i = 0; i < n; i++) w.push(r.pick(WORDS));
  const s = w.join(' ');
  return s[0].toUpperCase() + s.slice(1) + (r.next() < 0.15 ? '?' : '.');
}
export function paragraph(r: Rng, bytes: number): string {
  const out: string[] = [];
  let len = 0;
  while (len < bytes) {
    const s = sentence(r, 6, 18);
    out.push(s);
    len += s.length + 1;
  }
  return out.join(' ');
}

const CODE_TEMPLATES = [
  (r: Rng) =>
    `from sympy import symbols, solve, Eq\nx = symbols('x')\nsol = solve(Eq(x**2 - ${r.int(2, 99)}*x + ${r.int(1, 500)}, 0), x)\nprint(sol)`,
  (r: Rng) =>
    `total = 0\nfor n in range(1, ${r.int(100, 10000)}):\n    if n % ${r.int(2, 13)} == 0 or n % ${r.int(2, 13)} == 0:\n        total += n\nprint(total)`,
  (r: Rng) =>
    `import math\nvals = [math.comb(${r.int(5, 40)}, k) for k in range(${r.int(3, 12)})]\nprint(sum(vals), vals[-1])`,
  (r: Rng) =>
    `from fractions import Fraction\np = Fraction(${r.int(1, 9)}, ${r.int(10, 60)})\nq = 1 - p\nprint(p * q ** ${r.int(2, 8)})`,
  (r: Rng) =>
    `import itertools\ncount = sum(1 for a, b in itertools.product(range(${r.int(5, 60)}), repeat=2) if (a * b) % ${r.int(3, 17)} == 1)\nprint(count)`,
  (r: Rng) =>
    `def f(n):\n    return n * (n + 1) // 2\nprint([f(k) for k in range(${r.int(1, 20)}, ${r.int(21, 40)})][:5])`,
];
const ERRORS = [
  { type: 'NameError', msg: (r: Rng) => `NameError: name 'y${r.int(0, 9)}' is not defined` },
  { type: 'ZeroDivisionError', msg: () => 'ZeroDivisionError: division by zero' },
  { type: 'TypeError', msg: () => "TypeError: unsupported operand type(s) for +: 'int' and 'str'" },
  { type: 'Timeout', msg: () => 'TimeoutError: execution exceeded 10 s' },
];

/**
 * A token record of `n` response tokens over 6 turns, tool responses masked, engine logprobs and entropies, and the
 * trainer's side when `trained`. A pool of these is shared by the generated trajectories (so the bench does not
 * hold 10,000 of them in memory); each insert still encodes its own.
 */
export function makeTokenRecord(r: Rng, n: number, trained: boolean): TokenRecord {
  const rec: TokenRecord = {
    ids: [],
    mask: [],
    turn: [],
    chars: [],
    rolloutLogprobs: [],
    entropy: [],
    trainerLogprobs: null,
    weights: null,
    clip: null,
    advantage: null,
  };
  const perTurn = Math.ceil(n / 6);
  for (let i = 0; i < n; i++) {
    const tool = i % perTurn > perTurn * 0.8 && Math.floor(i / perTurn) < 5;
    rec.ids.push(r.int(0, 151_000));
    rec.mask.push(tool ? 0 : 1);
    rec.turn.push(Math.floor(i / perTurn));
    rec.chars.push(r.int(1, 6));
    rec.rolloutLogprobs.push(tool ? NaN : Math.log(0.02 + 0.98 * r.next()));
    rec.entropy.push(tool ? NaN : 3 * r.next());
  }
  if (trained) {
    rec.trainerLogprobs = rec.rolloutLogprobs.map((x) => x + 0.01 * r.normal());
    rec.clip = rec.mask.map((m) => (m && r.next() < 0.05 ? r.int(1, 5) : 0) as ClipState);
    rec.weights = rec.clip.map((c, i) => (rec.mask[i] ? (c === 5 ? 0 : c === 4 ? 2 : 1) : NaN));
    rec.advantage = r.normal();
  }
  return rec;
}
const TOKEN_POOL = (() => {
  const r = prng(99);
  return Array.from({ length: 32 }, (_, i) => makeTokenRecord(r, r.int(900, 2200), i % 2 === 0));
})();

/** One realistic rollout: ~5 KB of turns (reasoning, code, tool-output JSON), 5 tool calls and a token record. */
export function makeTrajectory(r: Rng, runId: string, i: number, stepBase = 0): TrajectoryInput {
  const step = stepBase + Math.floor(i / STEP_SIZE);
  const inStep = i % STEP_SIZE;
  const groupId = `g${String(step).padStart(5, '0')}_${String(Math.floor(inStep / GROUP)).padStart(4, '0')}`;
  const t0 = 1_700_000_000_000 + i * 50;
  const turns: unknown[] = [{ role: 'user', text: paragraph(r, r.int(220, 420)) }];
  const toolCalls: ToolCallInput[] = [];
  let clock = t0;
  for (let turn = 0; turn < 5; turn++) {
    const code = r.pick(CODE_TEMPLATES)(r);
    const failed = r.next() < 0.15;
    const err = failed ? r.pick(ERRORS) : null;
    const stdout = failed
      ? ''
      : `${r.int(-1000, 100000)}${r.next() < 0.5 ? ` [${Array.from({ length: r.int(2, 8) }, () => r.int(0, 999)).join(', ')}]` : ''}\n`;
    const stderr = err
      ? `Traceback (most recent call last):\n  File "<cell>", line ${r.int(1, 6)}, in <module>\n${err.msg(r)}\n`
      : '';
    const queueMs = r.int(0, 40);
    const durationMs = r.int(8, 900);
    const queuedAt = clock;
    const startedAt = queuedAt + queueMs;
    const finishedAt = startedAt + durationMs;
    clock = finishedAt + r.int(200, 3000);
    const status = err ? (err.type === 'Timeout' ? 'timeout' : 'error') : 'ok';
    toolCalls.push({
      turn,
      code,
      stdout,
      stderr,
      status,
      exitCode: err ? 1 : 0,
      errorType: err?.type ?? null,
      queuedAt,
      startedAt,
      finishedAt,
      durationMs,
      queueMs,
    });
    turns.push({ role: 'assistant', text: `${paragraph(r, r.int(350, 650))}\n\n\`\`\`python\n${code}\n\`\`\`` });
    turns.push({ role: 'tool', text: JSON.stringify({ status, stdout, stderr, exitCode: err ? 1 : 0, durationMs }) });
  }
  const answer = String(r.int(0, 9999));
  turns.push({ role: 'assistant', text: `${paragraph(r, r.int(150, 350))} The answer is \\boxed{${answer}}.` });
  const correct = r.next() < 0.45;
  const toolErrors = toolCalls.filter((c) => c.status !== 'ok').length;
  const tokens = TOKEN_POOL[i % TOKEN_POOL.length]!;
  return {
    tokens,
    runId,
    step,
    stage: 0,
    split: 'train',
    problemId: `p_${r.int(0, 17_000)}`,
    groupId,
    sampleIndex: inStep % GROUP,
    reward: correct ? 1 : -1,
    correct,
    selected: r.next() < 0.5,
    selectReason: toolErrors === 0 ? 'clean' : 'sampled',
    pErr: toolErrors / 5,
    pFormat: 0,
    promptTokens: r.int(80, 200),
    responseTokens: tokens.ids.length,
    toolTokens: tokens.mask.filter((m) => m === 0).length,
    turns: turns.length,
    finishReason: 'stop',
    answer,
    content: { turns },
    toolCalls,
  };
}

const METRIC_KEYS = [
  'loss',
  'reward/mean',
  'reward/std',
  'kl',
  'entropy',
  'grad_norm',
  'lr',
  'tool/error_rate',
  'len/response',
  'time/step',
  'clip_frac',
  'adv/mean',
  'adv/std',
  'tool/calls',
  'len/prompt',
  'throughput',
  'val/pass@1',
  'val/len',
  'tool/timeout_rate',
  'time/rollout',
  'time/update',
  'tokens/s',
  'groups/filtered',
  'reward/format',
];

/** `count` points laid out step-major over count/SERIES_LEN keys, so each key ends up with a SERIES_LEN-long series. */
export function makeMetricPoints(r: Rng, runId: string, count: number): MetricPointInput[] {
  const keys = Array.from(
    { length: Math.max(1, Math.ceil(count / SERIES_LEN)) },
    (_, i) => METRIC_KEYS[i] ?? `custom/${i}`,
  );
  const out: MetricPointInput[] = [];
  for (let step = 0; out.length < count; step++) {
    for (const key of keys) {
      if (out.length >= count) break;
      out.push({
        runId,
        key,
        step,
        value: Math.exp(-step / 3000) + 0.05 * r.normal(),
        time: 1_700_000_000_000 + step * 1000,
      });
    }
  }
  return out;
}
