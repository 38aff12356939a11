/**
 * The reward verifier: extract → normalise → guards (hedges, enormous answers, repeating the problem) → the fast
 * path: exact → numeric → symbolic (compute-engine, in worker threads) → numeric sampling (same workers) → sympy in
 * the sandbox (optional) → Math-Verify in the sandbox as the authoritative last step (math-verify.ts), for every
 * pair the fast path could not settle (or, in mode 'always', for every pair). Tuples, sets, intervals, matrices
 * compare element-wise. The fast path settles a pair when it finds it equal, or unequal for a reason that Math-Verify
 * could not overturn (two exact numbers, two evaluated constants, two choice letters, two texts, several candidates
 * for one value); anything else goes to Math-Verify.
 */
import { extractAnswer, extractGold, type ExtractMode } from './extract.ts';
import {
  asInterval,
  choiceLetter,
  exactEqual,
  isLabel,
  isIntegerLiteral,
  joinSpacedThousands,
  normalize,
  numbersClose,
  NUMERIC_TOLERANCE,
  parseExact,
  parseNumber,
  structure,
  toSympyText,
  type Structured,
} from './normalize.ts';
import { SymbolicPool } from './pool.ts';
import type { MathVerify } from './math-verify.ts';
import type { Sandbox } from '../sandbox/types.ts';
import type { Method, Verdict } from '../../contracts/trajectory.ts';

export interface VerifyOptions {
  /** 'answer' (default): \boxed{} inside <answer>; 'boxed': the last \boxed{} anywhere. */
  mode?: ExtractMode;
  /** Limit for each symbolic / sampling check, ms (default 2000). */
  timeoutMs?: number;
  /** Limit for the sympy call, seconds (default 5). */
  sympyTimeoutS?: number;
  /** Whether `pred` may be a bare answer (default true: the CLI, corpora); the reward passes false, as a model's
   *  response must answer inside `<answer>`. */
  bare?: boolean;
  /** The problem: an answer that only repeats an expression of it (and is not a plain number) is incorrect. */
  problem?: string;
  /** Tolerance for numbers that are not both integers (default NUMERIC_TOLERANCE). */
  tolerance?: { rel: number; abs: number };
  /** Record each step's decision in the verdict (`steps`; `npx toolsmith verify --explain`). */
  explain?: boolean;
  /** Math-Verify as the last step: 'fallback' for what the fast path cannot settle (the report's behaviour, the
   *  recipe's default), 'always' for every pair, 'off' (this class's default: no sandbox is started). */
  mathVerify?: MathVerifyMode;
  /** Limit for each Math-Verify check, seconds (default 5). */
  mathVerifyTimeLimitS?: number;
}

export type MathVerifyMode = 'off' | 'fallback' | 'always';

type Trace = { step: string; detail: string }[];

/** `final`: an unequal verdict Math-Verify could not overturn (see the header). */
interface StepVerdict {
  equal: boolean | null;
  method: Method;
  reason: string;
  final?: boolean;
}

const SYMPY_CODE = `
import sys, json
from sympy import simplify, nsimplify, N, Abs
from sympy.parsing.sympy_parser import parse_expr, standard_transformations, implicit_multiplication_application, convert_xor
d = json.loads(sys.stdin.read())
T = standard_transformations + (implicit_multiplication_application, convert_xor)
try:
    a = parse_expr(d["a"], transformations=T)
    b = parse_expr(d["b"], transformations=T)
except Exception as e:
    print(json.dumps({"equal": None, "reason": "sympy could not parse: %s" % e})); sys.exit(0)
diff = simplify(a - b)
if diff == 0:
    print(json.dumps({"equal": True, "reason": "sympy: simplify(a - b) == 0"}))
elif diff.free_symbols:
    print(json.dumps({"equal": False, "reason": "sympy: a - b = %s" % diff}))
else:
    v = complex(N(diff, 30))
    print(json.dumps({"equal": abs(v) < 1e-9, "reason": "sympy: a - b ≈ %s" % v}))
`;

