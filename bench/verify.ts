/**
 * bench:verify — parity of the reward verifier with Math-Verify. Runs ≥ 5,000 labelled
 * pairs (bench/verify-pairs.ts: the embedded task's answers, the answer shapes of real datasets, the project's
 * corpus) through the whole cascade (fast path, then Math-Verify in the sandbox for what it cannot settle) and
 * through Math-Verify alone, side by side with the same sandbox pool and concurrency. Prints agreement, the
 * disagreements by answer type, each side's accuracy against the labels, and pairs/s of each; writes every
 * disagreement, with which side the label says is right and why, to docs/verifier-parity.md.
 *
 *   npx tsx bench/verify.ts [--task N] [--per-shape N] [--seed S] [--concurrency C] [--out FILE] [--dump JSONL]
 * (--dump: every pair with both verdicts, one JSON line each)
 */
import fs from 'node:fs';
import path from 'node:path';
import { benchPairs, UPSTREAM_TYPE, type Pair } from './verify-pairs.ts';
import { benchFlags } from './flags.ts';
import { MathVerify, MATH_VERIFY_POOL } from '../workers/reward/math-verify.ts';
import { SandboxPool } from '../workers/sandbox/pool.ts';
import { Verifier } from '../workers/reward/verifier.ts';
import type { Verdict } from '../contracts/trajectory.ts';

const flags = benchFlags(
  'bench:verify',
  'npx tsx bench/verify.ts [--task N] [--per-shape N] [--seed S] [--concurrency C] [--out FILE] [--dump JSONL]',
  { task: 'number', 'per-shape': 'number', seed: 'number', concurrency: 'number', out: 'string', dump: 'string' },
);
const ROOT = path.resolve(import.meta.dirname, '..');
const TASK = (flags.task as number | undefined) ?? 3000;
const PER_SHAPE = (flags['per-shape'] as number | undefined) ?? 100;
const SEED = (flags.seed as number | undefined) ?? 15;
const CONCURRENCY = (flags.concurrency as number | undefined) ?? 4;
const OUT = (flags.out as string | undefined) ?? path.join(ROOT, 'docs/verifier-parity.md');

/** Why Math-Verify alone is wrong on a pair, by the prediction's form first (written from the disagreements). */
const WHY_BY_FORM: [RegExp, string][] = [
  [
    /^-?\d{1,3}((\\,| )\d{3})+$/,
    'Math-Verify does not read a space or thin space (`\\,`) between digit groups as a thousands separator: it keeps a product or the last group.',
  ],
  [/^\d+(\.\d+)?e\d+$/, "Math-Verify reads `e` in `1e6` as Euler's number, not an exponent."],
  [/∞/, 'Math-Verify does not parse the Unicode ∞.'],
  [/\\\$|dollars/, 'Math-Verify cannot parse a currency sign or a unit word after the number.'],
  [/^[A-E]\)$/, 'Math-Verify reads `C)` as a symbol with a stray bracket, not the choice C.'],
  [/<think>/, 'A response without <answer>: in the default mode it has no answer; Math-Verify takes any box.'],
  [
    /\\ln x\+\\ln y/,
    'Math-Verify keeps ln(xy) and ln x + ln y apart (it does not assume x, y > 0); the labels take the identity as datasets mean it.',
  ],
  [/\\sqrt\{-1\}/, 'Math-Verify treats sqrt(-1) as unevaluated over the reals.'],
  [/^-?\d+ \d+\/\d+$/, 'Math-Verify does not read a spaced mixed number `4 1/2` as 4 + 1/2.'],
  [
    /^\\?%|\d\\?%$/,
    "Math-Verify reads 12.5% as 0.125 and the bare 12.5 as 12.5; the gold's unit is implied in the answer.",
  ],
];
const WHY: Record<string, string> = {
  'mixed numbers': 'Math-Verify does not read a spaced mixed number `4 1/2` as 4 + 1/2.',
  'intervals and inequalities': 'Math-Verify does not equate an inequality in x with the interval it describes.',
  'base subscripts':
    'Math-Verify reads `1010_2` as the decimal number 1010 with a subscript dropped, and a numeral without its base as a different number.',
  'trailing punctuation': 'Math-Verify leaves a trailing full stop in the formula and cannot parse it.',
  approximations: 'Math-Verify cannot parse `\\approx` written against the number (`\\approx60.11`).',
  corpus: 'Math-Verify alone differs from the label its source gives (cited in tests/fixtures/verifier-corpus.jsonl).',
  'text answers': 'Math-Verify parses a word as a product of one-letter symbols, so case and articles change it.',
  degrees: 'Math-Verify does not read the word "degrees" as the degree sign.',
  percents: 'Math-Verify does not read the word "percent" as the percent sign.',
  'choice letters': 'Math-Verify reads a choice letter as a symbol; `\\textbf{(B)}` or `B)` does not parse to it.',
  'lists joined with words': 'Math-Verify keeps only one of the candidates joined with a word.',
  'labelled answers': 'Math-Verify compares the whole equation `|AB|=5` or `\\text{Area}=12` and not its value.',
  [UPSTREAM_TYPE]:
    "Math-Verify 0.9.0 alone differs from what its own test suite asserts (the row's source in tests/fixtures/verifier-corpus-math-verify.jsonl).",
};

