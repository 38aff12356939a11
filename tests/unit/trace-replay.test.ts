import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildTimeline,
  formatClock,
  formatMs,
  parseSpeed,
  parseT,
  stateAt,
  stepBack,
  stepForward,
  turnBoundaries,
} from '../../components/trace/replay.ts';
import { alignTurns, diffLines, MAX_CELLS, responseText, sideBySide, splitLines } from '../../components/trace/diff.ts';
import { tokenize } from '../../components/trace/highlight.tsx';
import type { ToolCallRecord, StoredTrajectoryContent, StoredTurn } from '../../contracts/trajectory.ts';

const T0 = 1_700_000_000_000;

function tool(queued: number, started: number, finished: number, over: Partial<ToolCallRecord> = {}): ToolCallRecord {
  return {
    name: 'python',
    arguments: { code: 'print(1)', input: '' },
    status: 'ok',
    text: '1',
    appendedText: '<tool_response>1</tool_response>',
    tokens: 5,
    appended: true,
    queuedAt: T0 + queued,
    startedAt: T0 + started,
    finishedAt: T0 + finished,
    durationMs: finished - started,
    queueMs: started - queued,
    stdout: '1\n',
    stderr: '',
    exitCode: 0,
    errorType: null,
    ...over,
  };
}

function turn(
  index: number,
  text: string,
  genStart: number,
  genEnd: number,
  t: ToolCallRecord | null,
  code = 'print(1)',
): StoredTurn {
  return {
    index,
    text,
    tokens: text.length,
    engineFinish: 'stop',
    tool: t,
    parse: t ? { kind: 'call', name: 'python', arguments: { code, input: '' }, raw: text } : { kind: 'none' },
    genStartedAt: T0 + genStart,
    genFinishedAt: T0 + genEnd,
  };
}

/** Turn 0: generates 0–1000, tool queued 1000, runs 1100–1500. Turn 1: generates 1600–2600, no tool. Ends 2700. */
const content: StoredTrajectoryContent = {
  prompt: 'What is 1?',
  finishReason: 'no_tool_call',
  finishedAt: T0 + 2700,
  error: null,
  modelTokens: 20,
  turns: [turn(0, 'abcdefghij', 0, 1000, tool(1000, 1100, 1500)), turn(1, '0123456789', 1600, 2600, null)],
  verdict: { correct: true, method: 'exact', extracted: '1', reason: 'matches' },
};

test('buildTimeline: events from the recorded timestamps, offsets from the first generation', () => {
  const tl = buildTimeline(content);
  assert.equal(tl.origin, T0);
  assert.equal(tl.duration, 2700);
  assert.deepEqual(tl.events, [
    { at: 0, kind: 'gen_start', turn: 0 },
    { at: 1000, kind: 'gen_end', turn: 0 },
    { at: 1000, kind: 'tool_start', turn: 0 },
    { at: 1500, kind: 'tool_end', turn: 0 },
    { at: 1600, kind: 'gen_start', turn: 1 },
    { at: 2600, kind: 'gen_end', turn: 1 },
  ]);
});

test('buildTimeline: out-of-order clocks are clamped so events never go backwards', () => {
  const skewed: StoredTrajectoryContent = {
    ...content,
    finishedAt: null,
    turns: [turn(0, 'x', 0, 1000, tool(990, 980, 1200)), turn(1, 'y', 1150, 1300, null)],
  };
  const tl = buildTimeline(skewed);
  const ats = tl.events.map((e) => e.at);
  assert.deepEqual(
    ats,
    [...ats].sort((a, b) => a - b),
  );
  assert.deepEqual(tl.spans[0], {
    turn: 0,
    genStart: 0,
    genEnd: 1000,
    toolQueued: 1000,
    toolStart: 1000,
    toolEnd: 1200,
    textLength: 1,
  });
  assert.equal(tl.spans[1].genStart, 1200);
  assert.equal(tl.duration, 1300, 'no finishedAt: the last event ends the timeline');
});

test('buildTimeline: no turns is an empty timeline', () => {
  const tl = buildTimeline({ turns: [], finishedAt: T0 });
  assert.deepEqual(tl, { origin: null, duration: 0, spans: [], events: [] });
  const s = stateAt(tl, 500);
  assert.deepEqual(s, { t: 0, turns: [], current: -1, toolRunning: null, finished: true });
  assert.equal(stepForward(tl, 0), 0);
  assert.equal(stepBack(tl, 0), 0);
});

