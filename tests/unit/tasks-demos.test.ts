import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { CharTokenizer, embeddedTokenizerSpec } from '../../workers/engines/tokenizer.ts';
import { mulberry32 } from '../../workers/engines/sampling.ts';
import { countAnswerBlocks, lastAnswerBlock, parseTurn } from '../../workers/rollout/parser.ts';
import {
  EMBEDDED_TEMPLATE_SETTINGS as S,
  IM_END,
  buildPrompt,
  stopStrings,
  toolResponseTurn,
} from '../../workers/rollout/template.ts';
import { DEFAULT_TOOL_FORMAT, formatToolResult } from '../../workers/sandbox/format.ts';
import { generate, makeProblem } from '../../workers/tasks/arith.ts';
import {
  asSandboxResult,
  breakCode,
  demoText,
  kindCounts,
  sftDataset,
  sftDemo,
  tokenizeDemo,
  type Demo,
  type Segment,
} from '../../workers/tasks/demos.ts';

const PYTHON = ['/usr/bin/python3', 'python3'].find((p) => spawnSync(p, ['-c', 'pass']).status === 0) ?? null;
const ZYGOTE = new URL('../../workers/sandbox/zygote.py', import.meta.url).pathname;
const tok = new CharTokenizer(embeddedTokenizerSpec());
const DS = sftDataset({ n: 1000, seed: 1, shares: { tool: 0.65, recover: 0.15, no_tool: 0.1, direct: 0.1 } });
type ToolSeg = Extract<Segment, { kind: 'tool' }>;
const toolSegs = (d: Demo) => d.segments.filter((s): s is ToolSeg => s.kind === 'tool');

/** Index just past the earliest stop string in the text (where the engine would cut), or -1. */
function engineCut(text: string): number {
  let cut = -1;
  for (const s of stopStrings(S)) {
    const at = text.indexOf(s);
    if (at >= 0 && (cut < 0 || at + s.length < cut)) cut = at + s.length;
  }
  return cut;
}

test('demos have the rollout structure: model and tool segments alternate, calls parse, the answer is boxed', () => {
  for (const d of DS) {
    assert.equal(d.prompt, buildPrompt(d.problem.problem, S));
    assert.ok(d.prompt.endsWith('<|im_start|>assistant\n<reason>'));
    const segs = d.segments;
    segs.forEach((s, i) => assert.equal(s.kind, i % 2 === 0 ? 'model' : 'tool'));
    assert.equal(segs.length, d.kind === 'no_tool' || d.kind === 'direct' ? 1 : d.kind === 'tool' ? 3 : 5);
    for (const [i, s] of segs.entries()) {
      if (s.kind !== 'model') continue;
      // The engine stops at the first stop string and keeps it: each model segment ends exactly there.
      assert.equal(engineCut(s.text), s.text.length, s.text);
      const r = parseTurn(s.text, S);
      if (i === segs.length - 1) {
        assert.equal(r.kind, 'none');
        assert.ok(s.text.endsWith(IM_END));
        assert.equal(countAnswerBlocks(s.text, S), 1);
        assert.equal(lastAnswerBlock(s.text, S), `\\boxed{${d.problem.answer}}`);
      } else {
        assert.equal(r.kind, 'call', s.text);
        assert.ok(r.kind === 'call');
        const next = segs[i + 1] as ToolSeg;
        assert.equal(r.name, 'python');
        assert.deepEqual(r.arguments, next.call);
        assert.ok(s.text.endsWith('</tool_call>'));
      }
    }
    // Tool segments are exactly what the rollout appends for the formatted result.
    for (const t of toolSegs(d)) {
      assert.equal(t.toolText, formatToolResult(asSandboxResult(t.expected), DEFAULT_TOOL_FORMAT));
      assert.equal(t.text, toolResponseTurn(t.toolText, S));
    }
    const calls = toolSegs(d);
    if (d.kind === 'tool' || d.kind === 'recover') {
      const last = calls[calls.length - 1]!;
      assert.equal(last.call.code, d.problem.code);
      assert.deepEqual(last.expected, { status: 'ok', stdout: `${d.problem.answer}\n`, stderr: '', errorType: null });
    }
    if (d.kind === 'recover') {
      assert.equal(calls[0]!.expected.status, 'error');
      assert.ok(calls[0]!.toolText.startsWith('tool call failed\n'));
      assert.notEqual(calls[0]!.call.code, d.problem.code);
    }
    if (d.kind === 'no_tool') assert.equal(d.problem.family, 'easy');
    else assert.notEqual(d.problem.family, 'easy');
  }
});

