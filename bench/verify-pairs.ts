/**
 * The pairs bench:verify runs (pure, seeded): (gold, prediction, truth) from the embedded task's answers written the
 * ways a model writes them, from the answer shapes of real datasets, and from the project's
 * corpus (tests/fixtures/verifier-corpus.jsonl) and Math-Verify's own test cases (tests/fixtures/verifier-corpus-math-verify.jsonl).
 * `truth` is what a careful grader says (for Math-Verify's cases, what its tests assert); `type` groups the report.
 */
import fs from 'node:fs';
import { generate, randInt, pick, type Rng } from '../workers/tasks/arith.ts';
import { mulberry32 } from '../workers/engines/sampling.ts';

export interface Pair {
  gold: string;
  pred: string;
  truth: boolean;
  type: string;
  source: 'task' | 'shapes' | 'corpus';
}

const gcd = (a: number, b: number): number => (b === 0 ? Math.abs(a) : gcd(b, a % b));
const group = (n: bigint, sep: string) => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, sep);

/** An integer answer written as a model might: plain, with separators, a unit word, a label, a box, a decimal. */
function writeInteger(rng: Rng, a: bigint): string {
  const big = a >= 1000n || a <= -1000n;
  const forms = [
    () => a.toString(),
    () => `${a}.0`,
    () => `$${a}$`,
    () => `x = ${a}`,
    () => `<answer>\\boxed{${a}}</answer>`,
    () => `${a} \\text{ ways}`,
    ...(big ? [() => group(a, ','), () => group(a, '{,}'), () => group(a, '\\,'), () => group(a, ' ')] : []),
  ];
  return pick(rng, forms)();
}

/** A wrong integer a model might give: off by one, a digit slip, a factor of ten, the sign. */
function wrongInteger(rng: Rng, a: bigint): bigint {
  const s = a.toString().replace('-', '');
  const slips = [
    () => a + 1n,
    () => a - 1n,
    () => a * 10n,
    () => -a - 1n,
    () => {
      if (s.length < 2) return a + 2n;
      const i = randInt(rng, 0, s.length - 2);
      const t = s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2);
      const b = BigInt((a < 0n ? '-' : '') + t);
      return b === a ? a + 3n : b;
    },
  ];
  const b = pick(rng, slips)();
  return b === a ? a + 1n : b; // 0 × 10 is 0
}

function taskPairs(n: number, seed: number): Pair[] {
  const rng = mulberry32(seed);
  const problems = generate({ split: 'train', n: Math.ceil(n / 2), seed, unique: false });
  const out: Pair[] = [];
  for (const p of problems) {
    const a = BigInt(p.answer);
    out.push({ gold: p.answer, pred: writeInteger(rng, a), truth: true, type: `task: ${p.family}`, source: 'task' });
    out.push({
      gold: p.answer,
      pred: writeInteger(rng, wrongInteger(rng, a)),
      truth: false,
      type: `task: ${p.family}`,
      source: 'task',
    });
  }
  return out.slice(0, n);
}

type Shape = (rng: Rng) => [gold: string, right: string, wrong: string];

