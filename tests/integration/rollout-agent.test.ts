// @no-database: runs once, not once per database.
// The agent loop on real parts: an SFT'd embedded model (trained on first use and cached in the machine build cache by
// tests/helpers/embedded-sft.ts), the embedded ONNX engine, the real sandbox pool and the verifier. Two fault
// injectors, named as such, produce what the real parts will not on demand: a slow tool call and a malformed call.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { OnnxEngine } from '../../workers/engines/onnx-engine.ts';
import type { GenerateChunk, GenerateRequest, GenerateResult, InferenceEngine } from '../../workers/engines/types.ts';
import { Verifier } from '../../workers/reward/verifier.ts';
import { runRollouts, type AgentOptions } from '../../workers/rollout/agent.ts';
import { LiveBoard } from '../../workers/rollout/live.ts';
import { scoreTrajectory } from '../../workers/rollout/score.ts';
import { EMBEDDED_TEMPLATE_SETTINGS } from '../../workers/rollout/template.ts';
import { responseText, toolStats, trajectoryMask, usedTokens } from '../../workers/rollout/trajectory.ts';
import type { Trajectory } from '../../contracts/trajectory.ts';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import type { RunOptions, Sandbox, SandboxCall, SandboxResult } from '../../workers/sandbox/types.ts';
import { generate } from '../../workers/tasks/arith.ts';
import { ensureEmbeddedSftModel } from '../helpers/embedded-sft.ts';

let engine: OnnxEngine;
let sandbox: SandboxPool;
let verifier: Verifier;
const problems = generate({ split: 'test', n: 8, seed: 11 });
const reqs = (seed?: number) =>
  problems.map((p, i) => ({ id: `p${i}`, problem: p.problem, seed: seed === undefined ? undefined : seed + i }));

before(async () => {
  const dir = await ensureEmbeddedSftModel({ log: (m) => console.log(`[sft] ${m}`) });
  engine = await OnnxEngine.load(dir, { maxBatch: 8 });
  sandbox = await SandboxPool.start({ size: 2, log: () => {} });
  verifier = new Verifier();
});
after(async () => {
  await engine?.close();
  await sandbox?.close();
  await verifier?.close();
});

const opts = (o: Partial<AgentOptions> = {}): AgentOptions => ({
  engine,
  sandbox,
  template: EMBEDDED_TEMPLATE_SETTINGS,
  limits: { maxResponseTokens: 400, maxTurns: 5 },
  temperature: 0,
  ...o,
});
const texts = (ts: Trajectory[]) => ts.map((t) => responseText(t));

/**
 * Fault injector: holds the first call it receives until `release()` (or `holdMs`, when given), then runs it (and
 * every other call, at once) on the real sandbox. Held on a condition rather than a clock, the async test does not
 * depend on how fast a busy machine generates.
 */
class HeldSandbox implements Sandbox {
  slowCode: string | null = null;
  heldAt = 0;
  releasedAt = 0;
  releasedBy: 'release' | 'clock' | null = null;
  private open: (() => void) | null = null;
  constructor(
    private inner: Sandbox,
    private holdMs: number,
  ) {}
  release() {
    this.open?.();
  }
  async run(c: SandboxCall, o?: RunOptions): Promise<SandboxResult> {
    if (this.slowCode === null) {
      this.slowCode = c.code;
      this.heldAt = Date.now();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.releasedBy ??= 'clock';
          resolve();
        }, this.holdMs);
        this.open = () => {
          clearTimeout(timer);
          this.releasedBy ??= 'release';
          resolve();
        };
      });
      this.releasedAt = Date.now();
    }
    return this.inner.run(c, o);
  }
  runBatch(cs: SandboxCall[], o?: RunOptions) {
    return Promise.all(cs.map((c) => this.run(c, o)));
  }
  close() {
    return Promise.resolve();
  }
}

/** Fault injector: the real engine, but the first generated turn of each request has its JSON broken. */
class CorruptingEngine implements InferenceEngine {
  readonly id = 'corrupting';
  private seen = new Set<string>();
  constructor(private inner: InferenceEngine) {}
  async generate(req: GenerateRequest, onChunk?: (c: GenerateChunk) => void): Promise<GenerateResult> {
    const r = await this.inner.generate(req, onChunk);
    const key = req.prompt.slice(0, 200);
    if (this.seen.has(key) || !r.text.includes('"code": ')) return r;
    this.seen.add(key);
    const text = r.text.replace('"code": ', '"code" ');
    return {
      ...r,
      text,
      tokenIds:
        this.inner.countTokens(text) === r.tokenIds.length
          ? r.tokenIds
          : r.tokenIds.slice(0, this.inner.countTokens(text)),
      logprobs: null,
    };
  }
  capacity() {
    return this.inner.capacity();
  }
  countTokens(t: string) {
    return this.inner.countTokens(t);
  }
  close() {
    return Promise.resolve();
  }
}