test('the demo tool texts are what the real sandbox zygote returns (failing and fixed calls)', {
  skip: PYTHON ? false : 'no python3',
}, () => {
  const calls = new Map<string, ToolSeg['expected']>();
  for (const d of DS.filter((x) => x.kind === 'recover').concat(DS.filter((x) => x.kind === 'tool').slice(0, 100))) {
    for (const t of toolSegs(d)) calls.set(t.call.code, t.expected);
  }
  // Every mistake on a program with an import, forced.
  const p = makeProblem('choose', mulberry32(3), 2);
  for (const e of ['name_typo', 'missing_import', 'missing_paren'] as const) {
    const b = breakCode(p.code, e);
    calls.set(b.code, b.expected);
  }
  const codes = [...calls.keys()];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tasks-zygote-'));
  try {
    // The zygote outside bubblewrap (unsafe mode: it works in a private temp folder under TMPDIR), no heavy preloads.
    // Each call's wall-clock limit is one no call here means to reach (they take milliseconds): generous, so that a
    // call stalled on a busy machine is not answered `timeout` instead of its output.
    const input = codes.map((code, id) => JSON.stringify({ id, code, input: '', timeout: 60 })).join('\n') + '\n';
    const r = spawnSync(PYTHON!, [ZYGOTE, ''], {
      input,
      encoding: 'utf8',
      env: { ...process.env, TMPDIR: tmp },
      timeout: 120_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines[0]!.ready, true);
    const got = new Map(lines.slice(1).map((l) => [l.id as number, l]));
    codes.forEach((code, id) => {
      const g = got.get(id)!;
      assert.ok(g, `no response for ${code}`);
      assert.deepEqual(
        { status: g.status, stdout: g.stdout, stderr: g.stderr, errorType: g.error_type },
        calls.get(code),
        code,
      );
    });
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('loss mask: 1 exactly on model tokens; segment-wise tokenisation equals tokenising the whole text', () => {
  for (const d of DS) {
    const t = tokenizeDemo(d, tok);
    assert.equal(t.ids.length, t.lossMask.length);
    assert.deepEqual(t.ids, tok.encode(demoText(d)), 'segment boundaries fall between whole tokens');
    assert.ok(!t.ids.includes(tok.unkId), 'no unknown characters');
    assert.equal(t.promptTokens, tok.encode(d.prompt).length);
    assert.ok(t.lossMask.slice(0, t.promptTokens).every((m) => m === 0));
    const model = t.ids.filter((_, i) => t.lossMask[i] === 1);
    const rest = t.ids.filter((_, i) => t.lossMask[i] === 0);
    assert.equal(
      tok.decode(model),
      d.segments
        .filter((s) => s.kind === 'model')
        .map((s) => s.text)
        .join(''),
    );
    assert.equal(
      tok.decode(rest),
      d.prompt +
        d.segments
          .filter((s) => s.kind === 'tool')
          .map((s) => s.text)
          .join(''),
    );
    // The last token trained on is <|im_end|> (the model learns to stop).
    assert.equal(t.lossMask[t.lossMask.length - 1], 1);
    assert.equal(tok.decode([t.ids[t.ids.length - 1]!]), IM_END);
  }
});

test('token lengths over 1000 demos stay within the embedded context', () => {
  const max: Record<string, number> = {};
  for (const d of DS) max[d.kind] = Math.max(max[d.kind] ?? 0, tokenizeDemo(d, tok).ids.length);
  assert.ok(max.tool! <= 260, `tool max ${max.tool}`);
  // A failed call echoes its line in the traceback: the longest recover demos can pass 512 tokens. The SFT stage
  // leaves those out and logs how many; here they are rare.
  const over = DS.filter((d) => tokenizeDemo(d, tok).ids.length > 512).length;
  assert.ok(over <= 2, `${over} demos over 512 tokens`);
  assert.ok(max.recover! <= 600, `recover max ${max.recover}`);
  assert.ok(max.no_tool! <= 90, `no_tool max ${max.no_tool}`);
  assert.ok(max.direct! <= 260, `direct max ${max.direct}`);
});

test('shares are respected (exact counts), configurable, and the recover mistakes all occur', () => {
  const count = (ds: Demo[]) =>
    Object.fromEntries(
      (['tool', 'recover', 'no_tool', 'direct'] as const).map((k) => [k, ds.filter((d) => d.kind === k).length]),
    );
  assert.deepEqual(count(DS), { tool: 650, recover: 150, no_tool: 100, direct: 100 });
  assert.deepEqual(kindCounts(7), { tool: 5, recover: 1, no_tool: 1, direct: 0 });
  assert.deepEqual(count(sftDataset({ n: 40, seed: 2, shares: { tool: 1, recover: 0, no_tool: 0 } })), {
    tool: 40,
    recover: 0,
    no_tool: 0,
    direct: 0,
  });
  assert.deepEqual(count(sftDataset({ n: 40, seed: 2, shares: { tool: 2, recover: 1, no_tool: 1 } })), {
    tool: 20,
    recover: 10,
    no_tool: 10,
    direct: 0,
  });
  assert.deepEqual(count(sftDataset({ n: 40, seed: 2, shares: { tool: 1, recover: 1, no_tool: 1, direct: 1 } })), {
    tool: 10,
    recover: 10,
    no_tool: 10,
    direct: 10,
  });
  // Without direct demos the data set is what it was before they existed (cached SFT fixtures stay valid).
  assert.deepEqual(
    sftDataset({ n: 60, seed: 4, shares: { direct: 0 } }).map(demoText),
    sftDataset({ n: 60, seed: 4 }).map(demoText),
  );
  const errs = new Set(DS.map((d) => d.error).filter(Boolean));
  assert.deepEqual([...errs].sort(), ['missing_import', 'missing_paren', 'name_typo']);
  // Kinds are interleaved, not in blocks.
  assert.ok(DS.slice(0, 100).some((d) => d.kind !== 'tool'));
});

test('deterministic in the seed; train-split problems only', () => {
  assert.deepEqual(sftDataset({ n: 200, seed: 9 }), sftDataset({ n: 200, seed: 9 }));
  assert.notDeepEqual(sftDataset({ n: 50, seed: 9 }).map(demoText), sftDataset({ n: 50, seed: 10 }).map(demoText));
  const heldOut = new Set(generate({ split: 'test', n: 3000, seed: 1 }).map((p) => p.problem));
  assert.ok(DS.every((d) => !heldOut.has(d.problem.problem)));
});

test('direct demos answer a tool-worthy problem with its right answer and no call', () => {
  const hard = makeProblem('product', mulberry32(1), 2);
  const d = sftDemo(hard, 'direct', mulberry32(1));
  assert.equal(d.segments.length, 1);
  const text = d.segments[0]!.text;
  assert.equal(parseTurn(text, S).kind, 'none');
  assert.equal(lastAnswerBlock(text, S), `\\boxed{${hard.answer}}`);
  assert.ok(!text.includes('<tool_call>'));
  assert.throws(() => sftDemo(makeProblem('easy', mulberry32(1)), 'direct', mulberry32(1)), /tool-worthy/);
  for (const x of DS.filter((x) => x.kind === 'direct')) assert.notEqual(x.problem.family, 'easy');
});

test('no_tool demos only on easy problems; the failing code differs as intended', () => {
  const hard = makeProblem('product', mulberry32(1), 2);
  assert.throws(() => sftDemo(hard, 'no_tool', mulberry32(1)), /easy/);
  const easy = makeProblem('easy', mulberry32(1));
  const d = sftDemo(easy, 'no_tool', mulberry32(1));
  assert.equal(d.segments.length, 1);
  assert.equal(breakCode('print(1+2)', 'name_typo').code, 'prnt(1+2)');
  assert.equal(breakCode('print(1+2)', 'missing_paren').code, 'print(1+2');
  assert.equal(breakCode('import math\nprint(math.comb(5,2))', 'missing_import').code, 'print(math.comb(5,2))');
  assert.throws(() => breakCode('print(1+2)', 'missing_import'));
});