/** One generator per answer shape: a gold, a prediction a careful grader accepts, and one it rejects. */
export const SHAPES: Record<string, Shape> = {
  'fraction commands': (rng) => {
    const b = randInt(rng, 2, 19),
      a0 = randInt(rng, 1, 40),
      g = gcd(a0, b),
      a = a0 / g,
      d = b / g;
    const cmd = pick(rng, ['frac', 'dfrac', 'tfrac', 'cfrac']);
    return [
      `\\frac{${a}}{${d}}`,
      pick(rng, [`\\${cmd}{${a}}{${d}}`, `${a}/${d}`, `\\${cmd}{${2 * a}}{${2 * d}}`]),
      `\\${cmd}{${a + 1}}{${d}}`,
    ];
  },
  'labelled answers': (rng) => {
    const a = randInt(rng, 1, 50),
      b = randInt(rng, 1, 50);
    return pick(rng, [
      () => [`${a}`, `${pick(rng, ['x', 'n', 'k', 'y'])} = ${a}`, `x = ${a + 1}`],
      () => [`(${a},${b})`, `(p,q)=(${a},${b})`, `(p,q)=(${b + 1},${a})`],
      () => [`${a}x+${b}`, `f(x)=${a}x+${b}`, `f(x)=${a}x+${b + 1}`],
      () => [`${a * b}`, `\\text{Area}=${a * b}`, `\\text{Area}=${a * b + 1}`],
      () => [`${a}`, `|AB|=${a}`, `|AB|=${a + 2}`],
    ] as (() => [string, string, string])[])();
  },
  equations: (rng) => {
    const a = randInt(rng, 2, 9),
      b = randInt(rng, 1, 9),
      k = randInt(rng, 2, 5);
    return pick(rng, [
      () => [`y=${a}x+${b}`, `${a}x-y+${b}=0`, `${a}x-y-${b}=0`],
      () => [`y=${a}x+${b}`, `${k}y=${k * a}x+${k * b}`, `${k}y=${k * a}x+${k * b + 1}`],
      () => [`x^2+y^2=${a * a}`, `x^2+y^2-${a * a}=0`, `x^2+y^2=${a}`],
      () => [`${a}x+${b}y=${a + b}`, `${b}y=${a + b}-${a}x`, `${b}y=${a + b}+${a}x`],
    ] as (() => [string, string, string])[])();
  },
  'trailing punctuation': (rng) => {
    const a = randInt(rng, 1, 30),
      b = randInt(rng, a + 1, 60);
    const g = gcd(a, b),
      f = `\\frac{${a / g}}{${b / g}}`;
    return pick(rng, [
      () => [f, `${f}.`, `\\frac{${a / g + 1}}{${b / g}}.`],
      () => [`${a}`, `${a}.`, `${a + 1}.`],
      () => [`${a}`, `${a}!`.replace('!', ' .'), `${a + 1} .`],
    ] as (() => [string, string, string])[])();
  },
  'mixed numbers': (rng) => {
    const w = randInt(rng, 1, 9),
      d = randInt(rng, 2, 9),
      n = randInt(rng, 1, d - 1),
      g = gcd(n, d),
      nn = n / g,
      dd = d / g;
    return [
      `\\frac{${w * dd + nn}}{${dd}}`,
      pick(rng, [`${w} ${nn}/${dd}`, `${w}\\frac{${nn}}{${dd}}`, `${w}\\tfrac{${nn}}{${dd}}`]),
      `${w + 1} ${nn}/${dd}`,
    ];
  },
  matrices: (rng) => {
    const e = Array.from({ length: 4 }, () => randInt(rng, -9, 9));
    const m = (env: string, x: number[]) => `\\begin{${env}}${x[0]}&${x[1]}\\\\${x[2]}&${x[3]}\\end{${env}}`;
    const w = [...e];
    w[randInt(rng, 0, 3)] += 1;
    return [m('pmatrix', e), m(pick(rng, ['bmatrix', 'pmatrix']), e), m('bmatrix', w)];
  },
  'tuples and sets': (rng) => {
    const xs = Array.from({ length: 3 }, () => randInt(rng, 1, 30));
    const ys = [...new Set(xs)];
    const shuffled = [...ys].reverse();
    return pick(rng, [
      () => [
        `\\{${ys.join(',')}\\}`,
        `\\{${shuffled.join(', ')}\\}`,
        `\\{${[...ys.slice(1), ys[0] + 31].join(',')}\\}`,
      ],
      () => [`(${xs.join(',')})`, `(${xs.join(', ')})`, `(${xs[0]},${xs[1]},${xs[2] + 1})`],
      () => [ys.join(','), ys.join('; '), [...ys.slice(0, -1), ys[ys.length - 1] + 1].join('; ')],
    ] as (() => [string, string, string])[])();
  },
  'lists joined with words': (rng) => {
    const a = randInt(rng, -9, 9),
      b = a + randInt(rng, 1, 9),
      c = b + randInt(rng, 1, 9);
    return pick(rng, [
      () => [`${a},${b}`, `${a} \\text{ and } ${b}`, `${a} \\text{ and } ${b + 1}`],
      () => [`${a},${b}`, `x=${a} \\text{ or } x=${b}`, `x=${a} \\text{ or } x=${c}`],
      () => [`${a},${b},${c}`, `${a}, ${b} and ${c}`, `${a}, ${b} and ${c + 1}`],
      () => [`${a},${b}`, `${b} or ${a}`, `${a} or ${c}`],
    ] as (() => [string, string, string])[])();
  },
  'intervals and inequalities': (rng) => {
    const a = randInt(rng, -9, 5),
      b = a + randInt(rng, 1, 9);
    return pick(rng, [
      () => [`[${a},${b})`, `${a} \\le x < ${b}`, `${a} < x < ${b}`],
      () => [`(${a},\\infty)`, `x > ${a}`, `x \\ge ${a}`],
      () => [`(-\\infty,${b}]`, `x \\le ${b}`, `x < ${b}`],
      () => [`${a} \\le x \\le ${b}`, `[${a},${b}]`, `(${a},${b}]`],
    ] as (() => [string, string, string])[])();
  },
  degrees: (rng) => {
    const a = pick(rng, [15, 30, 45, 60, 75, 90, 120, 135, 150]);
    return [
      `${a}^\\circ`,
      pick(rng, [`${a}`, `${a}^{\\circ}`, `${a} \\text{ degrees}`, `${a}\\degree`]),
      `${a + 5}^\\circ`,
    ];
  },
  percents: (rng) => {
    const a = randInt(rng, 1, 99);
    return [`${a}\\%`, pick(rng, [`${a}`, `${a} \\%`, `${a} percent`, `${a}\\text{ percent}`]), `${a + 1}\\%`];
  },
  'units in text': (rng) => {
    const a = randInt(rng, 2, 500),
      u = pick(rng, ['cm', 'meters', 'dollars', 'inches', 'square units', 'km']);
    return [
      `${a}`,
      pick(rng, [`${a}\\text{ ${u}}`, `${a}\\mbox{ ${u}}`, `${a} \\text{${u}}^2`]),
      `${a + 1}\\text{ ${u}}`,
    ];
  },
  'base subscripts': (rng) => {
    const base = pick(rng, [2, 3, 5, 8]),
      v = randInt(rng, base + 1, 200),
      s = v.toString(base);
    return [`${s}_${base}`, pick(rng, [`${s}_{${base}}`, `${s}_${base}`, s]), `${(v + 1).toString(base)}_{${base}}`];
  },
  approximations: (rng) => {
    const x = (randInt(rng, 100, 9999) / 100).toFixed(2);
    return [x, pick(rng, [`\\approx ${x}`, `\\approx${x}`]), `\\approx ${(Number(x) + 0.1).toFixed(2)}`];
  },
  'text answers': (rng) => {
    const [w, other] = pick(rng, [
      ['east', 'west'],
      ['yes', 'no'],
      ['even', 'odd'],
      ['Tuesday', 'Monday'],
      ['rhombus', 'square'],
      ['Alice', 'Bob'],
    ]);
    const cap = (s: string) => s[0].toUpperCase() + s.slice(1);
    return [
      `\\text{${w}}`,
      pick(rng, [w.toLowerCase(), cap(w), `\\text{${cap(w)}}`, `\\text{the ${w}}`, `the ${w}`]),
      `\\text{${other}}`,
    ];
  },
  'choice letters': (rng) => {
    const l = pick(rng, ['A', 'B', 'C', 'D', 'E']),
      o = l === 'E' ? 'A' : String.fromCharCode(l.charCodeAt(0) + 1);
    return [`\\text{(${l})}`, pick(rng, [l, `(${l})`, `\\textbf{(${l})}`, `${l})`]), `(${o})`];
  },
  'big integers': (rng) => {
    const k = randInt(rng, 40, 70),
      d = pick(rng, [-1, 1]),
      v = 2n ** BigInt(k) + BigInt(d);
    return pick(rng, [
      () => [v.toString(), group(v, ','), (v + 1n).toString()],
      () => [`2^{${k}}${d > 0 ? '+' : '-'}1`, v.toString(), (v - BigInt(2 * d)).toString()],
      () => [v.toString(), group(v, '{,}'), group(v - 1n, '{,}')],
    ] as (() => [string, string, string])[])();
  },
  'radicals and pi': (rng) => {
    const a = randInt(rng, 2, 6),
      b0 = pick(rng, [2, 3, 5, 6, 7]),
      b = b0 === a ? 7 : b0; // a ≠ b: 3π/3 is not wrong
    return pick(rng, [
      () => [`${a}\\sqrt{${b}}`, `\\sqrt{${a * a * b}}`, `\\sqrt{${a * b}}`],
      () => [`\\frac{\\sqrt{${b}}}{${a}}`, `\\frac{1}{${a}}\\sqrt{${b}}`, `\\frac{\\sqrt{${b}}}{${a + 1}}`],
      () => [`${a}\\pi`, `\\pi \\cdot ${a}`, `${a + 1}\\pi`],
      () => [`\\frac{${a}\\pi}{${b}}`, `\\frac{${a}}{${b}}\\pi`, `\\frac{${b}\\pi}{${a}}`],
    ] as (() => [string, string, string])[])();
  },
  polynomials: (rng) => {
    const a = randInt(rng, 1, 9),
      b = randInt(rng, 1, 9);
    return [`x^2+${a + b}x+${a * b}`, `(x+${a})(x+${b})`, `(x+${a})(x+${b + 1})`];
  },
  decimals: (rng) => {
    const d = pick(rng, [3, 7, 9, 11]),
      n = randInt(rng, 1, d - 1);
    return [`\\frac{${n}}{${d}}`, (n / d).toFixed(10), (n / d).toFixed(3)];
  },
  // The shapes of real answers (GSM8K, MATH) and the wrong answers that only look like the gold.
  "MATH's ,\\! thousands": (rng) => {
    const a = BigInt(randInt(rng, 1000, 9_999_999));
    return pick(rng, [
      () => [group(a, ',\\!'), a.toString(), (a + 1n).toString()],
      () => [a.toString(), group(a, ',\\!'), group(a + 10n, ',\\!')],
    ] as (() => [string, string, string])[])();
  },
  'choices in a math font': (rng) => {
    const [c, other] = pick(rng, [
      ['A', 'B'],
      ['B', 'C'],
      ['C', 'D'],
      ['D', 'E'],
    ]);
    const font = pick(rng, ['\\mathrm', '\\mathbf', '\\textbf', '\\text']);
    return [`\\text{(${c})}`, `${font}{(${c})}`, `${font}{(${other})}`];
  },
  'alternatives joined by "or"': (rng) => {
    const a = randInt(rng, 1, 20),
      b = a + randInt(rng, 1, 9);
    return [
      `${a} \\text{ or } ${b}`,
      pick(rng, [`\\{${a}, ${b}\\}`, `${b}, ${a}`]),
      pick(rng, [`${a}`, `${a}, ${b + 1}`]),
    ];
  },
  'contains the gold': (rng) => {
    const a = randInt(rng, 2, 12);
    return pick(rng, [
      () => [`${a}`, `${a}.0`, `${a}^${randInt(rng, 2, 4)}`],
      () => [`${a}`, `\\frac{${2 * a}}{2}`, `${a}\\frac{1}{${randInt(rng, 2, 9)}}`],
      () => {
        const l = pick(rng, ['A', 'B', 'P']);
        return [l, `\\text{${l}}`, `${l}'`];
      },
    ] as (() => [string, string, string])[])();
  },
  'a sign apart': (rng) => {
    const a = randInt(rng, 2, 9);
    return pick(rng, [
      () => [`x-${a}`, `-${a}+x`, `${a}-x`],
      () => [`-\\frac{1}{${a}}`, `\\frac{-1}{${a}}`, `\\frac{1}{${a}}`],
    ] as (() => [string, string, string])[])();
  },
};

