/**
 * Non-reasoning SFT demonstrations for real word problems (docs/method.md §7), in the same rStar2 format as the
 * embedded demos (demos.ts: brief text, a Python tool call, the tool's output, `<answer>\boxed{…}</answer>`). The
 * program comes from the worked solution's calculator notes: GSM8K writes each step as `<<48/2=24>>`, so the notes,
 * chained (a later note's number that equals an earlier result becomes that result's variable), compute the final
 * answer. A problem whose notes do not reach its `#### N` answer gets no tool demo (its demos answer without the
 * tool). Kinds as in demos.ts: 'tool'; 'recover' (a failing call — a `prnt` typo or an unclosed `(` — then the
 * fix); 'no_tool' (the solution's own reasoning, notes stripped, then the answer); 'direct' (the answer stated with
 * no working). Every demonstration's answer is the dataset's.
 */
import type { DemoShares } from '../../contracts/recipe.ts';
import { mulberry32 } from '../engines/sampling.ts';
import { EMBEDDED_TEMPLATE_SETTINGS, buildPrompt, type TemplateSettings } from '../rollout/template.ts';
import type { Problem, Rng } from './arith.ts';
import { evalExpression, FLOAT_OPS } from './arith-expr.ts';
import { rgArithmeticCall } from './rg-programs.ts';
import { pick } from './arith.ts';
import {
  answerTurn,
  breakCode,
  callTurn,
  kindCounts,
  type Demo,
  type DemoKind,
  type ExpectedResult,
  type RecoverError,
  type Segment,
  toolSegment,
} from './demos.ts';

/**
 * A stored problem as demos need it: the question, the final answer, and (GSM8K) the worked solution or
 * (reasoning-gym arithmetic) the family its tool call is written from (rg-programs.ts).
 */
export interface WorkedProblem {
  id: string;
  question: string;
  answer: string;
  solution?: string | null;
  family?: string | null;
}

const NOTE = /<<([^<>=]+)=([^<>]+)>>/g;
const NUMBER = /\d+(?:\.\d+)?/g;

/** The value of an arithmetic expression of numbers, + - * / ** and parentheses; null for anything else. */
export const evalArithmetic = (expr: string): number | null => evalExpression(expr, FLOAT_OPS);

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));

/**
 * A Python program that prints `answer` from the solution's calculator notes, or null when the notes do not reach
 * it (no notes, an expression that is not plain arithmetic, a note whose result is wrong, a non-integer answer).
 */
export function calculatorProgram(solution: string, answer: string): string | null {
  if (!/^-?\d+$/.test(answer)) return null;
  const target = Number(answer);
  const notes = [...solution.matchAll(NOTE)].map((m) => ({ expr: m[1]!.replace(/,/g, '').trim(), result: m[2]! }));
  const lines: string[] = [];
  const values: { name: string; literal: string; value: number }[] = [];
  for (const note of notes) {
    if (evalArithmetic(note.expr) === null) return null;
    // Earlier results by their literal: the latest one wins, as a worked solution reuses what it just computed.
    const expr = note.expr.replace(NUMBER, (lit) => {
      const prev = [...values].reverse().find((v) => Number(v.literal) === Number(lit));
      return prev ? prev.name : lit;
    });
    const value = evalArithmetic(note.expr)!;
    const stated = Number(note.result.replace(/,/g, '').trim());
    if (!Number.isFinite(stated) || !close(value, stated)) return null;
    const name = `v${values.length + 1}`;
    lines.push(`${name} = ${expr}`);
    values.push({ name, literal: note.result.replace(/,/g, '').trim(), value });
    if (close(value, target)) return [...lines, `print(round(${name}))`].join('\n');
  }
  return null;
}

