/**
 * Non-reasoning SFT demonstrations for the embedded task (docs/method.md §7), in the rStar2 rollout format exactly as the
 * agentic rollout would produce it with EMBEDDED_TEMPLATE_SETTINGS: a short reason, a tool call, the tool response
 * (as the real sandbox + paper-format formatter would give it), then `<answer>\boxed{…}</answer><|im_end|>`.
 *
 * Segments after the prompt alternate model text and tool text:
 * - a model turn that calls the tool ends with `</tool_call>` (the engine stops on that string and keeps it);
 * - the tool text is toolResponseTurn(formatted result): it closes the assistant turn (`<|im_end|>\n`), carries the
 *   `<tool_response>`, and reopens the assistant with `<reason>` — all appended by the rollout, mask 0;
 * - the final model turn ends with `<|im_end|>` (a stop string the model must learn to emit).
 *
 * Kinds:
 * - 'tool': one correct call, then the answer;
 * - 'recover': a first call that fails (NameError from a `prnt` typo or a missing `from math import …`, or a
 *   SyntaxError from a missing `)`), its traceback, a corrected call, then the answer;
 * - 'no_tool': easy problems (family `easy`) answered directly, no call;
 * - 'direct': a tool-worthy problem answered straight away with its right answer, no call. A non-reasoning SFT's data
 *   has such answers (a solution that states its result); the tiny model cannot do that arithmetic in its head, so
 *   imitating one is almost always wrong. They leave the SFT policy calling the tool on only part of the problems:
 *   the headroom the default recipe's RL stages close (docs/recipes-and-training.md "The default recipe").
 * Every demonstration's answer is correct. Failing-call tracebacks are written as the sandbox zygote prints them under CPython
 * 3.11 (the traceback starts at the model's code; 3.12+ would add "Did you mean" hints to NameErrors). Tool segments
 * carry the call's code and the expected sandbox result so that an integration test can run them for real.
 */
import type { DemoShares, Difficulty, Family } from '../../contracts/recipe.ts';
import { mulberry32 } from '../engines/sampling.ts';
import type { Tokenizer } from '../engines/tokenizer.ts';
import {
  EMBEDDED_TEMPLATE_SETTINGS,
  IM_END,
  buildPrompt,
  pyJson,
  tag,
  toolResponseTurn,
  type TemplateSettings,
} from '../rollout/template.ts';
import { DEFAULT_TOOL_FORMAT, formatToolResult } from '../sandbox/format.ts';
import type { SandboxResult } from '../sandbox/types.ts';
import { generate, pick, type Problem, type Rng } from './arith.ts';

export type DemoKind = 'tool' | 'recover' | 'no_tool' | 'direct';
export type RecoverError = 'name_typo' | 'missing_import' | 'missing_paren';

/** What the sandbox is expected to return for a call (the fields formatToolResult reads). */
export interface ExpectedResult {
  status: 'ok' | 'error';
  stdout: string;
  stderr: string;
  errorType: string | null;
}

export type Segment =
  | { kind: 'model'; text: string }
  | {
      kind: 'tool';
      /** toolResponseTurn(toolText): exactly what the rollout appends. */
      text: string;
      /** The text inside <tool_response> (formatToolResult of the expected result, paper style). */
      toolText: string;
      /** The call this responds to. */
      call: { code: string; input: string };
      expected: ExpectedResult;
    };

export interface Demo {
  problem: Problem;
  kind: DemoKind;
  /** For 'recover': which mistake the first call makes. */
  error: RecoverError | null;
  /** buildPrompt(problem.problem, settings). */
  prompt: string;
  /** The whole response after the prompt, in order. */
  segments: Segment[];
}

export const DEFAULT_SHARES: DemoShares = { tool: 0.7, recover: 0.15, no_tool: 0.15, direct: 0 };
const KINDS: readonly DemoKind[] = ['tool', 'recover', 'no_tool', 'direct'];

