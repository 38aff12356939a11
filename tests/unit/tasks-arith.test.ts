import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';
import {
  DEFAULT_FAMILIES,
  HELD_OUT_PERCENT,
  generate,
  makeProblem,
  problemId,
  splitOf,
  type Problem,
} from '../../workers/tasks/arith.ts';
import { FAMILIES, type Difficulty } from '../../contracts/recipe.ts';
import { mulberry32 } from '../../workers/engines/sampling.ts';

const PYTHON = ['/usr/bin/python3', 'python3'].find((p) => spawnSync(p, ['-c', 'pass']).status === 0) ?? null;

// An independent solver: reads the numbers back from the problem text and computes the answer with BigInt.
const fact = (n: bigint) => {
  let r = 1n;
  for (let i = 2n; i <= n; i++) r *= i;
  return r;
};
const perm = (n: bigint, k: bigint) => {
  let r = 1n;
  for (let i = 0n; i < k; i++) r *= n - i;
  return r;
};
const powmod = (b: bigint, e: bigint, m: bigint) => {
  let r = 1n;
  for (let i = 0n; i < e; i++) r = (r * b) % m;
  return r % m;
};
/** + - * over integers, * binding tighter (the products and sums of the problems). */
function evalExpr(expr: string): bigint {
  return expr.split(/(?=[+-])/).reduce((acc, term) => {
    const sign = term.startsWith('-') ? -1n : 1n;
    const body = term.replace(/^[+-]/, '');
    return acc + sign * body.split('*').reduce((p, f) => p * BigInt(f), 1n);
  }, 0n);
}
function solve(p: Problem): bigint {
  const t = p.problem;
  const n = (t.match(/\d+/g) ?? []).map(BigInt);
  let m: RegExpMatchArray | null;
  switch (p.family) {
    case 'product':
    case 'sum':
      m = /^Compute ([\d+*-]+)\.$/.exec(t);
      assert.ok(m, t);
      return evalExpr(m[1]!);
    case 'easy':
      m = /^What is (\d[+*-]\d)\?$/.exec(t);
      assert.ok(m, t);
      return evalExpr(m[1]!);
    case 'powmod':
      return powmod(n[0]!, n[1]!, n[2]!);
    case 'mod':
      return /\*/.test(t) ? (n[0]! * n[1]!) % n[2]! : n[0]! % n[1]!;
    case 'choose':
      return perm(n[1]!, n[0]!) / fact(n[0]!);
    case 'arrange':
      return perm(n[1]!, n[0]!);
    case 'factorial':
      return fact(n[0]!);
    case 'count': {
      // 1..N, multiples of a, then of b that are not of a (independent of the generator's inclusion–exclusion)
      const [N, a, b] = [Number(n[1]), Number(n[2]), Number(n[3])];
      let c = 0;
      for (let i = a; i <= N; i += a) c++;
      for (let i = b; i <= N; i += b) if (i % a !== 0) c++;
      return BigInt(c);
    }
    case 'word':
      if (/apples/.test(t)) return n[0]! * n[1]! - n[2]!;
      if (/eggs|km/.test(t)) return n[0]! * n[1]!;
      if (/coins/.test(t)) return n[0]! % n[1]!;
      if (/cards/.test(t)) return n[0]! + n[1]! * n[2]!;
      throw new Error(`unknown word template: ${t}`);
  }
}

test('every family, every difficulty: the answer is exact and a non-negative integer', () => {
  const rng = mulberry32(11);
  for (const f of FAMILIES) {
    for (const d of [1, 2, 3] as Difficulty[]) {
      for (let i = 0; i < 150; i++) {
        const p = makeProblem(f, rng, d);
        assert.match(p.answer, /^(0|[1-9]\d*)$/, `${p.problem} → ${p.answer}`);
        assert.equal(p.answer, solve(p).toString(), p.problem);
        assert.equal(p.family, f);
        assert.equal(p.difficulty, d);
        assert.equal(p.id, problemId(f, p.problem));
        assert.ok(p.problem.length <= 64, `problem text too long: ${p.problem}`);
      }
    }
  }
});

