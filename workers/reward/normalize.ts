/**
 * Answer normalisation (pure). Canonical LaTeX-ish strings: spacing and display wrappers gone, \dfrac/\tfrac →
 * \frac, \left/\right gone, text wrappers unwrapped, trailing units dropped, degrees and percent recorded as flags,
 * thousands separators removed, trailing decimal zeros dropped, a leading "x =" dropped, a leading `\approx` and trailing
 * punctuation dropped, spaced mixed numbers (`4 4/9`) made fractions, lists joined with words or `;` made comma
 * lists, a leading article of a text answer dropped.
 *
 * Thousands separators vs tuples: an *unbracketed* `1,000` / `12,345,678` (groups of exactly three digits, no
 * space after a comma) is one number; `(1,000)` in brackets is a pair, and `1, 2` or `32, 349` (a comma followed by
 * a space, or a group not of three digits) is a list — the verifier reads a spaced list of three-digit groups
 * (`100, 000`) as one number only when the gold is a single integer (joinSpacedThousands). `1{,}000`, `1\,000` and
 * `1 000` are always numbers.
 *
 * Linear time on any input (model output is adversarial: a quadratic pattern on a 100 KB answer stalls the worker):
 * no pattern here may start a repeated run anywhere inside a run of the same characters (V8 retries every start,
 * so `\s+and` over 100,000 spaces is 10^10 steps), nor hold two adjacent quantifiers over the same characters
 * (`\s*,?\s+`). Runs are entered only at their first character (a negative lookbehind of the run's class), and
 * the trailing-punctuation and trailing-unit strips are scans from the end. tests/unit/reward-linear.test.ts.
 */
export interface Normalized {
  s: string;
  percent: boolean;
  degrees: boolean;
}

const TEXT_CMDS = 'text|textbf|textit|textrm|textnormal|mathrm|mathbf|mathit|mbox|textsf|mathsf|operatorname';

/** Unwrap `\cmd{…}` (balanced) everywhere, replacing it with fn(content). */
function replaceCmd(s: string, cmds: string, fn: (inner: string) => string): string {
  const re = new RegExp(`\\\\(?:${cmds})\\s*\\{`, 'g');
  for (let guard = 0; guard < 100; guard++) {
    re.lastIndex = 0;
    const m = re.exec(s);
    if (!m) break;
    let i = m.index + m[0].length,
      depth = 1;
    for (; i < s.length && depth > 0; i++) {
      if (s[i] === '\\') {
        i++;
        continue;
      }
      if (s[i] === '{') depth++;
      else if (s[i] === '}') depth--;
    }
    if (depth !== 0) break;
    s = s.slice(0, m.index) + fn(s.slice(m.index + m[0].length, i - 1)) + s.slice(i);
  }
  return s;
}

const UNIT_WORDS =
  /(?:\s|^)(?:dollars?|cents?|units?|square|sq|cubic|feet|foot|ft|inch(?:es)?|in|yards?|miles?|mph|km|kg|cm|mm|m|g|mg|l|ml|liters?|litres?|meters?|metres?|centimeters?|kilometers?|seconds?|secs?|s|minutes?|mins?|hours?|hrs?|h|days?|weeks?|months?|years?|degrees?|deg|percent|points?|people|students?|ways|cookies|apples|marbles|pounds?|lbs?|ounces?|oz|gallons?|euros?|coins?|boxes|pages?|books?|times|steps|games|cars|rooms|tickets|balls|cats|dogs|sheep|rows|numbers|integers|values|solutions|digits|pairs|triangles|squares|cubes|edges|faces|vertices|handshakes|trips)\b(?:\^\{?[23]\}?)?\.?/gi;