// ---- Python error texts (as workers/sandbox/zygote_child.py prints them) ----------------------------------------------

/** Traceback of a NameError raised on line `line` of the model's code (zygote: frames start at main.py). */
export function nameErrorTraceback(name: string, line: number): string {
  return `Traceback (most recent call last):\n  File "main.py", line ${line}, in <module>\nNameError: name '${name}' is not defined\n`;
}

/** CPython 3.11 text of an unclosed bracket: the line (left-stripped), a caret under the bracket, the message. */
export function unclosedParenError(code: string, line: number, col: number): string {
  const raw = code.split('\n')[line - 1]!;
  const stripped = raw.trimStart();
  const caretCol = col - (raw.length - stripped.length);
  return `  File "main.py", line ${line}\n    ${stripped}\n    ${' '.repeat(caretCol)}^\nSyntaxError: '(' was never closed\n`;
}

const okResult = (stdout: string): ExpectedResult => ({ status: 'ok', stdout, stderr: '', errorType: null });
const errResult = (errorType: string, stderr: string): ExpectedResult => ({
  status: 'error',
  stdout: '',
  stderr,
  errorType,
});

/** The sandbox result formatToolResult needs, from an expected result. */
export function asSandboxResult(e: ExpectedResult): SandboxResult {
  return {
    status: e.status,
    stdout: e.stdout,
    stderr: e.stderr,
    exitCode: e.status === 'ok' ? 0 : 1,
    errorType: e.errorType,
    errorLine: null,
    errorMessage: null,
    durationMs: 0,
    queueMs: 0,
    stdoutTruncated: false,
    stderrTruncated: false,
  };
}

/** The mistakes that fit a program: a missing import needs one to drop. */
export function recoverErrorsFor(code: string): RecoverError[] {
  return /^import \w+\n/.test(code) ? ['name_typo', 'missing_import', 'missing_paren'] : ['name_typo', 'missing_paren'];
}

/** The broken version of a correct program (which prints on its last line) and what the sandbox returns for it. */
export function breakCode(code: string, error: RecoverError): { code: string; expected: ExpectedResult } {
  const lines = code.split('\n');
  const last = lines.length;
  const lastLine = lines[last - 1]!;
  if (!lastLine.startsWith('print(') || !lastLine.endsWith(')'))
    throw new Error(`breakCode: the last line must be print(...): ${code}`);
  switch (error) {
    case 'name_typo': {
      const bad = [...lines.slice(0, -1), `prnt(${lastLine.slice('print('.length)}`].join('\n');
      return { code: bad, expected: errResult('NameError', nameErrorTraceback('prnt', last)) };
    }
    case 'missing_import': {
      const m = /^import (\w+)\n/.exec(code);
      if (!m) throw new Error(`breakCode: no import to drop: ${code}`);
      const bad = lines.slice(1).join('\n');
      return { code: bad, expected: errResult('NameError', nameErrorTraceback(m[1]!, bad.split('\n').length)) };
    }
    case 'missing_paren': {
      const bad = [...lines.slice(0, -1), lastLine.slice(0, -1)].join('\n');
      return { code: bad, expected: errResult('SyntaxError', unclosedParenError(bad, last, 'print'.length)) };
    }
  }
}

// ---- texts ------------------------------------------------------------------------------------------------------

const FIRST_REASON: Record<Family, readonly string[]> = {
  product: ['Multiply.', 'Use Python.'],
  sum: ['Add up.', 'Use Python.'],
  powmod: ['Use pow.', 'pow(b,e,m).'],
  mod: ['Use %.', 'Take the remainder.'],
  choose: ['Use comb.', 'Binomial.'],
  arrange: ['Use perm.', 'Ordered picks.'],
  factorial: ['Use factorial.', 'Compute n!.'],
  count: ['Count by brute force.', 'Loop and count.'],
  word: ['Code it.', 'Use Python.'],
  easy: ['Compute it.', 'Check it.'],
};

