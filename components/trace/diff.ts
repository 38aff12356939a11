/**
 * Line diff for comparing two trajectories (pure): an LCS diff, its side-by-side rows with long unchanged runs
 * folded, and the turn-by-turn alignment of two traces.
 */
import type { StoredTurn } from '../../contracts/trajectory.ts';

export type DiffOp =
  | { kind: 'same'; text: string; a: number; b: number }
  | { kind: 'del'; text: string; a: number }
  | { kind: 'add'; text: string; b: number };

/** Past this many DP cells (after trimming the common prefix and suffix) the middle is shown as replaced wholesale. */
export const MAX_CELLS = 4_000_000;

export const splitLines = (s: string): string[] => (s === '' ? [] : s.replace(/\r\n/g, '\n').split('\n'));

/**
 * Line diff of a and b by longest common subsequence; line numbers are 1-based. The common prefix and suffix are
 * taken off first: two samples of one prompt usually share the start, and that keeps the quadratic table small.
 */
export function diffLines(a: string, b: string): DiffOp[] {
  const A = splitLines(a),
    B = splitLines(b);
  let pre = 0;
  while (pre < A.length && pre < B.length && A[pre] === B[pre]) pre++;
  let suf = 0;
  while (suf < A.length - pre && suf < B.length - pre && A[A.length - 1 - suf] === B[B.length - 1 - suf]) suf++;
  const out: DiffOp[] = [];
  for (let i = 0; i < pre; i++) out.push({ kind: 'same', text: A[i], a: i + 1, b: i + 1 });
  out.push(...middle(A.slice(pre, A.length - suf), B.slice(pre, B.length - suf), pre));
  for (let k = suf; k > 0; k--) {
    const i = A.length - k,
      j = B.length - k;
    out.push({ kind: 'same', text: A[i], a: i + 1, b: j + 1 });
  }
  return out;
}

function middle(A: string[], B: string[], offset: number): DiffOp[] {
  const n = A.length,
    m = B.length;
  if (n * m > MAX_CELLS) {
    return [
      ...A.map((text, i): DiffOp => ({ kind: 'del', text, a: offset + i + 1 })),
      ...B.map((text, j): DiffOp => ({ kind: 'add', text, b: offset + j + 1 })),
    ];
  }
  // L[i][j] = LCS length of A[i..] and B[j..], flattened; walked forwards so deletions come before additions.
  const w = m + 1;
  const L = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      L[i * w + j] = A[i] === B[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    }
  }
  const out: DiffOp[] = [];
  let i = 0,
    j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && A[i] === B[j]) {
      out.push({ kind: 'same', text: A[i], a: offset + i + 1, b: offset + j + 1 });
      i++;
      j++;
    } else if (j >= m || (i < n && L[(i + 1) * w + j] >= L[i * w + j + 1])) {
      out.push({ kind: 'del', text: A[i], a: offset + i + 1 });
      i++;
    } else {
      out.push({ kind: 'add', text: B[j], b: offset + j + 1 });
      j++;
    }
  }
  return out;
}

export interface Cell {
  line: number;
  text: string;
}
export type DiffRow =
  | { kind: 'same'; left: Cell; right: Cell }
  | { kind: 'change'; left: Cell | null; right: Cell | null }
  | { kind: 'gap'; count: number };

/**
 * Side-by-side rows: a run of deletions and the additions after it are paired line by line (a changed line sits
 * next to its replacement); unchanged runs longer than 2×context are folded into one gap row.
 */
export function sideBySide(ops: DiffOp[], context = 3): DiffRow[] {
  const rows: DiffRow[] = [];
  let k = 0;
  while (k < ops.length) {
    const op = ops[k];
    if (op.kind === 'same') {
      const run: Extract<DiffOp, { kind: 'same' }>[] = [];
      while (k < ops.length && ops[k].kind === 'same') run.push(ops[k++] as Extract<DiffOp, { kind: 'same' }>);
      const first = rows.length === 0,
        last = k >= ops.length;
      // Keep context after a change and before the next one; the file's start and end need only one side.
      const head = first ? 0 : context,
        tail = last ? 0 : context;
      const toRow = (s: (typeof run)[number]): DiffRow => ({
        kind: 'same',
        left: { line: s.a, text: s.text },
        right: { line: s.b, text: s.text },
      });
      if (run.length > head + tail + 1) {
        rows.push(
          ...run.slice(0, head).map(toRow),
          { kind: 'gap', count: run.length - head - tail },
          ...run.slice(run.length - tail).map(toRow),
        );
      } else rows.push(...run.map(toRow));
      continue;
    }
    const dels: Cell[] = [],
      adds: Cell[] = [];
    while (k < ops.length && ops[k].kind === 'del') {
      const d = ops[k++] as Extract<DiffOp, { kind: 'del' }>;
      dels.push({ line: d.a, text: d.text });
    }
    while (k < ops.length && ops[k].kind === 'add') {
      const d = ops[k++] as Extract<DiffOp, { kind: 'add' }>;
      adds.push({ line: d.b, text: d.text });
    }
    for (let r = 0; r < Math.max(dels.length, adds.length); r++)
      rows.push({ kind: 'change', left: dels[r] ?? null, right: adds[r] ?? null });
  }
  return rows;
}

export const diffStats = (ops: DiffOp[]) => ({
  same: ops.filter((o) => o.kind === 'same').length,
  del: ops.filter((o) => o.kind === 'del').length,
  add: ops.filter((o) => o.kind === 'add').length,
});

/** The response as the model's context holds it: each turn's text, then the tool response appended after it. */
export function responseText(turns: StoredTurn[]): string {
  return turns.map((t) => t.text + (t.tool?.appended ? t.tool.appendedText : '')).join('');
}

export type TurnMatch = 'same' | 'same_code' | 'different' | 'left_only' | 'right_only';
export interface TurnPair {
  index: number;
  left: StoredTurn | null;
  right: StoredTurn | null;
  match: TurnMatch;
}

/** The code a turn ran (or tried to), null when it made no call. */
export const codeOf = (t: StoredTurn) =>
  t.parse.kind === 'call' ? t.parse.arguments.code : t.parse.kind === 'parse_error' ? t.parse.raw : null;

/**
 * Turns paired by index (turn k of one beside turn k of the other: both start from the same prompt, so turn k is
 * the k-th attempt in each), with how far they agree: identical text, the same tool code, or neither.
 */
export function alignTurns(a: StoredTurn[], b: StoredTurn[]): TurnPair[] {
  return Array.from({ length: Math.max(a.length, b.length) }, (_, index) => {
    const left = a[index] ?? null,
      right = b[index] ?? null;
    let match: TurnMatch;
    if (!right) match = 'left_only';
    else if (!left) match = 'right_only';
    else if (left.text === right.text) match = 'same';
    else if (codeOf(left) !== null && codeOf(left) === codeOf(right)) match = 'same_code';
    else match = 'different';
    return { index, left, right, match };
  });
}