export function normalize(raw: string): Normalized {
  // One piece: a sequence of rewrites whose order matters (each expects what the ones before it left), read top down.
  let s = raw.trim();
  let percent = false,
    degrees = false;
  // unicode
  s = s
    .replace(/[−–—]/g, '-')
    .replace(/×/g, '\\times ')
    .replace(/·/g, '\\cdot ')
    .replace(/π/g, '\\pi ')
    .replace(/∞/g, '\\infty ')
    .replace(/√/g, '\\sqrt')
    .replace(/≤/g, '\\le ')
    .replace(/≥/g, '\\ge ')
    .replace(/°/g, '^\\circ')
    .replace(/∪/g, '\\cup ');
  // math-mode wrappers
  s = s
    .replace(/^\$+|(?<!\$)\$+$/g, '')
    .replace(/^\\\(|\\\)$/g, '')
    .replace(/^\\\[|\\\]$/g, '')
    .trim();
  s = s.replace(/\\\$|\$/g, ''); // `\$5`, stray dollars (currency)
  s = replaceCmd(s, 'boxed|fbox', (inner) => inner); // nested boxes
  s = s.replace(/\\(?:displaystyle|textstyle|scriptstyle)/g, '');
  // A command written with its backslash doubled, as answers copied out of a string literal are (`\\dfrac{1}{2}`,
  // in hendrycks/math's and MARIO's test suites): never a row break, which a command name does not follow.
  s = s.replace(
    /(?<!\\)\\\\(?=(?:[dt]?frac|sqrt|begin|end|pi|cdot|times|infty|text|mathrm|left|right)(?![a-zA-Z]))/g,
    '\\',
  );
  // `\approx 3.14` (an approximate answer is its value); `\frac{1}{3}.` (a sentence's full stop inside the math)
  s = s.replace(/^(?:\\approx|≈|\\sim)\s*/, '');
  // `\frac{\sqrt{3}}{3} \approx 0.577`: the exact value, then its decimal; `185\`: a stray backslash at the end
  // (found from the end, not by a regular expression that would scan the whole answer from every position).
  const approxAt = Math.max(s.lastIndexOf('\\approx'), s.lastIndexOf('≈'));
  if (approxAt > 0 && /^(?:\\approx|≈)\s*[-+]?\d*\.?\d+$/.test(s.slice(approxAt))) s = s.slice(0, approxAt).trimEnd();
  s = s.replace(/(?<!\\)\\$/, '');
  s = stripTrailingPunctuation(s).trim();
  s = s.replace(/\\[dtc]frac/g, '\\frac').replace(/\\dbinom|\\tbinom/g, '\\binom');
  s = s
    .replace(/\\left\s*\./g, '')
    .replace(/\\right\s*\./g, '')
    .replace(/\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big)(?![a-zA-Z])/g, '');
  // MATH writes thousands as `10,\!000` (a comma, then a negative thin space): a digit group whatever its size
  // (`1,\!00,\!000` too), never a list; before the thin space becomes a space and the comma a list separator.
  s = s.replace(/(\d)\s*,\s*\\!\s*(?=\d)/g, '$1');
  // Thin and control spaces, not the second backslash of a row break followed by a space (`0 \\ 1`).
  s = s.replace(/(?<!\\)\\[!,;:> ]|\\quad|\\qquad|~/g, ' ');
  s = s.replace(/\{,\}/g, '');
  // A comma followed by a space between digits separates list items: remembered before spaces are dropped.
  const spacedComma = /\d,\s+\d/.test(s);
  // degrees
  if (/\^\s*(?:\{\s*)?\\circ|\\degree|\\circ/.test(s)) {
    degrees = true;
    s = s.replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\degree|\\circ/g, '');
  }
  // percent
  if (/\\?%/.test(s)) {
    percent = true;
    s = s.replace(/\\?%/g, '').trim(); // `4 4/9 %`: no space left behind to hide the mixed number
  }
  // `28 percent`, `4 4/9pct`, `12.5 percentage`: the word is the sign (after a number; only at the end)
  const pw = /(?:percent(?:age)?|pct)$/i.exec(s);
  if (pw && /[\d}]$/.test(s.slice(0, pw.index).trimEnd())) {
    percent = true;
    s = s.slice(0, pw.index).trimEnd();
  }
  s = s.replace(/\\(?:text|mbox)\s*\{\s*(?:percent|degrees?)\s*\}/g, (w) => {
    if (/percent/.test(w)) percent = true;
    else degrees = true;
    return '';
  });
  // trailing unit in a text wrapper after a number-ish thing: `5\text{ cm}`, `12 \mbox{inches}^2`
  s = s.replace(
    new RegExp(
      `([\\d}a-zA-Z)])\\s*\\\\(?:${TEXT_CMDS})\\s*\\{\\s*[a-zA-Z][a-zA-Z\\s.]*\\}(?:\\s*\\^\\s*\\{?\\d\\}?)?\\s*$`,
    ),
    '$1',
  );
  // `\text{(B)}` etc: unwrap remaining text wrappers
  s = replaceCmd(s, TEXT_CMDS, (inner) => inner);
  // trailing plain unit words after a number: `5 dollars`, `12 cm^2`
  if (/\d/.test(s)) {
    const at = unitTailStart(s);
    const stripped = at >= 0 && s.slice(at).replace(UNIT_WORDS, '').trim() === '' ? s.slice(0, at) : s;
    if (/[\d}]\s*$/.test(stripped) && stripped.trim() !== '') s = stripped;
  }
  // infinity spellings
  s = s.replace(/\\infinity|\\inf(?![a-zA-Z])|(?<![a-zA-Z\\])(?:infinity|inf)(?![a-zA-Z])/gi, '\\infty');
  // `(11) 4/9` is a product, never a mixed number (compute-engine reads a number after `)` as one): made explicit
  s = s.replace(/\)\s*(?=\d)/g, ')\\cdot ');
  // `4 4/9` (a mixed number: four and four ninths; `1 000 4/9` with its whole part's digit groups spaced), before
  // spaces are dropped and it would read 44/9
  s = s.replace(/^([-+]?)(\d{1,3}(?: \d{3})+|\d+)\s+(\d+)\s*\/\s*(\d+)$/, (m, sign, w, n, d) =>
    Number(n) < Number(d) ? `${sign}\\frac{${Number(w.replace(/ /g, '')) * Number(d) + Number(n)}}{${d}}` : m,
  );
  // `1, 2 and 3`, `x=1 or x=2`, `1; 2`: a list
  if (/\d/.test(s))
    s = s
      .replace(/(?:(?<!\s)\s+)?,\s+(?:and|or)\s+|(?<!\s)\s+(?:and|or)\s+/g, ',')
      .replace(/(?:(?<!\s)\s+)?;\s*/g, ',');
  // a text answer's leading article: `the east`
  if (/^[a-zA-Z\s]+$/.test(s)) s = s.replace(/^(?:the|a|an)\s+(?=\S)/i, '');
  // whitespace: keep one space only where it separates a command from a letter (`\pi x`)
  s = s
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/(\\[a-zA-Z]+) (?=[a-zA-Z])/g, '$1\u0000')
    .replace(/ /g, '')
    .replace(/\u0000/g, ' ');
  // `\frac12`, `\frac1{2}`, `\sqrt2`
  s = s
    .replace(/\\frac(\d)(\d)/g, '\\frac{$1}{$2}')
    .replace(/\\frac(\d)\{/g, '\\frac{$1}{')
    .replace(/\\frac\{([^{}]*)\}(\d)/g, '\\frac{$1}{$2}');
  s = s.replace(/\\sqrt(\d+|[a-zA-Z])/g, '\\sqrt{$1}');
  // integer binomials: \binom{5}{2} → 10
  s = s.replace(/\\binom\{(\d{1,3})\}\{(\d{1,3})\}/g, (_m, n, k) => String(binom(Number(n), Number(k))));
  // single-character braces after ^ and _
  s = s.replace(/([\^_])\{(\w)\}/g, '$1$2');
  // `x = 3` → `3` (a single variable, possibly subscripted, on the left; one `=`; a value on the right — `y = 2x+1`
  // stays an equation, which the verifier compares as one, or by its right-hand side against a bare expression)
  const eq = /^([a-zA-Z](?:_\{?\w+\}?)?|\\[a-zA-Z]+)(?:=|\\eq)(?!=)(.+)$/.exec(s);
  if (
    eq &&
    !eq[2].includes('=') &&
    !/^\\(?:frac|sqrt|infty|pi)$/.test(eq[1]) &&
    !/[a-zA-Z]/.test(eq[2].replace(/\\[a-zA-Z]+/g, ''))
  )
    s = eq[2];
  // `1010_2`, `1010_{2}`: a numeral in base 2 is written by its digits (the digits must fit the base)
  s = s.replace(/^(\d+)_\{?(\d{1,2})\}?$/, (m, digits: string, base: string) =>
    [...digits].every((d) => Number(d) < Number(base)) ? digits : m,
  );
  // thousands separators (unbracketed, groups of three)
  if (!spacedComma && /^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$/.test(s)) s = s.replace(/,/g, '');
  // `1,00,000`, `1,00,00,000` (Indian grouping: pairs of digits, then three): one number as well
  if (!spacedComma && /^[-+]?\d{1,2}(,\d{2})+,\d{3}(\.\d+)?$/.test(s)) s = s.replace(/,/g, '');
  // trailing zeros: 3.50 → 3.5, 3.0 → 3, 3. → 3
  s = s
    .replace(/(?<!\d)(\d+)\.(\d*[1-9])?0+(?!\d)/g, (_m, a, b) => (b ? `${a}.${b}` : a))
    .replace(/(\d)\.(?!\d)/g, '$1');
  s = s.replace(/^\+(?=\d)/, '');
  return { s, percent, degrees };
}