test('stateAt: text revealed in proportion to the generation time, tool phases, end', () => {
  const tl = buildTimeline(content);
  let s = stateAt(tl, 0);
  assert.deepEqual(s.turns, [{ turn: 0, shownChars: 0, generating: true, tool: 'pending' }]);
  assert.equal(s.current, 0);

  s = stateAt(tl, 300);
  assert.equal(s.turns[0].shownChars, 3);
  assert.equal(s.turns[0].generating, true);
  assert.equal(s.toolRunning, null);

  s = stateAt(tl, 1050);
  assert.deepEqual(s.turns, [{ turn: 0, shownChars: 10, generating: false, tool: 'queued' }]);
  assert.equal(s.toolRunning, 0);

  s = stateAt(tl, 1200);
  assert.equal(s.turns[0].tool, 'running');
  assert.equal(s.toolRunning, 0);

  s = stateAt(tl, 1550);
  assert.equal(s.turns[0].tool, 'done');
  assert.equal(s.turns.length, 1, 'turn 1 has not started');
  assert.equal(s.toolRunning, null);

  s = stateAt(tl, 2100);
  assert.equal(s.turns.length, 2);
  assert.deepEqual(s.turns[1], { turn: 1, shownChars: 5, generating: true, tool: 'none' });
  assert.equal(s.current, 1);
  assert.equal(s.finished, false);

  s = stateAt(tl, 99_999);
  assert.equal(s.t, 2700, 'clamped to the duration');
  assert.equal(s.finished, true);
  assert.ok(s.turns.every((v) => !v.generating && v.shownChars === 10));
  assert.equal(stateAt(tl, -5).t, 0);
  assert.equal(stateAt(tl, Number.NaN).t, 0);
});

test('stateAt: a zero-length call (parse error) is done as soon as it is queued', () => {
  const pe = tool(500, 500, 500, { status: 'parse_error', durationMs: null, queueMs: null });
  const tl = buildTimeline({ turns: [turn(0, 'bad', 0, 500, pe)], finishedAt: T0 + 500 });
  assert.equal(stateAt(tl, 500).turns[0].tool, 'done');
  assert.equal(stateAt(tl, 499).turns[0].tool, 'pending');
});

test('step: forward and back land on turn boundaries (start, each turn complete, end)', () => {
  const tl = buildTimeline(content);
  assert.deepEqual(turnBoundaries(tl), [0, 1500, 2600, 2700]);
  assert.equal(stepForward(tl, 0), 1500);
  assert.equal(stepForward(tl, 700), 1500);
  assert.equal(stepForward(tl, 1500), 2600);
  assert.equal(stepForward(tl, 2600), 2700);
  assert.equal(stepForward(tl, 2700), 2700, 'stays at the end');
  assert.equal(stepBack(tl, 2700), 2600);
  assert.equal(stepBack(tl, 2000), 1500);
  assert.equal(stepBack(tl, 1500), 0);
  assert.equal(stepBack(tl, 0), 0, 'stays at the start');
  // Past a shorter timeline's end (comparing two), back goes to its end.
  assert.equal(stepBack(tl, 5000), 2700);
});

test('URL parsing and formatting', () => {
  assert.equal(parseT(null), null);
  assert.equal(parseT(''), null);
  assert.equal(parseT('abc'), null);
  assert.equal(parseT('-3'), null);
  assert.equal(parseT('1234.6'), 1235);
  assert.equal(parseSpeed('4'), 4);
  assert.equal(parseSpeed('3'), 1);
  assert.equal(parseSpeed(null), 1);
  assert.equal(formatMs(null), '—');
  assert.equal(formatMs(850), '850 ms');
  assert.equal(formatMs(2340), '2.3 s');
  assert.equal(formatMs(65_000), '1m 05s');
  assert.equal(formatClock(65_432), '1:05.4');
});

test('diffLines: LCS line diff with 1-based line numbers', () => {
  assert.deepEqual(diffLines('', ''), []);
  assert.deepEqual(diffLines('a\nb', 'a\nb'), [
    { kind: 'same', text: 'a', a: 1, b: 1 },
    { kind: 'same', text: 'b', a: 2, b: 2 },
  ]);
  assert.deepEqual(diffLines('a\nb\nc', 'a\nx\nc'), [
    { kind: 'same', text: 'a', a: 1, b: 1 },
    { kind: 'del', text: 'b', a: 2 },
    { kind: 'add', text: 'x', b: 2 },
    { kind: 'same', text: 'c', a: 3, b: 3 },
  ]);
  assert.deepEqual(diffLines('', 'new'), [{ kind: 'add', text: 'new', b: 1 }]);
  assert.deepEqual(diffLines('old', ''), [{ kind: 'del', text: 'old', a: 1 }]);
  // A common subsequence in the middle is kept, not replaced wholesale.
  const ops = diffLines('x\na\nb\nc\ny', 'p\na\nq\nc\nr');
  assert.deepEqual(
    ops.filter((o) => o.kind === 'same').map((o) => o.text),
    ['a', 'c'],
  );
  assert.equal(splitLines('a\r\nb').length, 2);
});