export interface VerifierOptions extends VerifyOptions {
  /** Worker threads for the symbolic checks (default 2). */
  workers?: number;
  /** Sandbox for the sympy last resort; without one that step reports itself unavailable. */
  sandbox?: Sandbox | null;
  /** Which steps after exact/numeric to use (default all); e.g. ['sympy'] to test the sympy path alone. */
  steps?: Array<'symbolic' | 'sympy'>;
  /** The Math-Verify checker, or how to start one (called once, when first needed; the verifier closes it). Absent
   *  or null: the last step is unavailable and the fast path's verdict stands. */
  mathVerifier?: MathVerify | null | (() => Promise<MathVerify>);
}

export class Verifier {
  readonly pool: SymbolicPool;
  private sandbox: Sandbox | null;
  private opts: VerifierOptions;
  /** Counts by deciding method (for metrics). */
  readonly counts: Record<Method, number> = {
    exact: 0,
    numeric: 0,
    symbolic: 0,
    sampling: 0,
    sympy: 0,
    'math-verify': 0,
    none: 0,
  };
  private ownMathVerify: Promise<MathVerify | null> | null = null;
  private mathVerifyError = '';

  constructor(opts: VerifierOptions = {}) {
    this.opts = opts;
    this.sandbox = opts.sandbox ?? null;
    this.pool = new SymbolicPool({ size: opts.workers ?? 2 });
  }

  async close(): Promise<void> {
    await this.pool.close();
    await (await this.ownMathVerify)?.close();
  }

  /** The Math-Verify checker: the one given, or this verifier's own, started once on first use. */
  private mathVerifier(): Promise<MathVerify | null> {
    const given = this.opts.mathVerifier;
    if (typeof given === 'function')
      return (this.ownMathVerify ??= given().catch((e: Error) => {
        this.mathVerifyError = e.message;
        return null;
      }));
    if (!given) this.mathVerifyError = 'this verifier was given none';
    return Promise.resolve(given ?? null);
  }

  async verify(gold: string, pred: string, opts: VerifyOptions = {}): Promise<Verdict> {
    const trace: Trace | undefined = (opts.explain ?? this.opts.explain) ? [] : undefined;
    const v = await this.decide(gold, pred, { ...this.opts, ...opts, trace });
    this.counts[v.method]++;
    return trace ? { ...v, steps: trace } : v;
  }

  private async decide(gold: string, pred: string, o: VerifierOptions & { trace?: Trace }): Promise<Verdict> {
    const note = (step: string, detail: string) => o.trace?.push({ step, detail });
    const ex = extractAnswer(pred, o.mode ?? 'answer', o.bare ?? true);
    note('extract', ex.answer === null ? `none: ${ex.reason}` : `${JSON.stringify(ex.answer)} (${ex.reason})`);
    if (ex.answer === null)
      return { correct: false, method: 'none', extracted: null, reason: `no answer extracted: ${ex.reason}` };
    const goldAnswer = extractGold(gold);
    const g = normalize(goldAnswer);
    const p = normalize(ex.answer);
    note(
      'normalise',
      `gold ${JSON.stringify(g.s)}, answer ${JSON.stringify(p.s)}${g.percent || p.percent ? ' (percent)' : ''}${g.degrees || p.degrees ? ' (degrees)' : ''}`,
    );
    // An enormous expression is no answer, and would only spend the symbolic steps' time (and tempt them).
    const limit = Math.max(MAX_ANSWER_CHARS, 4 * g.s.length);
    if (p.s.length > limit) {
      note('guard', 'too long');
      return {
        correct: false,
        method: 'none',
        extracted: ex.answer,
        reason: `answer too long: ${p.s.length} characters after normalisation (at most ${limit})`,
      };
    }
    p.s = joinSpacedThousands(g.s, p.s);
    // "What is 1234·5678?" answered "1234\cdot5678" is equal to the gold and computes nothing.
    if (
      o.problem &&
      p.s !== g.s &&
      p.s.length >= 3 &&
      parseExact(p.s) === null &&
      normalize(o.problem).s.includes(p.s)
    ) {
      note('guard', 'repeats the problem');
      return {
        correct: false,
        method: 'none',
        extracted: ex.answer,
        reason: 'the answer only repeats an expression of the problem',
      };
    }
    let v = await this.compareTop(g.s, p.s, o);
    // percent / degrees: "50\%" vs "0.5" — the flag may be dropped on either side; try the /100 reading too.
    if (!v.equal && (g.percent || p.percent)) {
      const gn = parseNumber(g.s),
        pn = parseNumber(p.s);
      if (gn !== null && pn !== null) {
        const tol = o.tolerance ?? NUMERIC_TOLERANCE;
        const alt = [gn, g.percent ? gn / 100 : gn].some((x) =>
          [pn, p.percent ? pn / 100 : pn].some((y) => numbersClose(x, y, tol.rel, tol.abs)),
        );
        v = alt ? { equal: true, method: 'numeric', reason: 'equal as percentages' } : { ...v, final: true };
        note('percent', alt ? 'equal as percentages' : 'not equal as percentages either');
      }
    }
    const mode = o.mathVerify ?? 'off';
    if (mode === 'always' || (mode === 'fallback' && v.equal !== true && !v.final)) {
      note('fast path', `${v.equal ? 'equal' : 'not settled'} (${v.method}): ${v.reason} — Math-Verify decides`);
      v = await this.lastStep(goldAnswer, ex.answer, v, o, note);
    }
    note('verdict', `${v.equal === true ? 'correct' : 'incorrect'} by ${v.method}: ${v.reason}`);
    return { correct: v.equal === true, method: v.method, extracted: ex.answer, reason: v.reason };
  }