const FIX_REASON: Record<RecoverError, readonly string[]> = {
  name_typo: ['Typo; fix.', 'Fix print.'],
  missing_import: ['Import math.', 'Add the import.'],
  missing_paren: ['Close the (.', 'Add a ).'],
};

const FINAL_REASON: readonly string[] = ['Done.', 'Got {x}.'];
/** A direct answer's reason: no working, as a solution that just states its result. */
const DIRECT_REASON: readonly string[] = ['I know it.', 'Known result.'];

/** A model turn that calls the tool: reason, then the call as JSON written like json.dumps. Ends with </tool_call>. */
export function callTurn(reason: string, code: string, s: TemplateSettings = EMBEDDED_TEMPLATE_SETTINGS): string {
  const json = pyJson({ name: s.toolName, arguments: { [s.codeArg]: code, [s.inputArg]: '' } });
  return `${reason}${tag.close(s.reasonTag)}\n${tag.open(s.callTag)}\n${json}\n${tag.close(s.callTag)}`;
}

/** The final model turn: reason, the boxed answer, end of message. */
export function answerTurn(reason: string, answer: string, s: TemplateSettings = EMBEDDED_TEMPLATE_SETTINGS): string {
  return `${reason}${tag.close(s.reasonTag)}\n${tag.open(s.answerTag)}\\boxed{${answer}}${tag.close(s.answerTag)}${IM_END}`;
}

/** A tool segment: exactly what the rollout appends for this call and result. */
export function toolSegment(code: string, expected: ExpectedResult, s: TemplateSettings): Segment {
  const toolText = formatToolResult(asSandboxResult(expected), DEFAULT_TOOL_FORMAT);
  return { kind: 'tool', text: toolResponseTurn(toolText, s), toolText, call: { code, input: '' }, expected };
}

/**
 * One demonstration. 'no_tool' needs an `easy` problem (demonstrations are always correct, and only those can be
 * done without the tool). `error` forces the mistake of a 'recover' demo (default: drawn from recoverErrorsFor).
 */
export function sftDemo(
  problem: Problem,
  kind: DemoKind,
  rng: Rng,
  opts: { error?: RecoverError; settings?: TemplateSettings } = {},
): Demo {
  const s = opts.settings ?? EMBEDDED_TEMPLATE_SETTINGS;
  const prompt = buildPrompt(problem.problem, s);
  const final = () => answerTurn(pick(rng, FINAL_REASON).replace('{x}', problem.answer), problem.answer, s);
  const segments: Segment[] = [];
  let error: RecoverError | null = null;
  if (kind === 'no_tool') {
    if (problem.family !== 'easy')
      throw new Error(`sftDemo: no_tool demos are for easy problems only (got ${problem.family})`);
    const expr = problem.code.slice('print('.length, -1);
    segments.push({ kind: 'model', text: answerTurn(`${expr}=${problem.answer}.`, problem.answer, s) });
  } else if (kind === 'direct') {
    if (problem.family === 'easy')
      throw new Error('sftDemo: direct demos are for tool-worthy problems (easy ones are no_tool)');
    segments.push({ kind: 'model', text: answerTurn(pick(rng, DIRECT_REASON), problem.answer, s) });
  } else {
    const first = pick(rng, FIRST_REASON[problem.family]);
    if (kind === 'recover') {
      error = opts.error ?? pick(rng, recoverErrorsFor(problem.code));
      const bad = breakCode(problem.code, error);
      segments.push({ kind: 'model', text: callTurn(first, bad.code, s) }, toolSegment(bad.code, bad.expected, s));
      segments.push({ kind: 'model', text: callTurn(pick(rng, FIX_REASON[error]), problem.code, s) });
    } else {
      segments.push({ kind: 'model', text: callTurn(first, problem.code, s) });
    }
    segments.push(toolSegment(problem.code, okResult(`${problem.answer}\n`), s), { kind: 'model', text: final() });
  }
  return { problem, kind, error, prompt, segments };
}