test('diffLines: every line of both sides appears once, in order', () => {
  const a = 'def f(x):\n    return x\n\nprint(f(2))\n# done',
    b = 'import math\ndef f(x):\n    return x * 2\n\nprint(f(2))';
  const ops = diffLines(a, b);
  assert.deepEqual(
    ops.filter((o) => o.kind !== 'add').map((o) => o.text),
    splitLines(a),
  );
  assert.deepEqual(
    ops.filter((o) => o.kind !== 'del').map((o) => o.text),
    splitLines(b),
  );
});

test('diffLines: past MAX_CELLS the middle is replaced wholesale (prefix and suffix still matched)', () => {
  const n = Math.ceil(Math.sqrt(MAX_CELLS)) + 10;
  const A = ['head', ...Array.from({ length: n }, (_, i) => `a${i}`), 'tail'].join('\n');
  const B = ['head', ...Array.from({ length: n }, (_, i) => `b${i}`), 'tail'].join('\n');
  const ops = diffLines(A, B);
  assert.equal(ops[0].kind, 'same');
  assert.equal(ops[ops.length - 1].kind, 'same');
  assert.equal(ops.filter((o) => o.kind === 'del').length, n);
  assert.equal(ops.filter((o) => o.kind === 'add').length, n);
});

test('sideBySide: changes paired, long unchanged runs folded with context', () => {
  const a = Array.from({ length: 20 }, (_, i) => `l${i}`);
  const b = [...a];
  b[10] = 'changed';
  b.splice(15, 0, 'inserted');
  const rows = sideBySide(diffLines(a.join('\n'), b.join('\n')), 2);
  const kinds = rows.map((r) => r.kind);
  assert.equal(kinds[0], 'gap', 'the unchanged start folds down to the context before the first change');
  assert.deepEqual(rows[0], { kind: 'gap', count: 8 });
  const change = rows.find((r) => r.kind === 'change' && r.left && r.right);
  assert.deepEqual(change, { kind: 'change', left: { line: 11, text: 'l10' }, right: { line: 11, text: 'changed' } });
  const insert = rows.find((r) => r.kind === 'change' && !r.left);
  assert.deepEqual(insert, { kind: 'change', left: null, right: { line: 16, text: 'inserted' } });
  assert.equal(kinds[kinds.length - 1], 'gap', 'the unchanged end folds after the context');
  // Short runs between changes stay whole.
  assert.ok(!rows.some((r, i) => r.kind === 'gap' && i > 0 && i < rows.length - 1));
});

test('responseText and alignTurns', () => {
  assert.equal(responseText(content.turns), 'abcdefghij<tool_response>1</tool_response>0123456789');
  const other = [
    turn(0, 'different words', 0, 10, tool(10, 10, 20)),
    turn(1, '0123456789', 30, 40, null),
    turn(2, 'extra', 50, 60, null),
  ];
  const pairs = alignTurns(content.turns, other);
  assert.deepEqual(
    pairs.map((p) => p.match),
    ['same_code', 'same', 'right_only'],
  );
  const changed = [turn(0, 'zzz', 0, 10, tool(10, 10, 20), 'print(2)')];
  assert.deepEqual(
    alignTurns(content.turns, changed).map((p) => p.match),
    ['different', 'left_only'],
  );
});

test('tokenize: keywords, builtins, strings, numbers, comments; the text is preserved', () => {
  const code =
    'import math  # sq\ndef f(x):\n    s = \'a # not comment\'\n    return print(x ** 2.5e3, """multi\nline""")\n';
  const toks = tokenize(code);
  assert.equal(toks.map((t) => t.text).join(''), code);
  const of = (kind: string) => toks.filter((t) => t.kind === kind).map((t) => t.text);
  assert.deepEqual(of('kw'), ['import', 'def', 'return']);
  assert.deepEqual(of('builtin'), ['print']);
  assert.deepEqual(of('com'), ['# sq']);
  assert.deepEqual(of('str'), ["'a # not comment'", '"""multi\nline"""']);
  assert.deepEqual(of('num'), ['2.5e3']);
  assert.deepEqual(
    tokenize('n = 0x1F + 10')
      .filter((t) => t.kind === 'num')
      .map((t) => t.text),
    ['0x1F', '10'],
  );
  assert.deepEqual(tokenize("x = 'open"), [
    { kind: 'plain', text: 'x = ' },
    { kind: 'str', text: "'open" },
  ]);
  assert.deepEqual(tokenize(''), []);
});
