/**
 * The embedded task (docs/method.md §7, scaled down): generated integer-answer problems that a tiny character-level model
 * cannot do in its head but can do with one short Python program. Pure apart from node:crypto hashing.
 *
 * Each problem has an exact answer (computed here with BigInt) and a short, correct Python program that prints it.
 * Texts are short on purpose: the embedded model's context is ~512 tokens and its tokenizer is character-level.
 *
 * Splits: a problem is held out iff a hash of its text falls in the held-out share (HELD_OUT_PERCENT), so train and
 * held-out never share a problem text whatever the seed, the family mix or the difficulty.
 *
 * Families (difficulty 1..3 widens the numbers): product, sum, powmod, mod, choose, arrange, factorial, word; plus
 * `easy` (single-digit + - *), which a model can answer without the tool (the no-tool SFT demonstrations). `easy` is
 * not in the default family list (DEFAULT_FAMILIES): pass it explicitly.
 */
import { createHash } from 'node:crypto';
import { FAMILIES, type Difficulty, type Family } from '../../contracts/recipe.ts';
import { mulberry32 } from '../engines/sampling.ts';

export type Split = 'train' | 'test';

/** The tool-worthy families (everything but `easy`). */
export const DEFAULT_FAMILIES: readonly Family[] = FAMILIES.filter((f) => f !== 'easy');
/** Percent of all problem texts that are held out (test split). A constant, so that splits never overlap. */
export const HELD_OUT_PERCENT = 10;

export interface Problem {
  /** Stable id: family plus a hash of the problem text. */
  id: string;
  family: Family;
  difficulty: Difficulty;
  /** The problem text (what goes in the user turn). */
  problem: string;
  /** The exact integer answer, base 10. */
  answer: string;
  /** A short Python program that prints the answer (and nothing else). */
  code: string;
}

export type Rng = () => number;

/** 16 hex digits of SHA-256 of the text (the id). */
export function textHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

export function problemId(family: Family, text: string): string {
  return `${family}-${textHash(text)}`;
}

/** The split a problem text belongs to (independent of how it was generated). */
export function splitOf(text: string): Split {
  const h = createHash('sha256').update(`split:${text}`, 'utf8').digest();
  return h.readUInt32BE(0) % 100 < HELD_OUT_PERCENT ? 'test' : 'train';
}

// ---- random helpers -------------------------------------------------------------------------------------------

/** Integer uniform in [lo, hi]. */
export const randInt = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));
/** A number with exactly `digits` digits (digits ≥ 1; 1 digit means 2..9). */
const withDigits = (rng: Rng, digits: number): number =>
  digits <= 1 ? randInt(rng, 2, 9) : randInt(rng, 10 ** (digits - 1), 10 ** digits - 1);
export const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;

const B = (x: number | bigint) => BigInt(x);
function bfact(n: number): bigint {
  let r = 1n;
  for (let i = 2; i <= n; i++) r *= B(i);
  return r;
}
export function bperm(n: number, k: number): bigint {
  let r = 1n;
  for (let i = 0; i < k; i++) r *= B(n - i);
  return r;
}
export function bcomb(n: number, k: number): bigint {
  return bperm(n, k) / bfact(k);
}
export function bpowmod(base: number, exp: number, mod: number): bigint {
  let r = 1n % B(mod);
  let b = B(base) % B(mod);
  let e = exp;
  while (e > 0) {
    if (e & 1) r = (r * b) % B(mod);
    b = (b * b) % B(mod);
    e >>= 1;
  }
  return r;
}

interface Draft {
  problem: string;
  answer: bigint;
  code: string;
}

// ---- families -------------------------------------------------------------------------------------------------

type Maker = (rng: Rng, d: Difficulty) => Draft;