test('greedy rollouts call the real sandbox, answer, and account every token', async () => {
  const ts = await runRollouts(reqs(), opts());
  let correct = 0;
  for (const [i, t] of ts.entries()) {
    assert.ok(t.finishReason, `p${i} finished`);
    assert.equal(t.promptTokens, engine.countTokens(t.prompt));
    assert.equal(
      t.modelTokens,
      t.turns.reduce((s, x) => s + x.tokens, 0),
    );
    const mask = trajectoryMask(t);
    assert.equal(mask.length, usedTokens(t));
    assert.equal(mask.filter((m) => m === 1).length, t.modelTokens);
    assert.equal(
      engine.countTokens(responseText(t)),
      usedTokens(t),
      'segment-wise counts equal the whole response tokenised',
    );
    for (const turn of t.turns) {
      assert.equal(turn.logprobs?.length, turn.tokens, 'the embedded engine reports a logprob per token');
      assert.ok(turn.genStartedAt <= turn.genFinishedAt);
      if (turn.tool && turn.tool.status !== 'parse_error') {
        assert.ok(
          turn.genFinishedAt <= turn.tool.queuedAt &&
            turn.tool.queuedAt <= turn.tool.startedAt &&
            turn.tool.startedAt <= turn.tool.finishedAt,
        );
        const next = t.turns[turn.index + 1];
        if (next) assert.ok(turn.tool.finishedAt <= next.genStartedAt);
      }
    }
    if ((await scoreTrajectory(t, problems[i]!.answer, verifier)).correct) correct++;
  }
  const calls = ts.map((t) => toolStats(t)).reduce((s, x) => s + x.calls, 0);
  const okCalls = ts.flatMap((t) => t.turns).filter((x) => x.tool?.status === 'ok');
  assert.ok(calls >= problems.length * 0.75, `the SFT policy calls the tool (${calls} calls)`);
  assert.ok(okCalls.length > 0 && okCalls.every((x) => x.tool!.stdout !== undefined && x.tool!.durationMs !== null));
  assert.ok(ts.filter((t) => t.finishReason === 'no_tool_call').length >= problems.length * 0.75);
  assert.ok(correct >= problems.length / 4, `held-out accuracy of the SFT policy: ${correct}/${problems.length}`);
});

test('seeded sampling: same trajectories twice, and the same under both schedules', async () => {
  const a = await runRollouts(reqs(100), opts({ temperature: 1 }));
  const b = await runRollouts(reqs(100), opts({ temperature: 1 }));
  const c = await runRollouts(reqs(100), opts({ temperature: 1, schedule: 'turn_sync' }));
  assert.deepEqual(texts(a), texts(b));
  assert.deepEqual(texts(a), texts(c));
  assert.notDeepEqual(
    texts(a),
    texts(await runRollouts(reqs(200), opts({ temperature: 1 }))),
    'another seed, other samples',
  );
});

test('async dispatch: a slow tool call does not hold up the other trajectories; turn-synchronous does', async () => {
  // Async: the first call is held until every other trajectory has finished. Under async dispatch they finish
  // while it is held; were dispatch turn-synchronous they could not, and the call would be let go by the clock
  // (a minute) instead, which fails below. Nothing here depends on how fast the machine generates.
  const requests = reqs();
  let finished = 0;
  const held = new HeldSandbox(sandbox, 60_000);
  const ts = await runRollouts(
    requests,
    opts({
      sandbox: held,
      onEvent: (e) => {
        if (e.type === 'finish' && ++finished === requests.length - 1) held.release();
      },
    }),
  );
  assert.ok(held.slowCode !== null, 'a call was held');
  assert.equal(held.releasedBy, 'release', 'every other trajectory finished while one call was held');
  const others = ts.filter((t) => !t.turns.some((x) => x.tool?.arguments?.code === held.slowCode));
  const during = others.flatMap((t) => t.turns).filter((x) => x.genStartedAt >= held.heldAt);
  assert.ok(during.length >= 3, `others kept generating while the call was held (${during.length} turns)`);

  // Turn-synchronous: while one call is pending nobody starts a turn (each turn's start from the trajectories'
  // own timestamps, so the length of the hold does not matter).
  const slow = new HeldSandbox(sandbox, 300);
  const sync = await runRollouts(reqs(), opts({ sandbox: slow, schedule: 'turn_sync' }));
  const i = sync.findIndex((t) => t.turns.some((x) => x.tool?.arguments?.code === slow.slowCode));
  assert.ok(i >= 0 && slow.releasedBy === 'clock', 'the injected delay applied to one call');
  const slowCall = sync[i]!.turns.find((x) => x.tool?.arguments?.code === slow.slowCode)!.tool!;
  const started = sync
    .filter((_, j) => j !== i)
    .flatMap((t) => t.turns)
    .filter((x) => x.genStartedAt > slowCall.queuedAt && x.genStartedAt < slowCall.finishedAt);
  assert.equal(started.length, 0, 'turn-synchronous: everyone waits for the slowest call');
});