/**
 * `\frac{1}{3}.` → `\frac{1}{3}`: the trailing run of `.,;:` and the spaces before it go (a sentence's full stop),
 * unless what is left would start the string or the run is a lone `.` after a digit (`3.` stays for the decimal
 * rule). A scan from the end (the pattern `(?<=\S)\s*[.,;:]+$` it replaces retried every start: quadratic).
 */
function stripTrailingPunctuation(s: string): string {
  let p = s.length;
  while (p > 0 && '.,;:'.includes(s[p - 1]!)) p--;
  if (p === s.length) return s;
  let w = p;
  while (w > 0 && /\s/.test(s[w - 1]!)) w--;
  // The leftmost start preceded by a non-space: the spaces' start, else the run's (or one into it after spaces).
  const start = w > 0 ? w : p + 1;
  if (start >= s.length) return s;
  const m = s.slice(start);
  return m === '.' && /\d\.$/.test(s) ? s : s.slice(0, start);
}

/**
 * Where a trailing run of words starts (` dollars`, ` cm^2`, ` square feet.`): each word is letters after spaces,
 * with an optional `.` and `^d` / `^{d}`; trailing spaces allowed. -1 when the text does not end in one. A scan
 * from the end, one word at a time (the pattern `(\s+[a-zA-Z]+…)+\s*$` it replaces was quadratic).
 */