const MAKERS: Record<Family, Maker> = {
  product(rng, d) {
    const a = withDigits(rng, randInt(rng, d + 1, d + 2));
    const b = withDigits(rng, randInt(rng, d, d + 1));
    const form = randInt(rng, 0, 2);
    if (form === 0) return { problem: `Compute ${a}*${b}.`, answer: B(a) * B(b), code: `print(${a}*${b})` };
    const c = withDigits(rng, randInt(rng, 1, d + 1));
    if (form === 1 || B(c) >= B(a) * B(b))
      return { problem: `Compute ${a}*${b}+${c}.`, answer: B(a) * B(b) + B(c), code: `print(${a}*${b}+${c})` };
    return { problem: `Compute ${a}*${b}-${c}.`, answer: B(a) * B(b) - B(c), code: `print(${a}*${b}-${c})` };
  },
  sum(rng, d) {
    const k = randInt(rng, 3, 3 + d);
    for (;;) {
      let expr = String(withDigits(rng, randInt(rng, 2, d + 2)));
      let total = B(Number(expr));
      for (let i = 1; i < k; i++) {
        const t = withDigits(rng, randInt(rng, 2, d + 2));
        const minus = rng() < 0.25;
        expr += `${minus ? '-' : '+'}${t}`;
        total += minus ? -B(t) : B(t);
      }
      if (total >= 0n) return { problem: `Compute ${expr}.`, answer: total, code: `print(${expr})` };
    }
  },
  powmod(rng, d) {
    const b = randInt(rng, 2, 9 + 10 * d);
    const e = randInt(rng, 10, 10 + 40 * d);
    const m = randInt(rng, 7, 10 + 30 * d);
    return { problem: `What is ${b}^${e} mod ${m}?`, answer: bpowmod(b, e, m), code: `print(pow(${b},${e},${m}))` };
  },
  mod(rng, d) {
    const m = randInt(rng, 7, 20 + 30 * d);
    if (rng() < 0.5) {
      const a = withDigits(rng, d + 2);
      const b = withDigits(rng, d + 1);
      return { problem: `What is ${a}*${b} mod ${m}?`, answer: (B(a) * B(b)) % B(m), code: `print(${a}*${b}%${m})` };
    }
    const n = withDigits(rng, 3 + 2 * d);
    return { problem: `What is ${n} mod ${m}?`, answer: B(n) % B(m), code: `print(${n}%${m})` };
  },
  choose(rng, d) {
    const n = randInt(rng, 8, 10 + 10 * d);
    const k = randInt(rng, 2, Math.min(n - 2, 3 + d));
    return {
      problem: `How many ways to choose ${k} of ${n}?`,
      answer: bcomb(n, k),
      code: `import math\nprint(math.comb(${n},${k}))`,
    };
  },
  arrange(rng, d) {
    const n = randInt(rng, 7, 9 + 5 * d);
    const k = randInt(rng, 3, 1 + 2 * d);
    return {
      problem: `How many ways to line up ${k} of ${n}?`,
      answer: bperm(n, k),
      code: `import math\nprint(math.perm(${n},${k}))`,
    };
  },
  factorial(rng, d) {
    const n = randInt(rng, 7, 6 + 3 * d);
    return { problem: `What is ${n} factorial?`, answer: bfact(n), code: `import math\nprint(math.factorial(${n}))` };
  },
  /** A brute-force count: the code loops up to N (10^4 … 3·10^6), so its tool call takes ~1–400 ms, as real ones vary. */
  count(rng, d) {
    const n = randInt(rng, 10 ** (d + 3), 3 * 10 ** (d + 3));
    const a = randInt(rng, 3, 9 + 4 * d);
    let b = randInt(rng, 3, 9 + 4 * d);
    if (b === a) b = a + 1;
    const gcd = (x: number, y: number): number => (y === 0 ? x : gcd(y, x % y));
    const lcm = (a * b) / gcd(a, b);
    const answer = B(Math.floor(n / a)) + B(Math.floor(n / b)) - B(Math.floor(n / lcm));
    return {
      problem: `How many of 1..${n} are multiples of ${a} or ${b}?`,
      answer,
      code: `print(sum(1 for i in range(1,${n}+1) if i%${a}==0 or i%${b}==0))`,
    };
  },
  word(rng, d) {
    const small = () => withDigits(rng, randInt(rng, 2, Math.min(3, d + 1)));
    switch (randInt(rng, 0, 4)) {
      case 0: {
        const a = small();
        const b = small();
        const c = randInt(rng, 1, Math.min(a * b - 1, 10 ** (d + 1)));
        return {
          problem: `${a} rows of ${b} apples; ${c} are eaten. How many are left?`,
          answer: B(a) * B(b) - B(c),
          code: `print(${a}*${b}-${c})`,
        };
      }
      case 1: {
        const a = small();
        const b = small();
        return {
          problem: `${a} crates hold ${b} eggs each. How many eggs in all?`,
          answer: B(a) * B(b),
          code: `print(${a}*${b})`,
        };
      }
      case 2: {
        const a = small();
        const b = small();
        return {
          problem: `A train goes ${a} km per hour for ${b} hours. How far?`,
          answer: B(a) * B(b),
          code: `print(${a}*${b})`,
        };
      }
      case 3: {
        const a = randInt(rng, 3, 9 + 10 * d);
        const n = withDigits(rng, d + 2);
        return {
          problem: `${n} coins shared equally by ${a} kids. How many left over?`,
          answer: B(n) % B(a),
          code: `print(${n}%${a})`,
        };
      }
      default: {
        const a = small();
        const b = small();
        const c = small();
        return {
          problem: `Ann has ${a} cards, buys ${b} packs of ${c}. How many now?`,
          answer: B(a) + B(b) * B(c),
          code: `print(${a}+${b}*${c})`,
        };
      }
    }
  },
  easy(rng) {
    const a = randInt(rng, 1, 9);
    const b = randInt(rng, 1, 9);
    const op = pick(rng, ['+', '-', '*'] as const);
    const [x, y] = op === '-' && a < b ? [b, a] : [a, b];
    const v = op === '+' ? x + y : op === '-' ? x - y : x * y;
    return { problem: `What is ${x}${op}${y}?`, answer: B(v), code: `print(${x}${op}${y})` };
  },
};