test('stop rules: max_turns does not run the call; a small budget ends with length; an oversized tool response is not appended', async () => {
  const one = await runRollouts(reqs(), opts({ limits: { maxResponseTokens: 400, maxTurns: 1 } }));
  for (const t of one) {
    assert.equal(t.turns.length, 1);
    if (t.turns[0]!.parse.kind !== 'none') {
      assert.equal(t.finishReason, 'max_turns');
      assert.equal(t.turns[0]!.tool, null);
    }
  }
  assert.ok(one.some((t) => t.finishReason === 'max_turns'));

  const short = await runRollouts(reqs(), opts({ limits: { maxResponseTokens: 8, maxTurns: 5 } }));
  for (const t of short) {
    assert.equal(t.finishReason, 'length');
    assert.equal(usedTokens(t), 8);
  }

  // A budget that fits p0's first turn but not the tool response after it.
  const full = (await runRollouts(reqs().slice(0, 1), opts()))[0]!;
  const first = full.turns[0]!;
  assert.ok(first.tool, 'p0 made a call');
  const budget = first.tokens + first.tool.tokens;
  const over = (
    await runRollouts(reqs().slice(0, 1), opts({ limits: { maxResponseTokens: budget, maxTurns: 5 } }))
  )[0]!;
  assert.equal(over.finishReason, 'tool_overflow');
  assert.equal(over.turns[0]!.tool!.appended, false);
  assert.equal(usedTokens(over), first.tokens, 'the unappended tool response costs nothing');
  assert.equal(toolStats(over).calls, 1, 'the call still ran and counts');
});

test('bad model output is data: a malformed call becomes the tool response, counts as an error, and the rollout goes on', async () => {
  const ts = await runRollouts(reqs().slice(0, 4), opts({ engine: new CorruptingEngine(engine) }));
  for (const t of ts) {
    const first = t.turns[0]!;
    if (first.parse.kind === 'none') continue;
    assert.equal(first.parse.kind, 'parse_error');
    assert.equal(first.tool!.status, 'parse_error');
    assert.match(first.tool!.text, /^Failed to decode tool call: /);
    assert.ok(first.tool!.appendedText.includes(first.tool!.text));
    assert.ok(t.turns.length >= 2, 'the model got the error back and generated again');
    assert.ok(toolStats(t).errors >= 1);
  }
});

test('an engine failure ends that trajectory with engine_error and the others finish', async () => {
  const long = { id: 'long', problem: `Compute ${'1+'.repeat(400)}1.` };
  const ts = await runRollouts([long, ...reqs().slice(0, 2)], opts());
  assert.equal(ts[0]!.finishReason, 'engine_error');
  assert.match(ts[0]!.error ?? '', /no room in the context/);
  assert.ok(ts.slice(1).every((t) => t.finishReason !== 'engine_error'));
});

test('live board: streamed deltas rebuild each turn, tool calls show running then done, finished rollouts drain', async () => {
  const board = new LiveBoard();
  const seen: string[] = [];
  const deltas = new Map<string, string>();
  const ts = await runRollouts(
    reqs().slice(0, 3),
    opts({
      onEvent: (e) => {
        board.onEvent(e);
        if (e.type === 'text') deltas.set(`${e.id}:${e.turn}`, (deltas.get(`${e.id}:${e.turn}`) ?? '') + e.delta);
        if (e.type === 'tool_queued')
          seen.push(board.snapshot().find((r) => r.id === e.id)!.turns[e.turn]!.tool!.status);
      },
    }),
  );
  for (const [i, t] of ts.entries())
    for (const turn of t.turns) assert.equal(deltas.get(`p${i}:${turn.index}`) ?? '', turn.text);
  assert.ok(seen.length > 0 && seen.every((s) => s === 'running'));
  const drained = board.drain();
  assert.equal(drained.length, 3);
  assert.ok(drained.every((r) => r.status === 'finished' && r.finishReason));
  assert.equal(board.snapshot().length, 0);
});

test('tool.session "trajectory": each trajectory runs its calls in a session of its own, closed when it finishes; greedy text is unchanged', async () => {
  const fresh = await runRollouts(reqs().slice(0, 4), opts());
  const inSessions = await runRollouts(reqs().slice(0, 4), opts({ tool: { session: 'trajectory' } }));
  // The embedded model's calls are self-contained: the same code prints the same in a session as in a fresh call.
  assert.deepEqual(texts(inSessions), texts(fresh));
  let calls = 0;
  for (const t of inSessions) {
    const ran = t.turns.filter((x) => x.tool && x.tool.status !== 'parse_error').map((x) => x.tool!);
    for (const [i, call] of ran.entries())
      assert.deepEqual(call.session, { new: i === 0, ended: false }, JSON.stringify(call));
    calls += ran.length;
  }
  assert.ok(calls > 0, 'the model called the tool');
  for (const t of fresh)
    for (const x of t.turns) assert.equal(x.tool?.session, undefined, 'fresh calls are no session calls');
  assert.equal(sandbox.status().sessions.open, 0, 'every trajectory gave its session back');
  // A code environment without sessions is refused by name rather than run without them.
  const noSessions: Sandbox = {
    run: (c) => sandbox.run(c),
    runBatch: (cs) => sandbox.runBatch(cs),
    close: async () => {},
  };
  await assert.rejects(
    runRollouts(reqs().slice(0, 1), opts({ sandbox: noSessions, tool: { session: 'trajectory' } })),
    /tool\.session "trajectory" needs sandbox sessions/,
  );
});
