/**
 * Final-answer extraction (pure). Default mode "answer" (the paper): the `\boxed{}` inside the last
 * `<answer>…</answer>` block (the block's whole text when it holds no box); a block that boxes several different
 * answers hedges, and has none. Mode "boxed" (the released code):
 * the last `\boxed{}` / `\fbox{}` anywhere. Where the text is an answer rather than a model's response (the CLI's
 * `--pred`, corpora: `bare`), a *bare* answer (short text with no tags, no box and no line breaks) is taken as is;
 * in a response (the reward) an answer outside `<answer>` is none.
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
      if (block.trim() && isBare(block)) return { answer: block.trim(), reason: '<answer> block (no \\boxed{})' };
      return { answer: null, reason: 'the <answer> block holds no \\boxed{} answer' };
    }
    if (bare && isBare(text)) return { answer: text.trim(), reason: 'bare answer' };
    return { answer: null, reason: 'no <answer> block in the response' };
  }
  const boxes = findBoxed(text).filter((b) => b.trim() !== '');
  if (boxes.length) return { answer: boxes[boxes.length - 1].trim(), reason: 'last \\boxed{} in the response' };
  if (isBare(text)) return { answer: text.trim(), reason: 'bare answer' };
  return { answer: null, reason: 'no \\boxed{} in the response' };
}

/** Gold answers are usually bare, sometimes a boxed solution: take the last box if there is one. */
export function extractGold(gold: string): string {
  const boxes = findBoxed(gold).filter((b) => b.trim() !== '');
  return (boxes.length ? boxes[boxes.length - 1] : gold).trim();
}