test('the code strings print the answer in real Python', { skip: PYTHON ? false : 'no python3' }, () => {
  const probs = [
    ...generate({ split: 'train', n: 400, seed: 3, families: DEFAULT_FAMILIES }),
    ...generate({ split: 'test', n: 100, seed: 4, families: DEFAULT_FAMILIES }),
    ...generate({ split: 'train', n: 30, seed: 5, families: ['easy'] }),
  ];
  const script = [
    'import io, json, sys, contextlib',
    'out = []',
    'for code in json.load(sys.stdin):',
    '    buf = io.StringIO()',
    '    with contextlib.redirect_stdout(buf):',
    '        exec(compile(code, "main.py", "exec"), {"__name__": "__main__"})',
    '    out.append(buf.getvalue())',
    'print(json.dumps(out))',
  ].join('\n');
  const r = spawnSync(PYTHON!, ['-c', script], { input: JSON.stringify(probs.map((p) => p.code)), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const outs = JSON.parse(r.stdout) as string[];
  probs.forEach((p, i) => assert.equal(outs[i], `${p.answer}\n`, `${p.code}`));
});

test('train and held-out splits are disjoint over 5000 problems each, and the held-out share is ~10%', () => {
  const train = generate({ split: 'train', n: 5000, seed: 1 });
  const heldOut = generate({ split: 'test', n: 5000, seed: 1 });
  const trainTexts = new Set(train.map((p) => p.problem));
  const trainIds = new Set(train.map((p) => p.id));
  assert.equal(trainTexts.size, 5000, 'unique within a call');
  for (const p of heldOut) {
    assert.ok(!trainTexts.has(p.problem), p.problem);
    assert.ok(!trainIds.has(p.id), p.id);
    assert.equal(splitOf(p.problem), 'test');
  }
  for (const p of train) assert.equal(splitOf(p.problem), 'train');
  // Other seeds, other mixes: still on the same side.
  for (const p of generate({ split: 'train', n: 2000, seed: 99, difficulty: 1 }))
    assert.ok(!heldOut.some((q) => q.problem === p.problem));
  const rng = mulberry32(5);
  let held = 0;
  const N = 4000;
  for (let i = 0; i < N; i++) if (splitOf(makeProblem('product', rng, 3).problem) === 'test') held++;
  assert.ok(Math.abs(held / N - HELD_OUT_PERCENT / 100) < 0.02, `held-out share ${held / N}`);
});

test('same seed same output; another seed another output', () => {
  const a = generate({ split: 'train', n: 300, seed: 42 });
  const b = generate({ split: 'train', n: 300, seed: 42 });
  const c = generate({ split: 'train', n: 300, seed: 43 });
  assert.deepEqual(a, b);
  assert.notDeepEqual(
    a.map((p) => p.problem),
    c.map((p) => p.problem),
  );
});

test('families and difficulty options are honoured; difficulty widens the numbers', () => {
  const ps = generate({ split: 'train', n: 200, seed: 2, families: ['choose', 'powmod'], difficulty: 1 });
  assert.ok(ps.every((p) => (p.family === 'choose' || p.family === 'powmod') && p.difficulty === 1));
  assert.ok(!generate({ split: 'train', n: 500, seed: 2 }).some((p) => p.family === 'easy'), 'easy is opt-in');
  const seen = new Set(generate({ split: 'train', n: 500, seed: 2 }).map((p) => p.family));
  assert.deepEqual([...seen].sort(), [...DEFAULT_FAMILIES].sort());
  const meanLen = (d: Difficulty) => {
    const xs = generate({ split: 'train', n: 300, seed: 8, families: ['product', 'sum', 'mod'], difficulty: d });
    return xs.reduce((a, p) => a + p.answer.length, 0) / xs.length;
  };
  assert.ok(meanLen(1) < meanLen(2) && meanLen(2) < meanLen(3));
});

test('easy problems are single-digit; asking for more distinct ones than exist throws', () => {
  for (const p of generate({ split: 'train', n: 100, seed: 3, families: ['easy'] }))
    assert.match(p.problem, /^What is \d[+*-]\d\?$/);
  assert.throws(() => generate({ split: 'test', n: 200, seed: 3, families: ['easy'] }), /distinct/);
  assert.equal(generate({ split: 'test', n: 200, seed: 3, families: ['easy'], unique: false }).length, 200);
});

test('ids are a stable hash of the text', () => {
  assert.equal(problemId('product', 'Compute 4821*397+66.'), problemId('product', 'Compute 4821*397+66.'));
  assert.notEqual(problemId('product', 'Compute 4821*397+66.'), problemId('product', 'Compute 4821*397+67.'));
  assert.match(problemId('sum', 'x'), /^sum-[0-9a-f]{16}$/);
  assert.ok(fs.existsSync(new URL('../../workers/tasks/arith.ts', import.meta.url)));
});