/** One problem of a family (any split). */
export function makeProblem(family: Family, rng: Rng, difficulty: Difficulty = 2): Problem {
  const d = MAKERS[family](rng, difficulty);
  return {
    id: problemId(family, d.problem),
    family,
    difficulty,
    problem: d.problem,
    answer: d.answer.toString(),
    code: d.code,
  };
}

export interface GenerateOptions {
  split: Split;
  n: number;
  seed: number;
  /** Families drawn uniformly per problem (default DEFAULT_FAMILIES, i.e. without `easy`). */
  families?: readonly Family[];
  /** One level, or a list drawn uniformly per problem (default [1, 2, 3]). */
  difficulty?: Difficulty | readonly Difficulty[];
  /** No repeated problem text within the result (default true). Throws when the family space is too small. */
  unique?: boolean;
}

/** n problems of one split, deterministic in the options. */
export function generate(opts: GenerateOptions): Problem[] {
  const families = opts.families ?? DEFAULT_FAMILIES;
  if (families.length === 0) throw new Error('generate: no families');
  const levels: readonly Difficulty[] =
    opts.difficulty == null ? [1, 2, 3] : typeof opts.difficulty === 'number' ? [opts.difficulty] : opts.difficulty;
  const unique = opts.unique ?? true;
  const rng = mulberry32(opts.seed);
  const out: Problem[] = [];
  const seen = new Set<string>();
  const maxAttempts = 1000 + 200 * opts.n;
  for (let attempt = 0; out.length < opts.n; attempt++) {
    if (attempt >= maxAttempts) {
      throw new Error(
        `generate: only ${out.length} of ${opts.n} distinct ${opts.split} problems found for families ${families.join(',')}`,
      );
    }
    const p = makeProblem(pick(rng, families), rng, pick(rng, levels));
    if (splitOf(p.problem) !== opts.split) continue;
    if (unique) {
      if (seen.has(p.problem)) continue;
      seen.add(p.problem);
    }
    out.push(p);
  }
  return out;
}
