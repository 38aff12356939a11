import { useMemo } from 'react';

/**
 * A small Python highlighter: a single regex scan into keywords, builtins, strings, numbers, comments and the rest.
 * It is not a parser (no nesting, f-string fields stay string-coloured); it only has to make tool code readable.
 */
export type TokenKind = 'kw' | 'builtin' | 'str' | 'num' | 'com' | 'plain';
export interface Token {
  kind: TokenKind;
  text: string;
}

const KEYWORDS = new Set([
  'False',
  'None',
  'True',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
  'match',
  'case',
]);
const BUILTINS = new Set([
  'print',
  'range',
  'len',
  'int',
  'float',
  'str',
  'list',
  'dict',
  'set',
  'tuple',
  'sum',
  'min',
  'max',
  'abs',
  'round',
  'sorted',
  'enumerate',
  'zip',
  'map',
  'filter',
  'any',
  'all',
  'pow',
  'divmod',
  'isinstance',
  'input',
  'open',
  'bool',
  'reversed',
  'self',
]);

// Order matters: comments and strings first, so a '#' or a digit inside them is not taken for something else.
// Triple-quoted strings may span lines; an unterminated string runs to the end of its line (or of the code).
// Linear on any input (a trace is model output): no two adjacent quantifiers over the same characters — the number
// pattern's `\d[\d_]*\.?[\d_]*` split a digit run two ways at every length, 10^10 steps for 100,000 digits
// followed by a letter, and froze the tab (tests/unit/reward-linear.test.ts).
const TOKEN = new RegExp(
  [
    String.raw`(?<com>#[^\n]*)`,
    String.raw`(?<str>(?:[rRbBuUfF]{1,2})?(?:'''[\s\S]*?(?:'''|$)|"""[\s\S]*?(?:"""|$)|'(?:\\.|[^'\\\n])*(?:'|(?=\n)|$)|"(?:\\.|[^"\\\n])*(?:"|(?=\n)|$)))`,
    String.raw`(?<num>\b(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)\b)`,
    String.raw`(?<word>[A-Za-z_][A-Za-z0-9_]*)`,
  ].join('|'),
  'g',
);

export function tokenize(code: string): Token[] {
  const out: Token[] = [];
  let last = 0;
  const push = (kind: TokenKind, text: string) => {
    if (!text) return;
    const prev = out[out.length - 1];
    // Adjacent plain runs are merged to keep the span count down.
    if (prev && prev.kind === kind && kind === 'plain') prev.text += text;
    else out.push({ kind, text });
  };
  for (const m of code.matchAll(TOKEN)) {
    const g = m.groups ?? {};
    push('plain', code.slice(last, m.index));
    if (g.com !== undefined) push('com', g.com);
    else if (g.str !== undefined) push('str', g.str);
    else if (g.num !== undefined) push('num', g.num);
    else {
      const w = g.word ?? m[0];
      push(KEYWORDS.has(w) ? 'kw' : BUILTINS.has(w) ? 'builtin' : 'plain', w);
    }
    last = m.index + m[0].length;
  }
  push('plain', code.slice(last));
  return out;
}

const COLORS: Record<TokenKind, string | undefined> = {
  kw: '#ff7b72',
  builtin: '#d2a8ff',
  str: '#a5d6ff',
  num: '#79c0ff',
  com: '#8b949e',
  plain: undefined,
};

export const codeBlockStyle = {
  margin: 0,
  padding: '8px 10px',
  background: '#0b0d12',
  border: '1px solid var(--line)',
  borderRadius: 6,
  fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace',
  fontSize: 12.5,
  lineHeight: 1.5,
  overflow: 'auto',
  whiteSpace: 'pre',
  maxHeight: 420,
} as const;

/** Python code, highlighted. `label` names the block for assistive technology. */
export function PythonCode({ code, label }: { code: string; label: string }) {
  const tokens = useMemo(() => tokenize(code), [code]);
  // A named, focusable region: the block scrolls, and keyboard users must be able to reach it to scroll it.
  return (
    <pre style={codeBlockStyle} role="region" aria-label={label} tabIndex={0}>
      <code>
        {tokens.map((t, i) =>
          t.kind === 'plain' ? (
            t.text
          ) : (
            <span key={i} style={{ color: COLORS[t.kind], fontStyle: t.kind === 'com' ? 'italic' : undefined }}>
              {t.text}
            </span>
          ),
        )}
      </code>
    </pre>
  );
}