function shapePairs(perShape: number, seed: number): Pair[] {
  const rng = mulberry32(seed);
  const out: Pair[] = [];
  for (const [type, make] of Object.entries(SHAPES)) {
    for (let i = 0; i < perShape / 2; i++) {
      const [gold, right, wrong] = make(rng);
      out.push({ gold, pred: right, truth: true, type, source: 'shapes' });
      out.push({ gold, pred: wrong, truth: false, type, source: 'shapes' });
    }
  }
  return out;
}

/** A labelled JSONL file's pairs; `type` names them (by default `corpus: <note>`). */
function corpusPairs(file: string, type?: string): Pair[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const r = JSON.parse(l) as { gold: string; pred: string; equal: boolean; note?: string };
      return {
        gold: r.gold,
        pred: r.pred,
        truth: r.equal,
        type: type ?? `corpus: ${r.note ?? 'other'}`,
        source: 'corpus' as const,
      };
    });
}

/** The type of the pairs from Math-Verify's own test suite (each row names its test file, commit and test). */
export const UPSTREAM_TYPE = "Math-Verify's own tests";

/**
 * The bench's pairs: `task` from the embedded task, `perShape` of each shape (half right, half wrong), the corpus,
 * and `upstream`: the cases of Math-Verify's test suite with the labels it states.
 */
export function benchPairs(opts: {
  task: number;
  perShape: number;
  seed: number;
  corpus: string;
  upstream?: string;
}): Pair[] {
  return [
    ...taskPairs(opts.task, opts.seed),
    ...shapePairs(opts.perShape, opts.seed + 1),
    ...corpusPairs(opts.corpus),
    ...(opts.upstream ? corpusPairs(opts.upstream, UPSTREAM_TYPE) : []),
  ];
}