/** The solution's own reasoning for a no-tool demo: calculator notes and the `#### N` line removed. */
export function solutionReasoning(solution: string): string {
  return solution
    .replace(NOTE, '')
    .replace(/\n?####.*$/s, '')
    .trim();
}

const TOOL_REASON = ['Let me compute it with Python.', 'I will calculate this step by step in Python.'];
const FIX_REASON: Record<RecoverError, readonly string[]> = {
  name_typo: ['Typo in print; fix it.', 'Fix the typo.'],
  missing_import: ['Add the import.', 'Import it.'],
  missing_paren: ['Close the parenthesis.', 'Add the missing ).'],
};
const FINAL_REASON = ['The answer is {x}.', 'So the answer is {x}.'];

const okResult = (stdout: string): ExpectedResult => ({ status: 'ok', stdout, stderr: '', errorType: null });

/** A worked problem's tool call: the calculator notes' program, else its family's; null when neither reaches the answer. */
export function workedCall(p: WorkedProblem): { reason: string | null; code: string } | null {
  if (p.solution) {
    const code = calculatorProgram(p.solution, p.answer);
    return code ? { reason: null, code } : null;
  }
  return p.family ? rgArithmeticCall(p.family, p.question, p.answer) : null;
}

/** One demonstration of `kind` for a worked problem ('tool' and 'recover' need its program, workedCall). */
export function workedDemo(
  p: WorkedProblem,
  kind: DemoKind,
  rng: Rng,
  settings: TemplateSettings = EMBEDDED_TEMPLATE_SETTINGS,
): Demo {
  const call = workedCall(p);
  const code = call?.code ?? null;
  const problem: Problem = {
    id: p.id,
    family: 'word',
    difficulty: 2,
    problem: p.question,
    answer: p.answer,
    code: code ?? '',
  };
  const prompt = buildPrompt(p.question, settings);
  const final = () => answerTurn(pick(rng, FINAL_REASON).replace('{x}', p.answer), p.answer, settings);
  const segments: Segment[] = [];
  let error: RecoverError | null = null;
  if (kind === 'no_tool') {
    const reasoning = p.solution ? solutionReasoning(p.solution) : '';
    segments.push({ kind: 'model', text: answerTurn(reasoning || `The answer is ${p.answer}.`, p.answer, settings) });
  } else if (kind === 'direct') {
    segments.push({ kind: 'model', text: final() });
  } else {
    if (!code) throw new Error(`workedDemo: ${p.id} has no program for a ${kind} demo`);
    const reason = () => call?.reason ?? pick(rng, TOOL_REASON);
    if (kind === 'recover') {
      error = pick(rng, ['name_typo', 'missing_paren'] as const);
      const bad = breakCode(code, error);
      segments.push({ kind: 'model', text: callTurn(reason(), bad.code, settings) });
      segments.push(toolSegment(bad.code, bad.expected, settings));
      segments.push({ kind: 'model', text: callTurn(pick(rng, FIX_REASON[error]), code, settings) });
    } else {
      segments.push({ kind: 'model', text: callTurn(reason(), code, settings) });
    }
    segments.push(toolSegment(code, okResult(`${p.answer}\n`), settings), { kind: 'model', text: final() });
  }
  return { problem, kind, error, prompt, segments };
}

/**
 * n demonstrations over `problems` (a dataset's train split), kinds by `shares` (exact counts, shuffled): tool and
 * recover demos cycle over the problems that have a calculator program, no-tool and direct ones over all of them.
 */
export function workedSftDataset(
  problems: readonly WorkedProblem[],
  opts: { n: number; seed: number; shares?: Partial<DemoShares>; settings?: TemplateSettings },
): Demo[] {
  const rng = mulberry32(opts.seed ^ 0x65_3d_9a_11);
  const withCode = problems.filter((p) => workedCall(p) !== null);
  const counts = kindCounts(opts.n, opts.shares);
  if ((counts.tool || counts.recover) && withCode.length === 0)
    throw new Error('no problem of this dataset has a worked solution or a family whose program reaches its answer');
  const shuffled = <T>(xs: readonly T[]) => {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  const codeOrder = shuffled(withCode);
  const allOrder = shuffled(problems);
  let c = 0;
  let a = 0;
  const demos: Demo[] = [];
  for (const kind of ['tool', 'recover', 'no_tool', 'direct'] as const)
    for (let k = 0; k < counts[kind]; k++) {
      const p =
        kind === 'tool' || kind === 'recover' ? codeOrder[c++ % codeOrder.length]! : allOrder[a++ % allOrder.length]!;
      demos.push(workedDemo(p, kind, rng, opts.settings));
    }
  return shuffled(demos);
}