function unitTailStart(s: string): number {
  const space = (c: string | undefined) => c !== undefined && /\s/.test(c);
  const letter = (c: string | undefined) => c !== undefined && /[a-zA-Z]/.test(c);
  let i = s.length;
  while (space(s[i - 1])) i--;
  let start = -1;
  for (;;) {
    let j = i;
    // `^d`, `^{d`, `^d}`, `^{d}`
    let k = j;
    if (s[k - 1] === '}') k--;
    if (k > 0 && /\d/.test(s[k - 1]!)) {
      k--;
      if (s[k - 1] === '{') k--;
      if (s[k - 1] === '^') j = k - 1;
    }
    if (s[j - 1] === '.') j--;
    let m = j;
    while (letter(s[m - 1])) m--;
    if (m === j) break;
    let w = m;
    while (space(s[w - 1])) w--;
    if (w === m) break;
    start = w;
    i = w;
  }
  return start;
}

/** A plain number (integer, decimal, a/b, \frac{a}{b}, scientific), or null. */
export function parseNumber(s: string): number | null {
  s = s.trim();
  let sign = 1;
  while (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -sign;
    s = s.slice(1);
  }
  if (s.startsWith('(') && s.endsWith(')') && !s.slice(1, -1).includes('('))
    return signed(sign, parseNumber(s.slice(1, -1)));
  const num = /^(\d+\.?\d*|\.\d+)$/;
  if (num.test(s)) return sign * Number(s);
  let m = /^(\d+\.?\d*|\.\d+)(?:e|E)([-+]?\d+)$/.exec(s);
  if (m) return sign * Number(`${m[1]}e${m[2]}`);
  m = /^(\d+\.?\d*|\.\d+)(?:\\times|\\cdot|\*)10\^(?:\{([-+]?\d+)\}|(\d))$/.exec(s);
  if (m) return sign * Number(`${m[1]}e${m[2] ?? m[3]}`);
  m = /^(-?\d+\.?\d*)\/(-?\d+\.?\d*)$/.exec(s);
  if (m) return frac(sign, Number(m[1]), Number(m[2]));
  m = /^\\frac\{(-?\d+\.?\d*)\}\{(-?\d+\.?\d*)\}$/.exec(s);
  if (m) return frac(sign, Number(m[1]), Number(m[2]));
  return null;
}
function signed(sign: number, v: number | null) {
  return v === null ? null : sign * v;
}
function frac(sign: number, a: number, b: number) {
  return b === 0 ? null : (sign * a) / b;
}