/** prompt + every segment: the full text of the demonstration. */
export function demoText(d: Demo): string {
  return d.prompt + d.segments.map((x) => x.text).join('');
}

export interface SftDatasetOptions {
  n: number;
  seed: number;
  /** Shares of the kinds (normalised); default DEFAULT_SHARES. Counts are exact (rounded), order shuffled. */
  shares?: Partial<DemoShares>;
  /** Families of the tool, recover and direct demos (default DEFAULT_FAMILIES); no_tool demos use `easy`. */
  families?: readonly Family[];
  difficulty?: Difficulty | readonly Difficulty[];
  settings?: TemplateSettings;
}

/** Count of each kind for n demos (largest-remainder rounding of the normalised shares). */
export function kindCounts(n: number, shares: Partial<DemoShares> = {}): Record<DemoKind, number> {
  const sh = { ...DEFAULT_SHARES, ...shares };
  const total = KINDS.reduce((a, k) => a + Math.max(0, sh[k]), 0);
  if (!(total > 0)) throw new Error('sftDataset: shares must have a positive sum');
  const exact = KINDS.map((k) => (n * Math.max(0, sh[k])) / total);
  const counts = exact.map(Math.floor);
  const order = KINDS.map((_, i) => i).sort((a, b) => exact[b]! - counts[b]! - (exact[a]! - counts[a]!));
  for (let i = 0; counts.reduce((a, b) => a + b, 0) < n; i++) counts[order[i % KINDS.length]!]!++;
  return { tool: counts[0]!, recover: counts[1]!, no_tool: counts[2]!, direct: counts[3]! };
}

/** n demonstrations on train-split problems, deterministic in the options. */
export function sftDataset(opts: SftDatasetOptions): Demo[] {
  const counts = kindCounts(opts.n, opts.shares);
  const rng = mulberry32(opts.seed ^ 0x5f7d_a11c);
  const hard = generate({
    split: 'train',
    n: counts.tool + counts.recover + counts.direct,
    seed: opts.seed,
    families: opts.families,
    difficulty: opts.difficulty,
  });
  const easy = generate({ split: 'train', n: counts.no_tool, seed: opts.seed + 1, families: ['easy'], unique: false });
  const kinds: DemoKind[] = KINDS.flatMap((k) => Array<DemoKind>(counts[k]).fill(k));
  // Pair problems with kinds, then shuffle (Fisher–Yates) so that kinds are interleaved.
  const demos: Demo[] = [];
  let h = 0;
  let e = 0;
  for (const k of kinds)
    demos.push(sftDemo(k === 'no_tool' ? easy[e++]! : hard[h++]!, k, rng, { settings: opts.settings }));
  for (let i = demos.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [demos[i], demos[j]] = [demos[j]!, demos[i]!];
  }
  return demos;
}

export interface TokenizedDemo {
  ids: number[];
  /** 1 on model-segment tokens (what the policy generates), 0 on prompt and tool tokens. */
  lossMask: number[];
  promptTokens: number;
}

/**
 * Tokenise segment by segment (as the rollout does: prompt, each generation, each appended tool text). For the
 * embedded tokenizer and these demos this equals tokenising the concatenation (tested): every boundary falls
 * between whole added tokens.
 */
export function tokenizeDemo(d: Demo, tokenizer: Tokenizer): TokenizedDemo {
  const ids = tokenizer.encode(d.prompt);
  const promptTokens = ids.length;
  const lossMask = Array<number>(ids.length).fill(0);
  for (const seg of d.segments) {
    const t = tokenizer.encode(seg.text);
    ids.push(...t);
    for (let i = 0; i < t.length; i++) lossMask.push(seg.kind === 'model' ? 1 : 0);
  }
  return { ids, lossMask, promptTokens };
}
