/**
 * Strings of the kinds a rollout tokenises (math, code, unicode, tool responses, the template's tags), deterministic:
 * the corpus the TypeScript tokenizers are compared with Python's on (tests/integration/hf-tokenizer.test.ts for
 * Qwen3's tokenizer, tests/integration/models.test.ts for the char tokenizer of `model init --tokenizer char`).
 */
import { mulberry32 } from '../../workers/engines/sampling.ts';

export const CORPUS_ATOMS: readonly string[] = [
  '\\frac{1}{3}',
  '\\sqrt{2}',
  'x^2 + y^2 = z^2',
  '\\boxed{42}',
  '2^{64}-1',
  '1{,}000',
  '\\pi r^2',
  '∑_{k=1}^{n} k',
  '≤',
  '≥',
  '∞',
  'def f(n):\n    return n * (n + 1) // 2\n',
  'print(sum(range(10**6)))',
  'import sympy as sp',
  'for i in range(3):\n\tprint(i)',
  'Traceback (most recent call last):\n  File "<stdin>", line 1\nNameError: name \'x\' is not defined',
  '<|im_start|>',
  '<|im_end|>',
  '<tool_call>',
  '</tool_call>',
  '<tool_response>',
  '</tool_response>',
  '<reason>',
  '</reason>',
  '<answer>',
  '</answer>',
  '{"name": "execute_python_code_with_standard_io", "arguments": {"code": "print(1)", "input": ""}}',
  '日本語のテキスト',
  '中文数学题',
  'Ελληνικά',
  'עברית',
  'العربية',
  '🙂🚀',
  'e\u0301',
  'naïve café',
  '\u200b',
  '  ',
  '\n\n',
  '\t',
  ' ',
  '123456789012345678901234567890',
  '3.14159',
  '-0.5',
  '1e-9',
  '0x1F',
  'Ünïcödé',
  'ÅÄÖ',
  'ß',
  'ﬁ',
];

/** `n` strings of 1-8 atoms with separators; every 7th starts with a number, every 11th is upper-cased. */
export function tokenizerCorpus(opts: { n?: number; seed?: number; atoms?: readonly string[] } = {}): string[] {
  const rng = mulberry32(opts.seed ?? 20261201);
  const atoms = opts.atoms ?? CORPUS_ATOMS;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rng() * xs.length)]!;
  const int = (n: number) => Math.floor(rng() * n);
  const out: string[] = [];
  for (let i = 0; i < (opts.n ?? 1200); i++) {
    const n = 1 + int(8);
    let s = '';
    for (let j = 0; j < n; j++) s += pick(atoms) + pick(['', ' ', '\n', ', ', ' = ', '']);
    if (i % 7 === 0) s = String(int(1e9)) + ' ' + s;
    if (i % 11 === 0) s = s.toUpperCase();
    out.push(s);
  }
  return out;
}
