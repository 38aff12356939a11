/**
 * Tool calls for SFT demonstrations on reasoning-gym's arithmetic families (the stored `rg-arithmetic` dataset,
 * docs/real-models-and-datasets.md "Real problems from packages"): from a problem's family and question, a short Python program
 * that prints its answer, and one line of reasoning to go before the call. Pure. Every program is checked here (exact
 * integers) against the dataset's answer: a question this does not parse, or a program whose value differs, gives
 * null, and that problem gets no tool demonstration (as a GSM8K solution whose notes miss the answer, gsm-demos.ts).
 */

import { evalExpression, INT_OPS } from './arith-expr.ts';

/** A tool call for a demonstration: the reasoning before it and the program. */
export interface DemoCall {
  reason: string;
  code: string;
}

/** A family's call with the exact value its program prints. */
type Made = { call: DemoCall; value: bigint };

/** Legs per animal, as reasoning-gym 0.1.25's leg_counting asks about them (common knowledge, written out here). */
export const ANIMAL_LEGS: Readonly<Record<string, number>> = {
  snake: 0,
  'sea slug': 0,
  jellyfish: 0,
  flatworm: 0,
  leech: 0,
  chicken: 2,
  bird: 2,
  human: 2,
  duck: 2,
  dog: 4,
  cat: 4,
  cow: 4,
  horse: 4,
  lion: 4,
  elephant: 4,
  giraffe: 4,
  tiger: 4,
  deer: 4,
  sheep: 4,
  starfish: 5,
  insect: 6,
  ant: 6,
  butterfly: 6,
  beetle: 6,
  bee: 6,
  wasp: 6,
  grasshopper: 6,
  cricket: 6,
  cockroach: 6,
  'praying mantis': 6,
  firefly: 6,
  spider: 8,
  scorpion: 8,
  crab: 10,
  lobster: 10,
  shrimp: 10,
  woodlouse: 14,
};

/** The exact value of integers with + - * // and parentheses (Python's precedence and floor division); null otherwise. */
export const evalIntExpression = (expr: string): bigint | null => evalExpression(expr, INT_OPS);

/** The longest arithmetic expression in a question (digits, spaces, + - * / and parentheses, at least one operator). */
function expressionIn(question: string): string | null {
  const runs = question.match(/[(\-+\d][\d\s+\-*/()]*[\d)]/g) ?? [];
  const best = runs
    .map((r) => r.trim())
    .filter((r) => /\d\s*[+\-*/]\s*[-(\d]/.test(r))
    .sort((a, b) => b.length - a.length)[0];
  return best ?? null;
}

/** The integers listed after the question's colon ("of these numbers: 33, 24"). */
function listedNumbers(question: string): bigint[] {
  const tail = question.slice(question.lastIndexOf(':') + 1);
  return (tail.match(/\d+/g) ?? []).map((d) => BigInt(d));
}

const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));

function arithmeticCall(question: string): Made | null {
  const expr = expressionIn(question);
  if (!expr) return null;
  const python = expr.replace(/\s*\/\s*/g, ' // ');
  const value = evalIntExpression(python);
  return value === null
    ? null
    : { call: { reason: 'Let me compute it with Python.', code: `print(${python})` }, value };
}

function legsCall(question: string): Made | null {
  const list = /if you have (.+)\?\s*$/s.exec(question)?.[1];
  if (!list) return null;
  const terms: { count: bigint; animal: string; legs: number }[] = [];
  for (const item of list.split(/,\s*/)) {
    const m = /^(\d+) (.+?)s?$/.exec(item.trim());
    const animal = m ? [m[2]!, `${m[2]!}s`].find((a) => a in ANIMAL_LEGS) : undefined;
    if (!m || animal === undefined) return null;
    terms.push({ count: BigInt(m[1]!), animal, legs: ANIMAL_LEGS[animal]! });
  }
  const reason = `Legs each: ${terms.map((t) => `${t.animal} ${t.legs}`).join(', ')}. Let me add them up in Python.`;
  const code = `print(${terms.map((t) => `${t.count} * ${t.legs}`).join(' + ')})`;
  const value = terms.reduce((s, t) => s + t.count * BigInt(t.legs), 0n);
  return { call: { reason, code }, value };
}

function gcdLcmCall(question: string, lcm: boolean): Made | null {
  const ns = listedNumbers(question);
  if (ns.length < 2 || ns.some((n) => n === 0n)) return null;
  const value = ns.reduce((a, b) => (lcm ? (a * b) / gcd(a, b) : gcd(a, b)));
  const fn = lcm ? 'lcm' : 'gcd';
  return {
    call: { reason: `Python's math.${fn} gives it.`, code: `import math\nprint(math.${fn}(${ns.join(', ')}))` },
    value,
  };
}

function bitsCall(question: string): Made | null {
  const m = /number (\d+)\?\s*$/.exec(question);
  if (!m) return null;
  const n = BigInt(m[1]!);
  const value = BigInt([...n.toString(2)].filter((c) => c === '1').length);
  return {
    call: { reason: 'Count the ones of its binary form in Python.', code: `print(bin(${n}).count('1'))` },
    value,
  };
}

/** Each family's writer of a call (the families of `dataset add rg-arithmetic`). */
const FAMILY_CALLS: Readonly<Record<string, (question: string) => Made | null>> = {
  basic_arithmetic: arithmeticCall,
  chain_sum: arithmeticCall,
  products: arithmeticCall,
  leg_counting: legsCall,
  gcd: (q) => gcdLcmCall(q, false),
  lcm: (q) => gcdLcmCall(q, true),
  count_bits: bitsCall,
};

/** The demonstration's tool call for a reasoning-gym arithmetic problem, or null when none reaches its answer. */
export function rgArithmeticCall(family: string, question: string, answer: string): DemoCall | null {
  if (!/^-?\d+$/.test(answer) || !Object.hasOwn(FAMILY_CALLS, family)) return null;
  const made = FAMILY_CALLS[family]!(question);
  return made && made.value === BigInt(answer) ? made.call : null;
}