  /** Math-Verify on the extracted pair: its verdict stands; without one (unavailable, timed out) the fast path's. */
  private async lastStep(
    gold: string,
    answer: string,
    fast: StepVerdict,
    o: VerifierOptions,
    note: (step: string, detail: string) => void,
  ): Promise<StepVerdict> {
    const mv = await this.mathVerifier();
    if (!mv) {
      note('math-verify', `unavailable: ${this.mathVerifyError}`);
      return { ...fast, reason: `${fast.reason}; Math-Verify unavailable (${this.mathVerifyError.slice(0, 200)})` };
    }
    const m = await mv.check(gold, answer, o.mathVerifyTimeLimitS ?? 5);
    note('math-verify', m.equal === null ? `undecided: ${m.reason}` : m.reason);
    if (m.equal === null) return { ...fast, reason: `${fast.reason}; ${m.reason}` };
    return { equal: m.equal, method: 'math-verify', reason: m.reason };
  }

  private async compareTop(g: string, p: string, o: VerifierOptions): Promise<StepVerdict> {
    if (g === p) return { equal: true, method: 'exact', reason: 'identical after normalisation' };
    // A primed letter names another point or function (`B'` is not `B`); Math-Verify drops the prime and would call
    // them equal, so this is decided here, finally.
    const unprimed = (x: string) => x.replace(/(?<=[A-Za-z])(?:'+|\^\{?\\prime\}?|\\prime)/g, '');
    if (unprimed(g) === unprimed(p))
      return { equal: false, method: 'exact', reason: 'the same but for prime marks', final: true };
    const gl = choiceLetter(g, true);
    if (gl) {
      const pl = choiceLetter(p);
      return {
        equal: pl === gl,
        method: 'exact',
        reason: pl ? `choice ${pl} vs ${gl}` : `gold is choice ${gl}`,
        final: pl !== null,
      };
    }
    // An inequality in one variable against an interval (or another inequality): as the intervals they describe.
    const gi = asInterval(g),
      pi = asInterval(p);
    if (gi !== null || pi !== null) return this.compareStruct(structure(gi ?? g), structure(pi ?? p), o);
    return this.compareStruct(structure(g), structure(p), o);
  }

  private async compareStruct(g: Structured, p: Structured, o: VerifierOptions): Promise<StepVerdict> {
    if (g.kind === 'scalar' && p.kind === 'scalar') return this.compareScalar(g.s, p.s, o);
    if (g.kind === 'eq' && p.kind === 'eq') return this.compareEq(g, p, o);
    // A labelled answer (`(p,q)=(3,2)`, `f(x)=2x+1`, `\text{Area}=12`) against its value: the value.
    if (g.kind === 'eq' && isLabel(g.lhs)) return this.compareStruct(structure(g.rhs), p, o);
    if (p.kind === 'eq' && isLabel(p.lhs)) return this.compareStruct(g, structure(p.rhs), o);
    // Several candidates for one value (`3, 4`, `3 \text{ or } 4`, `\{3,4\}`): a hedge, whatever they are.
    if (g.kind === 'scalar' && p.kind === 'set' && p.items.length >= 2)
      return {
        equal: false,
        method: 'exact',
        reason: `${p.items.length} candidates for one value: a hedge is incorrect`,
        final: true,
      };
    const shape = (s: Structured) =>
      s.kind === 'seq'
        ? `${s.open}${s.items.length}${s.close}`
        : s.kind === 'set' || s.kind === 'union'
          ? `${s.kind}${s.items.length}`
          : s.kind === 'matrix'
            ? `matrix${s.rows.length}x${s.rows[0]?.length ?? 0}`
            : s.kind;
    if (shape(g) !== shape(p))
      return { equal: false, method: 'exact', reason: `different shapes: ${shape(g)} vs ${shape(p)}` };
    if (g.kind === 'matrix' && p.kind === 'matrix') {
      if (g.rows.some((r, i) => r.length !== p.rows[i].length))
        return { equal: false, method: 'exact', reason: 'different matrix shapes' };
      return this.all(g.rows.flat(), p.rows.flat(), o);
    }
    if (g.kind === 'seq' && p.kind === 'seq') return this.all(g.items, p.items, o);
    if ((g.kind === 'set' && p.kind === 'set') || (g.kind === 'union' && p.kind === 'union'))
      return this.unordered(g.items, (p as { items: Structured[] }).items, o);
    return { equal: false, method: 'exact', reason: 'different shapes' };
  }

  private async all(gs: Structured[], ps: Structured[], o: VerifierOptions): Promise<StepVerdict> {
    let method: Method = 'exact';
    const rank: Method[] = ['exact', 'numeric', 'symbolic', 'sampling', 'sympy'];
    for (let i = 0; i < gs.length; i++) {
      const v = await this.compareStruct(gs[i], ps[i], o);
      if (!v.equal) return { ...v, reason: `element ${i + 1}: ${v.reason}` };
      if (rank.indexOf(v.method) > rank.indexOf(method)) method = v.method;
    }
    return { equal: true, method, reason: `all ${gs.length} elements equal` };
  }

  private async unordered(gs: Structured[], ps: Structured[], o: VerifierOptions): Promise<StepVerdict> {
    const used = new Set<number>();
    let method: Method = 'exact';
    let final = true;
    const rank: Method[] = ['exact', 'numeric', 'symbolic', 'sampling', 'sympy'];
    for (let i = 0; i < gs.length; i++) {
      let found = false;
      for (let j = 0; j < ps.length && !found; j++) {
        if (used.has(j)) continue;
        const v = await this.compareStruct(gs[i], ps[j], o);
        if (v.equal) {
          used.add(j);
          found = true;
          if (rank.indexOf(v.method) > rank.indexOf(method)) method = v.method;
        } else final &&= v.final === true;
      }
      if (!found) return { equal: false, method, reason: `no match for element ${i + 1} of the gold set`, final };
    }
    return { equal: true, method, reason: `all ${gs.length} elements match (any order)` };
  }

  private async compareEq(
    g: { lhs: string; rhs: string },
    p: { lhs: string; rhs: string },
    o: VerifierOptions,
  ): Promise<StepVerdict> {
    if (g.lhs === p.lhs) {
      const v = await this.compareScalar(g.rhs, p.rhs, o);
      if (v.equal) return v;
    }
    if (g.lhs === p.rhs && g.rhs === p.lhs)
      return { equal: true, method: 'exact', reason: 'same equation, sides swapped' };
    const a = `(${g.lhs})-(${g.rhs})`,
      b = `(${p.lhs})-(${p.rhs})`;
    const v = await this.compareScalar(a, b, o);
    if (v.equal) return v;
    const w = await this.compareScalar(a, b, o, true);
    if (w.equal) return w;
    // Up to scaling: 2y = 4x + 2 is y = 2x + 1.
    const r = await this.pool.run({ a, b, ratio: true }, o.timeoutMs ?? 2000);
    this.noted(o, { equal: r.equal, method: r.method, reason: r.reason });
    if (r.equal) return { equal: true, method: r.method, reason: r.reason };
    return { ...v, reason: `equations differ: ${v.reason}` };
  }

  /** With `explain`, the step's decision in the trace, under its method (undecided: null); returns it unchanged. */
  private noted(o: VerifierOptions & { trace?: Trace }, v: StepVerdict): StepVerdict {
    o.trace?.push({
      step: v.method,
      detail: `${v.equal === null ? 'undecided' : v.equal ? 'equal' : 'not equal'}: ${v.reason}`,
    });
    return v;
  }

  private async compareScalar(g: string, p: string, o: VerifierOptions, negate = false): Promise<StepVerdict> {
    if (!negate && g === p) return { equal: true, method: 'exact', reason: 'identical after normalisation' };
    // Integers compare exactly at any size (a float would call 1000000007 and 1000000008 equal): when either side
    // is written as an integer and both are exact numbers, as fractions of big integers.
    if (isIntegerLiteral(g) || isIntegerLiteral(p)) {
      const ge = parseExact(g),
        pe = parseExact(p);
      if (ge && pe) {
        const eq = exactEqual(ge, negate ? { n: -pe.n, d: pe.d } : pe);
        return this.noted(o, {
          equal: eq,
          method: 'exact',
          reason: eq ? `${g} = ${p} exactly` : `${g} ≠ ${p} (integers compare exactly)`,
          final: true,
        });
      }
    }
    const gn = parseNumber(g),
      pn = parseNumber(p);
    if (gn !== null && pn !== null) {
      const tol = o.tolerance ?? NUMERIC_TOLERANCE;
      const eq = numbersClose(gn, negate ? -pn : pn, tol.rel, tol.abs);
      return this.noted(o, {
        equal: eq,
        method: 'numeric',
        reason: eq ? `${gn} ≈ ${pn} (within rel ${tol.rel}, abs ${tol.abs})` : `${gn} ≠ ${pn}`,
        final: true,
      });
    }
    // Plain words (no math at all) that differ are different.
    const wordy = (s: string) => /^[a-zA-Z\s]{3,}$/.test(s);
    if (wordy(g) && wordy(p)) {
      const same = g.toLowerCase() === p.toLowerCase();
      return {
        equal: same,
        method: 'exact',
        reason: same ? 'the same text but for case' : 'different text',
        final: true,
      };
    }
    if (wordy(g) || wordy(p)) return { equal: false, method: 'exact', reason: 'text against math' };
    const steps = o.steps ?? ['symbolic', 'sympy'];
    let last: StepVerdict = { equal: false, method: 'exact', reason: 'not identical' };
    if (steps.includes('symbolic')) {
      const r = await this.pool.run({ a: g, b: p, negate }, o.timeoutMs ?? 2000);
      this.noted(o, { equal: r.equal, method: r.method, reason: r.reason });
      if (r.equal !== null)
        return { equal: r.equal, method: r.method, reason: r.reason, final: 'final' in r && r.final };
      last = { equal: false, method: r.method, reason: r.reason };
    }
    if (steps.includes('sympy')) {
      if (!this.sandbox) return { ...last, reason: `${last.reason}; sympy last resort unavailable (no sandbox)` };
      const res = await this.sandbox.run({
        code: SYMPY_CODE,
        input: JSON.stringify({ a: toSympyText(g), b: negate ? `-(${toSympyText(p)})` : toSympyText(p) }),
        timeoutS: o.sympyTimeoutS ?? 5,
      });
      if (res.status !== 'ok')
        return {
          ...last,
          reason: `${last.reason}; sympy ${res.status}: ${res.errorMessage ?? res.stderr.slice(0, 200)}`,
        };
      try {
        const out = JSON.parse(res.stdout.trim().split('\n').pop()!);
        this.noted(o, { equal: out.equal, method: 'sympy', reason: out.reason });
        if (out.equal !== null) return { equal: out.equal, method: 'sympy', reason: out.reason };
        return { ...last, reason: `${last.reason}; ${out.reason}` };
      } catch {
        return { ...last, reason: `${last.reason}; sympy gave no verdict` };
      }
    }
    return last;
  }
}

/** The longest answer judged (normalised characters), or four times the gold's if that is longer. */
export const MAX_ANSWER_CHARS = 1000;

let shared: Verifier | null = null;
/** One-off verify with a shared process-wide Verifier (worker threads unref'd; no sandbox unless given one). */
export function verify(
  gold: string,
  pred: string,
  opts: VerifyOptions & { verifier?: Verifier } = {},
): Promise<Verdict> {
  const v = opts.verifier ?? (shared ??= new Verifier());
  return v.verify(gold, pred, opts);
}
