/**
 * One reader for the arithmetic that SFT demonstrations compute before they write it as Python: numbers, + - * / //
 * ** and parentheses, with Python's precedence (** binds tighter than a unary sign and to the right), over a number
 * type given by its operations — floats for GSM8K's calculator notes (gsm-demos.ts), exact integers for
 * reasoning-gym's problems (rg-programs.ts). Pure. Anything else, an operator the type lacks or a division by zero
 * gives null, so no demonstration is built on a value that Python would not print.
 */

export interface NumberOps<T> {
  /** The literals this type reads, anchored at the reader's position. */
  literal: RegExp;
  parse(digits: string): T;
  neg(a: T): T;
  add(a: T, b: T): T;
  sub(a: T, b: T): T;
  mul(a: T, b: T): T;
  /** `/`, `//` and `**` where the type has them exactly; null from one means undefined (a division by zero). */
  div?(a: T, b: T): T | null;
  floorDiv?(a: T, b: T): T | null;
  pow?(a: T, b: T): T | null;
  /** Whether a result counts (floats: finite). */
  valid?(v: T): boolean;
}

type BinaryOp = '*' | '/' | '//';

/** The value of `expr` in the number type of `ops`, or null. */
export function evalExpression<T>(expr: string, ops: NumberOps<T>): T | null {
  const src = expr.replace(/\s+/g, '');
  if (!/^[\d+\-*/().]+$/.test(src)) return null;
  let i = 0;
  const atom = (): T | null => {
    if (src[i] === '(') {
      i++;
      const v = sum();
      if (v === null || src[i] !== ')') return null;
      i++;
      return v;
    }
    const m = ops.literal.exec(src.slice(i));
    if (!m) return null;
    i += m[0].length;
    return ops.parse(m[0]);
  };
  const power = (): T | null => {
    const b = atom();
    if (b === null || !src.startsWith('**', i)) return b;
    i += 2;
    const e = factor();
    return e === null || !ops.pow ? null : ops.pow(b, e);
  };
  const factor = (): T | null => {
    if (src[i] !== '-' && src[i] !== '+') return power();
    const neg = src[i++] === '-';
    const v = factor();
    return v === null ? null : neg ? ops.neg(v) : v;
  };
  const apply = (op: BinaryOp, a: T, b: T): T | null =>
    op === '*' ? ops.mul(a, b) : op === '/' ? (ops.div?.(a, b) ?? null) : (ops.floorDiv?.(a, b) ?? null);
  const product = (): T | null => {
    let v = factor();
    while (v !== null && (src[i] === '*' || src[i] === '/') && !src.startsWith('**', i)) {
      const op: BinaryOp = src.startsWith('//', i) ? '//' : (src[i] as '*' | '/');
      i += op.length;
      const r = factor();
      v = r === null ? null : apply(op, v, r);
    }
    return v;
  };
  const sum = (): T | null => {
    let v = product();
    while (v !== null && (src[i] === '+' || src[i] === '-')) {
      const op = src[i++];
      const r = product();
      v = r === null ? null : op === '+' ? ops.add(v, r) : ops.sub(v, r);
    }
    return v;
  };
  const v = sum();
  return v !== null && i === src.length && (ops.valid?.(v) ?? true) ? v : null;
}

/** Floats, as a calculator note means them: / and ** but not // (GSM8K's notes never floor). */
export const FLOAT_OPS: NumberOps<number> = {
  literal: /^\d+(?:\.\d+)?/,
  parse: Number,
  neg: (a) => -a,
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => (b === 0 ? null : a / b),
  pow: (a, b) => a ** b,
  valid: Number.isFinite,
};

/** Python's floor division on exact integers. */
const floorDiv = (a: bigint, b: bigint): bigint | null => {
  if (b === 0n) return null;
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
};

/** Exact integers: + - * and // only (`/` would be a float in Python, `**` is never needed here). */
export const INT_OPS: NumberOps<bigint> = {
  literal: /^\d+/,
  parse: BigInt,
  neg: (a) => -a,
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  floorDiv,
};