/** A number written exactly (integer, terminating decimal, a/b or \frac{a}{b} of those) as a reduced-free
 *  fraction of big integers, or null. Big integers stay exact at any size. */
export function parseExact(s: string): { n: bigint; d: bigint } | null {
  s = s.trim();
  let neg = false;
  while (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') neg = !neg;
    s = s.slice(1);
  }
  if (s.startsWith('(') && s.endsWith(')') && !s.slice(1, -1).includes('(')) s = s.slice(1, -1);
  const dec = (t: string): { n: bigint; d: bigint } | null => {
    let sign = 1n;
    if (t.startsWith('-')) {
      sign = -1n;
      t = t.slice(1);
    }
    const m = /^(\d*)(?:\.(\d*))?$/.exec(t);
    if (!m || (m[1] === '' && !m[2])) return null;
    const frac = m[2] ?? '';
    return { n: sign * BigInt((m[1] || '0') + frac), d: 10n ** BigInt(frac.length) };
  };
  let r = dec(s);
  if (!r) {
    const m = /^(-?[\d.]+)\/(-?[\d.]+)$/.exec(s) ?? /^\\frac\{(-?[\d.]+)\}\{(-?[\d.]+)\}$/.exec(s);
    const a = m && dec(m[1]),
      b = m && dec(m[2]);
    if (!a || !b || b.n === 0n) return null;
    r = { n: a.n * b.d, d: a.d * b.n };
  }
  if (r.d < 0n) r = { n: -r.n, d: -r.d };
  return neg ? { n: -r.n, d: r.d } : r;
}

/** An integer written as such (digits, optionally signed). */
export function isIntegerLiteral(s: string): boolean {
  return /^[-+]?\d+$/.test(s.trim());
}

export function exactEqual(a: { n: bigint; d: bigint }, b: { n: bigint; d: bigint }): boolean {
  return a.n * b.d === b.n * a.d;
}

/** `100, 000` read as 100000 when the gold is a single integer and every group has three digits; else unchanged. */
export function joinSpacedThousands(gold: string, pred: string): string {
  return isIntegerLiteral(gold) && /^[-+]?\d{3}(,\d{3})+$/.test(pred) ? pred.replace(/,/g, '') : pred;
}

/** The tolerance for numbers that are not both written as integers (integers compare exactly). */
export const NUMERIC_TOLERANCE = { rel: 1e-8, abs: 1e-9 };

export function numbersClose(a: number, b: number, rel = NUMERIC_TOLERANCE.rel, abs = NUMERIC_TOLERANCE.abs): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= Math.max(abs, rel * Math.max(Math.abs(a), Math.abs(b)));
}

// ---- structure ------------------------------------------------------------------------------------------------

export type Structured =
  | { kind: 'scalar'; s: string }
  | { kind: 'seq'; open: string; close: string; items: Structured[] } // tuples, intervals, ordered pairs
  | { kind: 'set'; items: Structured[] } // \{…\} and unbracketed lists: order does not matter
  | { kind: 'matrix'; rows: Structured[][] }
  | { kind: 'union'; items: Structured[] }
  | { kind: 'eq'; lhs: string; rhs: string };

