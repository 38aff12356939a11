/**
 * Final-answer extraction (pure). Default mode "answer" (the paper): the `\boxed{}` inside the last
 * `<answer>…</answer>` block (the block's whole text when it holds no box); a block that boxes several different
 * answers hedges, and has none. Mode "boxed" (the released code):
 * the last `\boxed{}` / `\fbox{}` anywhere. Where the text is an answer rather than a model's response (the CLI's
 * `--pred`, corpora: `bare`), a *bare* answer (short text with no tags, no box and no line breaks) is taken as is;
 * in a response (the reward) an answer outside `<answer>` is none. A free-text answer (bare, or an `<answer>` block
 * without a box) is the formula it states (statedAnswer).
 */
export type ExtractMode = 'answer' | 'boxed';

export interface Extraction {
  answer: string | null;
  reason: string;
}

/**
 * Every `\boxed{…}` / `\fbox{…}` content in order, with nested braces balanced; `\boxed 5` (no braces) too.
 * Linear on any input: the braces are matched in one pass (a stack) instead of a scan per box, which made
 * `\boxed{` repeated 10,000 times unbalanced 10^8 steps; a brace-less box's end is found once per run.
 */
export function findBoxed(text: string): string[] {
  const out: string[] = [];
  const re = /\\(boxed|fbox)(?![a-zA-Z])\s*/g;
  let close: Int32Array | null = null; // close[i]: where the "{" at i closes (-1: never), computed on first need
  let stop = -1; // the next whitespace or "$" at or after the last brace-less box
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    const i = m.index + m[0].length;
    if (text[i] === '{') {
      close ??= matchBraces(text);
      const end = close[i]!;
      if (end === -1) continue; // unbalanced: not an answer
      out.push(text.slice(i + 1, end));
      re.lastIndex = end + 1;
    } else if (m[1] === 'boxed') {
      // `\boxed 5` / `\boxed{}`-less form: up to the next whitespace or `$`
      if (stop < i) {
        stop = i;
        while (stop < text.length && !/[\s$]/.test(text[stop]!)) stop++;
      }
      if (stop > i) out.push(text.slice(i, stop));
    }
  }
  return out;
}

/**
 * For every "{" not escaped by a backslash, the index of its "}" (-1 when it never closes), as a scan from that
 * brace that skips `\x` pairs would find. The "{" of a box follows a letter or a space, never a backslash, so the
 * one left-to-right pass agrees with each such scan about which characters are escaped.
 */
function matchBraces(text: string): Int32Array {
  const close = new Int32Array(text.length).fill(-1);
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '{') open.push(i);
    else if (c === '}' && open.length) close[open.pop()!] = i;
  }
  return close;
}

function lastAnswerBlock(text: string): string | null {
  const open = text.lastIndexOf('<answer>');
  if (open === -1) return null;
  const close = text.indexOf('</answer>', open);
  return text.slice(open + '<answer>'.length, close === -1 ? undefined : close);
}

/** A bare answer: short, one line, no tags and no box. */
export function isBare(text: string): boolean {
  const t = text.trim();
  return (
    t.length > 0 &&
    t.length <= 300 &&
    !/[\r\n]/.test(t) &&
    !/<\/?(?:answer|think|code|interpreter|tool_call|output)\b/i.test(t) &&
    !/\\(?:boxed|fbox)/.test(t)
  );
}

/** Words that announce the answer before it: "The answer is", "So the final answer is:", "Answer: " (a space after
 *  the colon: `a:b` is a ratio), "x is". Bounded, so linear. */
const LEAD_IN = /^(?:[A-Za-z]+,?\s+){0,8}?(?:is|are|equals|was)\s*:?\s+|^[A-Za-z]+(?:\s+[A-Za-z]+){0,3}\s*:\s+/i;

/** A sentence's closing `.` `,` `;` `:` (not an ellipsis's last dot: `1, 2, 3, ...` lists more than three). */
function dropFullStop(s: string): string {
  const t = s.trimEnd();
  return /[.,;:]$/.test(t) && !/\.\.$/.test(t) ? t.slice(0, -1).trimEnd() : t;
}

/** The content of one math span that is the whole text (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`), or null. */
function mathSpan(t: string): string | null {
  for (const [open, close] of [
    ['$$', '$$'],
    ['\\[', '\\]'],
    ['\\(', '\\)'],
    ['$', '$'],
  ] as const) {
    if (t.length < open.length + close.length || !t.startsWith(open) || !t.endsWith(close)) continue;
    const inner = t.slice(open.length, t.length - close.length);
    // One span only: `$1$ and $2$` is two (an escaped `\$` is a dollar sign, not a delimiter).
    const closes = close === '$' || close === '$$' ? /(?<!\\)\$/.test(inner) : inner.includes(close);
    return closes ? null : inner;
  }
  return null;
}

/**
 * The formula a free-text answer states: the words announcing it, the sentence's full stop and a math span's
 * delimiters go (`The answer is $1/3.$` → `1/3`, `$2^{10}.$` → `2^{10}`, `The answer is 4 4/9.` → `4 4/9`). Taken
 * whole, the sentence was no formula: the fast path read `Theansweris1/3`, and Math-Verify, failing on it (or on a
 * full stop inside the delimiters), picked a number out of it — `$2` of `$2^{10}.$` as two dollars — and paid a wrong
 * answer. Text that is not one such sentence (`$28$ percent`, `1 and 2`) is left as it is.
 */
export function statedAnswer(text: string): string {
  let t = dropFullStop(text.trim().replace(LEAD_IN, ''));
  const inner = mathSpan(t);
  if (inner !== null) t = dropFullStop(inner.trim());
  return t.trim();
}

export function extractAnswer(text: string, mode: ExtractMode = 'answer', bare = true): Extraction {
  if (typeof text !== 'string' || text.trim() === '') return { answer: null, reason: 'empty response' };
  if (mode === 'answer') {
    const block = lastAnswerBlock(text);
    if (block !== null) {
      const boxes = findBoxed(block).filter((b) => b.trim() !== '');
      // Boxing several candidates would let a hedge collect the reward: only one answer (repeated or not) counts.
      if (new Set(boxes.map((b) => b.replace(/\s+/g, ''))).size > 1)
        return { answer: null, reason: `<answer> boxes ${boxes.length} different answers: a hedge is no answer` };
      if (boxes.length) return { answer: boxes[boxes.length - 1].trim(), reason: '\\boxed{} inside <answer>' };
      if (block.trim() && isBare(block) && statedAnswer(block))
        return { answer: statedAnswer(block), reason: '<answer> block (no \\boxed{})' };
      return { answer: null, reason: 'the <answer> block holds no \\boxed{} answer' };
    }
    if (bare && isBare(text) && statedAnswer(text)) return { answer: statedAnswer(text), reason: 'bare answer' };
    return { answer: null, reason: 'no <answer> block in the response' };
  }
  const boxes = findBoxed(text).filter((b) => b.trim() !== '');
  if (boxes.length) return { answer: boxes[boxes.length - 1].trim(), reason: 'last \\boxed{} in the response' };
  if (isBare(text) && statedAnswer(text)) return { answer: statedAnswer(text), reason: 'bare answer' };
  return { answer: null, reason: 'no \\boxed{} in the response' };
}

/** Gold answers are usually bare, sometimes a boxed solution: take the last box if there is one. */
export function extractGold(gold: string): string {
  const boxes = findBoxed(gold).filter((b) => b.trim() !== '');
  return (boxes.length ? boxes[boxes.length - 1] : gold).trim();
}