interface Row {
  pair: Pair;
  cascade: Verdict;
  mv: { equal: boolean | null; reason: string };
}

async function mapLimit<T, R>(xs: T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(xs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < xs.length) {
        const i = next++;
        out[i] = await fn(xs[i]);
      }
    }),
  );
  return out;
}

const pairs = benchPairs({
  task: TASK,
  perShape: PER_SHAPE,
  seed: SEED,
  corpus: path.join(ROOT, 'tests/fixtures/verifier-corpus.jsonl'),
  upstream: path.join(ROOT, 'tests/fixtures/verifier-corpus-math-verify.jsonl'),
});
const upstreamCount = pairs.filter((p) => p.type === UPSTREAM_TYPE).length;
console.log(
  `bench:verify — ${pairs.length} pairs (${pairs.filter((p) => p.source === 'task').length} embedded task, ${pairs.filter((p) => p.source === 'shapes').length} answer shapes, ${pairs.filter((p) => p.source === 'corpus').length - upstreamCount} corpus, ${upstreamCount} from Math-Verify's tests), concurrency ${CONCURRENCY}`,
);
const mv = MathVerify.owning(await SandboxPool.start({ ...MATH_VERIFY_POOL, size: 2 }));
const verifier = new Verifier({ workers: 2, mathVerify: 'fallback', mathVerifier: mv });
try {
  // Warm both sides (worker threads, zygotes) before timing either.
  await mapLimit(pairs.slice(0, 20), CONCURRENCY, (p) => verifier.verify(p.gold, p.pred));
  await mapLimit(pairs.slice(0, 20), CONCURRENCY, (p) => mv.check(p.gold, p.pred, 5, true));

  const before = mv.stats.checks;
  let t0 = performance.now();
  const cascade = await mapLimit(pairs, CONCURRENCY, (p) => verifier.verify(p.gold, p.pred));
  const cascadeS = (performance.now() - t0) / 1000;
  const cascadeChecks = mv.stats.checks - before;
  t0 = performance.now();
  const alone = await mapLimit(pairs, CONCURRENCY, (p) => mv.check(p.gold, p.pred, 5, true));
  const aloneS = (performance.now() - t0) / 1000;

  const rows: Row[] = pairs.map((pair, i) => ({ pair, cascade: cascade[i], mv: alone[i] }));
  const mvSays = (r: Row) => r.mv.equal === true;
  const agree = rows.filter((r) => r.cascade.correct === mvSays(r));
  const disagree = rows.filter((r) => r.cascade.correct !== mvSays(r));
  const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(2)}%`;

  const typeOf = (r: Row) =>
    r.pair.type.startsWith('task') ? 'embedded task' : r.pair.type.startsWith('corpus') ? 'corpus' : r.pair.type;
  const types = [...new Set(rows.map(typeOf))];
  const table = types.map((t) => {
    const rs = rows.filter((r) => typeOf(r) === t);
    return {
      type: t,
      pairs: rs.length,
      disagree: rs.filter((r) => r.cascade.correct !== mvSays(r)).length,
      cascadeRight: pct(rs.filter((r) => r.cascade.correct === r.pair.truth).length, rs.length),
      mvRight: pct(rs.filter((r) => mvSays(r) === r.pair.truth).length, rs.length),
    };
  });
  const right = (side: 'cascade' | 'mv') =>
    rows.filter((r) => (side === 'cascade' ? r.cascade.correct : mvSays(r)) === r.pair.truth).length;
  const byMethod: Record<string, number> = {};
  for (const r of cascade) byMethod[r.method] = (byMethod[r.method] ?? 0) + 1;

  console.log('');
  console.log(
    `agreement with Math-Verify alone: ${agree.length}/${rows.length} = ${pct(agree.length, rows.length)} (target ≥ 99.5%)`,
  );
  const mvRight = rows.filter((r) => mvSays(r) === r.pair.truth);
  const keeps = mvRight.filter((r) => r.cascade.correct === mvSays(r)).length;
  console.log(
    `where Math-Verify alone is right by the label (${mvRight.length} pairs), the cascade agrees on ${pct(keeps, mvRight.length)}; disagreements where the cascade is wrong: ${disagree.filter((r) => r.cascade.correct !== r.pair.truth).length}`,
  );
  console.log(
    `against the labels: cascade ${pct(right('cascade'), rows.length)}, Math-Verify alone ${pct(right('mv'), rows.length)}`,
  );
  // A false positive pays a wrong answer: in RL, a reward the policy learns to farm (none allowed).
  const errors = (side: 'cascade' | 'mv') => {
    const says = (r: Row) => (side === 'cascade' ? r.cascade.correct : mvSays(r));
    return {
      fp: rows.filter((r) => says(r) && !r.pair.truth).length,
      fn: rows.filter((r) => !says(r) && r.pair.truth).length,
    };
  };
  const ce = errors('cascade'),
    me = errors('mv');
  console.log(
    `false positives (a wrong answer called correct): cascade ${ce.fp}, Math-Verify alone ${me.fp}; false negatives: cascade ${ce.fn}, Math-Verify alone ${me.fn}`,
  );
  console.log(
    `pairs/s: cascade ${(rows.length / cascadeS).toFixed(0)} (${cascadeS.toFixed(1)} s; Math-Verify asked for ${cascadeChecks} pairs), Math-Verify alone ${(rows.length / aloneS).toFixed(0)} (${aloneS.toFixed(1)} s) → ${(aloneS / cascadeS).toFixed(1)}×`,
  );
  console.log(
    `deciding step of the cascade: ${Object.entries(byMethod)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  console.log('');
  console.log('type                          pairs  disagree  cascade right  Math-Verify right');
  for (const t of table)
    console.log(
      `${t.type.padEnd(30)}${String(t.pairs).padStart(5)}${String(t.disagree).padStart(10)}${t.cascadeRight.padStart(15)}${t.mvRight.padStart(19)}`,
    );

  // A line break is shown as `\n`: `11\n5/6` is not the mixed number `11 5/6`.
  const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\r/g, '\\r').replace(/\n/g, '\\n');
  const lines = [
    '# Verifier parity with Math-Verify',
    '',
    `Written by \`npm run bench:verify\` (bench/verify.ts) on ${new Date().toISOString().slice(0, 10)}: ${rows.length} labelled pairs through the whole cascade and through Math-Verify 0.9.0 alone.`,
    `Agreement **${pct(agree.length, rows.length)}** (${disagree.length} disagreements); against the labels the cascade is right on ${pct(right('cascade'), rows.length)}, Math-Verify alone on ${pct(right('mv'), rows.length)}; where Math-Verify alone is right, the cascade agrees on ${pct(keeps, mvRight.length)}.`,
    `False positives (a wrong answer called correct): cascade **${ce.fp}**, Math-Verify alone ${me.fp}; false negatives: cascade ${ce.fn}, Math-Verify alone ${me.fn}.`,
    `pairs/s: cascade ${(rows.length / cascadeS).toFixed(0)}, Math-Verify alone ${(rows.length / aloneS).toFixed(0)} (concurrency ${CONCURRENCY}, two sandboxed Math-Verify interpreters, two compute-engine threads).`,
    '',
    '| type | pairs | disagreements | cascade right | Math-Verify right |',
    '|---|---:|---:|---:|---:|',
    ...table.map((t) => `| ${t.type} | ${t.pairs} | ${t.disagree} | ${t.cascadeRight} | ${t.mvRight} |`),
    '',
    '## Every disagreement',
    '',
    'The label (`truth`) is what a careful grader says; "right" is the side that agrees with it. Why: the known behaviour behind it.',
    '',
    '| type | gold | prediction | truth | cascade (step) | Math-Verify | right | why |',
    '|---|---|---|---|---|---|---|---|',
    ...disagree.map((r) => {
      const rightSide = r.cascade.correct === r.pair.truth ? 'cascade' : 'Math-Verify';
      const byForm = WHY_BY_FORM.find(([re]) => re.test(r.pair.pred) || re.test(r.pair.gold))?.[1];
      const why = rightSide === 'cascade' ? (byForm ?? WHY[typeOf(r)] ?? r.mv.reason) : `cascade: ${r.cascade.reason}`;
      return `| ${esc(r.pair.type)} | \`${esc(r.pair.gold)}\` | \`${esc(r.pair.pred)}\` | ${r.pair.truth} | ${r.cascade.correct} (${r.cascade.method}) | ${r.mv.equal} | ${rightSide} | ${esc(why.slice(0, 300))} |`;
    }),
    '',
    '## Where the cascade is wrong by the label',
    '',
    ...(() => {
      const wrong = rows.filter((r) => r.cascade.correct !== r.pair.truth);
      if (!wrong.length) return ['None.'];
      return [
        '| type | gold | prediction | truth | cascade (step) | Math-Verify | why the cascade said so |',
        '|---|---|---|---|---|---|---|',
        ...wrong.map(
          (r) =>
            `| ${esc(r.pair.type)} | \`${esc(r.pair.gold)}\` | \`${esc(r.pair.pred)}\` | ${r.pair.truth} | ${r.cascade.correct} (${r.cascade.method}) | ${r.mv.equal} | ${esc(r.cascade.reason.slice(0, 300))} |`,
        ),
      ];
    })(),
    '',
  ];
  if (flags.dump) fs.writeFileSync(flags.dump as string, rows.map((r) => JSON.stringify(r)).join('\n'));
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, lines.join('\n'));
  console.log(`\nevery disagreement: ${path.relative(ROOT, OUT)}`);
} finally {
  await verifier.close();
  await mv.close();
}