/** Split at top-level occurrences of `sep` (outside (), [], {}, \{\}). */
export function splitTop(s: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0,
    start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      if (s.startsWith(sep, i) && depth === 0) {
        out.push(s.slice(start, i));
        start = i + sep.length;
        i += sep.length - 1;
        continue;
      }
      if (s[i + 1] === '{' || s[i + 1] === '}') {
        depth += s[i + 1] === '{' ? 1 : -1;
        i++;
        continue;
      }
      continue;
    }
    if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (depth === 0 && s.startsWith(sep, i)) {
      out.push(s.slice(start, i));
      start = i + sep.length;
      i += sep.length - 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

/** Whether the bracket at 0 closes exactly at the end (so `(a)(b)` is not wrapped). */
function wraps(s: string, openLen: number, closeLen: number): boolean {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      if (s[i + 1] === '{') depth++;
      else if (s[i + 1] === '}') depth--;
      i++;
      if (depth === 0 && i < s.length - closeLen) return false;
      continue;
    }
    if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    if (depth === 0 && i < s.length - 1) return false;
  }
  void openLen;
  return depth === 0;
}

export function structure(s: string): Structured {
  const mat = /^\\begin\{([pbBvV]?matrix|array)\}(?:\{[^}]*\})?([\s\S]*)\\end\{\1\}$/.exec(s);
  if (mat) {
    const rows = mat[2]
      .split(/\\\\/)
      .map((r) => r.trim())
      .filter((r) => r !== '')
      .map((r) => r.split('&').map((c) => structure(c.trim())));
    return { kind: 'matrix', rows };
  }
  const union = splitTop(s, '\\cup');
  if (union.length > 1) return { kind: 'union', items: union.map(structure) };
  if (s.startsWith('\\{') && s.endsWith('\\}') && wraps(s, 2, 2)) {
    const inner = s.slice(2, -2);
    return { kind: 'set', items: inner === '' ? [] : splitTop(inner, ',').map(structure) };
  }
  if (/^[([]/.test(s) && /[)\]]$/.test(s) && wraps(s, 1, 1)) {
    const inner = s.slice(1, -1);
    const parts = splitTop(inner, ',');
    if (parts.length > 1) return { kind: 'seq', open: s[0], close: s[s.length - 1], items: parts.map(structure) };
    if (s[0] === '(' && s.endsWith(')')) return structure(inner);
  }
  const parts = splitTop(s, ',');
  if (parts.length > 1) return { kind: 'set', items: parts.map((p) => structure(stripVar(p))) };
  const pm = splitTop(s, '\\pm');
  if (pm.length === 2 && pm[1] !== '') {
    const a = pm[0] === '' ? '0' : pm[0];
    return { kind: 'set', items: [structure(`${a}+${pm[1]}`), structure(`${a}-${pm[1]}`)] };
  }
  const eqs = splitTop(s, '=');
  if (eqs.length === 2 && eqs[0] !== '' && eqs[1] !== '') return { kind: 'eq', lhs: eqs[0], rhs: eqs[1] };
  return { kind: 'scalar', s };
}

/** An inequality in one variable (or `x \in I`) as the interval it describes (`-6\le x<-4` → `[-6,-4)`, `x>3` →
 *  `(3,\infty)`), or null. Applied to normalised text. */
export function asInterval(s: string): string | null {
  const member = /^([a-zA-Z])\\in\s?(.+)$/.exec(s);
  if (member) return member[2];
  const OP = '(<|>|\\\\l[et]q?|\\\\g[et]q?|\\\\leqslant|\\\\geqslant)\\s?';
  const less = (op: string) => op === '<' || op.startsWith('\\l');
  const strict = (op: string) => op === '<' || op === '>' || op === '\\lt' || op === '\\gt';
  const free = (bound: string, v: string) =>
    bound !== '' && !new RegExp(`(?<![\\\\a-zA-Z])${v}(?![a-zA-Z])`).test(bound.replace(/\\[a-zA-Z]+/g, ''));
  const two = new RegExp(`^(.+?)${OP}([a-zA-Z])${OP}(.+)$`).exec(s);
  if (two) {
    const [, a, op1, v, op2, b] = two;
    if (less(op1) !== less(op2) || !free(a, v) || !free(b, v)) return null;
    const [lo, loOp, hi, hiOp] = less(op1) ? [a, op1, b, op2] : [b, op2, a, op1];
    return `${strict(loOp) ? '(' : '['}${lo},${hi}${strict(hiOp) ? ')' : ']'}`;
  }
  let one = new RegExp(`^([a-zA-Z])${OP}(.+)$`).exec(s);
  let [v, op, bound] = one ? [one[1], one[2], one[3]] : ['', '', ''];
  if (!one) {
    one = new RegExp(`^(.+?)${OP}([a-zA-Z])$`).exec(s);
    if (!one) return null;
    [bound, op, v] = [one[1], one[2], one[3]];
    op = less(op) ? op.replace('<', '>').replace('\\l', '\\g') : op.replace('>', '<').replace('\\g', '\\l');
  }
  if (!free(bound, v)) return null;
  return less(op) ? `(-\\infty,${bound}${strict(op) ? ')' : ']'}` : `${strict(op) ? '(' : '['}${bound},\\infty)`;
}

/** A left-hand side that only names the answer (`x`, `(p,q)`, `f(x)`, `|AB|`, `Area`): no digits, no operators. */
export function isLabel(lhs: string): boolean {
  return lhs.length <= 40 && /[a-zA-Z]/.test(lhs) && !/[\d+\-*/^<>=]/.test(lhs);
}

/** `x=1` inside a list → `1`. */
function stripVar(p: string): string {
  const m = /^([a-zA-Z](?:_\{?\w+\}?)?)=(?!=)(.+)$/.exec(p);
  return m && !m[2].includes('=') ? m[2] : p;
}

function binom(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= Math.min(k, n - k); i++) r = (r * (n - i + 1)) / i;
  return Math.round(r);
}

/** A multiple-choice letter (`B`, `(B)`, `\textbf{(B)}` after unwrapping, `B)`), or null. */
export function choiceLetter(s: string, strict = false): string | null {
  // strict (the gold side): a lone lowercase letter is a variable or a constant (e), not a choice
  const m = (strict ? /^(?:\(([A-Ea-e])\)|([A-E]))$/ : /^\(?([A-Ea-e])\)?\.?$/).exec(s);
  if (strict) return m ? (m[1] ?? m[2]).toUpperCase() : null;
  return m ? m[1].toUpperCase() : null;
}

// ---- LaTeX → sympy-parsable text (for the sandbox last resort) ------------------------------------------------

export function toSympyText(s: string): string {
  let t = s;
  for (let k = 0; k < 20; k++) {
    const before = t;
    t = t
      .replace(/\\frac\{([^{}]*)\}\{([^{}]*)\}/g, '(($1)/($2))')
      .replace(/\\sqrt\[([^\]]*)\]\{([^{}]*)\}/g, '(($2)**(1/($1)))')
      .replace(/\\sqrt\{([^{}]*)\}/g, 'sqrt($1)')
      .replace(/\\binom\{([^{}]*)\}\{([^{}]*)\}/g, 'binomial($1,$2)')
      .replace(/\^\{([^{}]*)\}/g, '**($1)')
      .replace(/_\{([^{}]*)\}/g, '_$1');
    if (t === before) break;
  }
  t = t
    .replace(/\^/g, '**')
    .replace(/\\cdot|\\times/g, '*')
    .replace(/\\div/g, '/')
    .replace(/\\pi/g, 'pi')
    .replace(/\\infty/g, 'oo')
    .replace(/\\(sin|cos|tan|cot|sec|csc|arcsin|arccos|arctan|sinh|cosh|tanh|exp)(?![a-zA-Z])/g, '$1')
    .replace(/\\ln|\\log/g, 'log')
    .replace(/\\(alpha|beta|gamma|theta|phi)/g, '$1')
    .replace(/[{}]/g, (c) => (c === '{' ? '(' : ')'))
    .replace(/\\/g, '');
  return t;
}
