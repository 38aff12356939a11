/**
 * The agent loop (docs/method.md §2, §6): turns problems into trajectories by alternating engine generations and
 * sandbox calls, many trajectories at once.
 *
 * Two schedules:
 * - 'async' (the report's): every trajectory is its own loop; the moment one emits a tool call the call goes to the
 *   sandbox while the others keep generating, and it re-enters the engine's batch as soon as its result is back.
 * - 'turn_sync' (the static baseline the report replaced): all live trajectories generate turn k, then all their
 *   calls run, and turn k+1 starts only when the slowest call of turn k has returned. Kept for bench:rollout.
 *
 * Partial progress is pushed to `onEvent` (text deltas as the engine streams them, tool call queued/finished, finish):
 * the callback must only record (the live view batches and flushes on its own timer), so observing costs the engine
 * nothing but a function call per chunk.
 */
import type { GenerateFinish, InferenceEngine } from '../engines/types.ts';
import { formatToolResult, DEFAULT_TOOL_FORMAT } from '../sandbox/format.ts';
import { type ToolFormat, type ToolSession, toolSessionMode } from '../../contracts/recipe.ts';
import { UserError } from '../../contracts/errors.ts';
import type { Sandbox, SandboxSession } from '../sandbox/types.ts';
import { afterGeneration, afterTool, maxTokensForNextTurn, type StopLimits } from './stop.ts';
import {
  buildPrompt,
  DEFAULT_TEMPLATE_SETTINGS,
  stopStrings,
  toolResponseTurn,
  type TemplateSettings,
} from './template.ts';
import {
  appendAssistantTurn,
  appendToolResult,
  finishTrajectory,
  newTrajectory,
  parseErrorRecord,
  responseText,
  usedTokens,
} from './trajectory.ts';
import type { EngineFinish, ToolCallRecord, Trajectory } from '../../contracts/trajectory.ts';

export type Schedule = 'async' | 'turn_sync';

export interface RolloutRequest {
  /** Caller's id, echoed in events (e.g. `${groupId}:${sampleIndex}`). */
  id: string;
  problem: string;
  /** Seed of this trajectory's sampling (turn t uses seed * 1000 + t); omitted: unseeded. */
  seed?: number;
}

export interface ToolLimits {
  timeoutS: number;
  memoryMb: number;
  maxOutputBytes: number;
  /** Shared state across a trajectory's calls (recipe tool.session): `replay` replays its earlier successful calls
   *  first; `trajectory` runs them all in one sandbox session (Sandbox.openSession), closed when it finishes. */
  session: ToolSession;
  /** `trajectory` sessions: the session's time, its calls' time added up, seconds (SessionOptions.timeS). */
  sessionTimeS?: number;
  /** Seed each call's generators from the trajectory's seed (seed × 1000 + turn); otherwise fresh entropy. */
  seedCalls?: boolean;
}

export const DEFAULT_TOOL_LIMITS: ToolLimits = { timeoutS: 4, memoryMb: 1024, maxOutputBytes: 1 << 20, session: false };

export interface AgentOptions {
  engine: InferenceEngine;
  sandbox: Sandbox;
  limits: StopLimits;
  temperature: number;
  topP?: number;
  template?: TemplateSettings;
  toolFormat?: ToolFormat;
  tool?: Partial<ToolLimits>;
  schedule?: Schedule;
  onEvent?: (e: RolloutEvent) => void;
  signal?: AbortSignal;
  /** Generate only with this policy weight version (GenerateRequest.weightVersion): a stale engine refuses and retries. */
  weightVersion?: number;
}

export type RolloutEvent =
  | { type: 'start'; id: string; prompt: string; at: number }
  | { type: 'text'; id: string; turn: number; delta: string }
  | { type: 'turn'; id: string; turn: number; text: string; at: number }
  | { type: 'tool_queued'; id: string; turn: number; code: string; at: number }
  | { type: 'tool_done'; id: string; turn: number; record: ToolCallRecord }
  | { type: 'finish'; id: string; trajectory: Trajectory };

const engineFinish = (f: GenerateFinish): EngineFinish => (f === 'aborted' ? 'abort' : f);

/** One rollout's state between steps of the loop; both schedules drive the same three operations. */
/** Engines' prefix caches are keyed by session: one per rollout, never shared by two (ids repeat across calls). */
let sessions = 0;

class Rollout {
  t: Trajectory;
  private readonly prompt: string;
  private readonly session = `${process.pid}:${++sessions}`;
  /** The trajectory's sandbox session (tool.session `trajectory`), from its first call until it finishes. */
  private box?: SandboxSession;
  constructor(
    readonly req: RolloutRequest,
    private readonly o: Required<Omit<AgentOptions, 'onEvent' | 'signal' | 'tool' | 'weightVersion'>> & {
      tool: ToolLimits;
      onEvent?: (e: RolloutEvent) => void;
      signal?: AbortSignal;
      weightVersion?: number;
    },
  ) {
    this.prompt = buildPrompt(req.problem, o.template);
    this.t = newTrajectory(this.prompt, o.engine.countTokens(this.prompt));
    o.onEvent?.({ type: 'start', id: req.id, prompt: this.prompt, at: Date.now() });
  }

  get done() {
    return this.t.finishReason !== null;
  }

  private finish(reason: Trajectory['finishReason'] & string, error: string | null = null) {
    this.t = finishTrajectory(this.t, reason, Date.now(), error);
    this.o.onEvent?.({ type: 'finish', id: this.req.id, trajectory: this.t });
  }

  /** Generate one assistant turn. Returns the pending call (code, input) when the loop must run the tool next. */
  async generate(): Promise<{ code: string; input: string } | null> {
    const { engine, limits, template: s, onEvent } = this.o;
    const turn = this.t.turns.length;
    const started = Date.now();
    const r = await engine.generate(
      {
        prompt: this.prompt + responseText(this.t),
        maxTokens: maxTokensForNextTurn(limits, usedTokens(this.t)),
        temperature: this.o.temperature,
        topP: this.o.topP,
        seed: this.req.seed == null ? undefined : this.req.seed * 1000 + turn,
        sessionId: this.session,
        stop: stopStrings(s),
        signal: this.o.signal,
        weightVersion: this.o.weightVersion,
      },
      onEvent ? (c) => onEvent({ type: 'text', id: this.req.id, turn, delta: c.text }) : undefined,
    );
    const finish = engineFinish(r.finishReason);
    this.t = appendAssistantTurn(
      this.t,
      {
        text: r.text,
        tokens: r.tokenIds.length,
        tokenIds: r.tokenIds,
        logprobs: r.logprobs,
        engineFinish: finish,
        entropies: r.entropies,
        weightVersion: r.weightVersion,
        genStartedAt: started,
        genFinishedAt: Date.now(),
      },
      s,
    );
    const last = this.t.turns[turn]!;
    onEvent?.({ type: 'turn', id: this.req.id, turn, text: r.text, at: last.genFinishedAt });
    const d = afterGeneration(limits, {
      usedTokens: usedTokens(this.t),
      turns: this.t.turns.length,
      engineFinish: finish,
      parse: last.parse,
    });
    if (d.action === 'stop') {
      this.finish(d.reason, d.reason === 'engine_error' ? (r.error ?? `engine finished with ${r.finishReason}`) : null);
      return null;
    }
    if (last.parse.kind === 'parse_error') {
      // Bad model output is data: the parse error is the tool response and counts as a tool error.
      const appended = toolResponseTurn(last.parse.message, s);
      this.appendTool(parseErrorRecord(last.parse.message, appended, engine.countTokens(appended), Date.now()));
      return null;
    }
    if (last.parse.kind !== 'call') throw new Error('unreachable: a turn without a call is stopped above');
    return last.parse.arguments;
  }

  /** Run the pending call in the sandbox and append its result. */
  async runTool(call: { code: string; input: string }): Promise<void> {
    const { sandbox, tool, onEvent } = this.o;
    const turn = this.t.turns.length - 1;
    const queuedAt = Date.now();
    onEvent?.({ type: 'tool_queued', id: this.req.id, turn, code: call.code, at: queuedAt });
    const mode = toolSessionMode(tool.session);
    const history =
      mode === 'replay'
        ? this.t.turns
            .filter((x) => x.tool?.status === 'ok' && x.parse.kind === 'call')
            .map((x) => (x.parse as { arguments: { code: string } }).arguments.code)
        : undefined;
    const seed = tool.seedCalls && this.req.seed != null ? this.req.seed * 1000 + turn : undefined;
    if (mode === 'trajectory') this.box ??= sandbox.openSession!({ timeS: tool.sessionTimeS });
    const res = await (this.box ?? sandbox).run(
      {
        code: call.code,
        input: call.input,
        timeoutS: tool.timeoutS,
        memoryMb: tool.memoryMb,
        maxOutputBytes: tool.maxOutputBytes,
        history,
        seed,
      },
      { signal: this.o.signal },
    );
    const finishedAt = Date.now();
    const text = formatToolResult(res, this.o.toolFormat, tool.timeoutS);
    const appendedText = toolResponseTurn(text, this.o.template);
    this.appendTool({
      name: this.o.template.toolName,
      arguments: { code: call.code, input: call.input },
      status: res.status,
      text,
      appendedText,
      tokens: this.o.engine.countTokens(appendedText),
      appended: true,
      queuedAt,
      startedAt: Math.min(finishedAt, queuedAt + res.queueMs),
      finishedAt,
      durationMs: res.durationMs,
      queueMs: res.queueMs,
      stdout: res.stdout,
      stderr: res.stderr,
      exitCode: res.exitCode,
      errorType: res.errorType,
      ...(seed === undefined ? {} : { seed }),
      ...(res.sessionNew === undefined ? {} : { session: { new: res.sessionNew, ended: Boolean(res.sessionEnded) } }),
    });
  }

  /** End the trajectory's sandbox session, if it has one. */
  async closeSession() {
    const box = this.box;
    this.box = undefined;
    await box?.close();
  }

  private appendTool(rec: ToolCallRecord) {
    const d = afterTool(this.o.limits, usedTokens(this.t), rec.tokens);
    const record = d.action === 'stop' ? { ...rec, appended: false } : rec;
    this.t = appendToolResult(this.t, record);
    this.o.onEvent?.({ type: 'tool_done', id: this.req.id, turn: this.t.turns.length - 1, record });
    if (d.action === 'stop') this.finish(d.reason);
  }
}

/** Roll out every request; results in request order. Engine failures end a trajectory (engine_error), never the batch. */
export async function runRollouts(requests: RolloutRequest[], opts: AgentOptions): Promise<Trajectory[]> {
  const o = {
    template: DEFAULT_TEMPLATE_SETTINGS,
    toolFormat: DEFAULT_TOOL_FORMAT,
    topP: 1,
    schedule: 'async' as Schedule,
    ...opts,
    tool: { ...DEFAULT_TOOL_LIMITS, ...opts.tool },
  };
  if (toolSessionMode(o.tool.session) === 'trajectory' && !o.sandbox.openSession)
    throw new UserError('tool.session "trajectory" needs sandbox sessions, which this code environment has none of', {
      fix: 'run the tool calls on the local sandbox pool, or set tool.session to "replay" or "off"',
      field: 'tool.session',
    });
  const rollouts = requests.map((r) => new Rollout(r, o));
  try {
    if (o.schedule === 'async') {
      await Promise.all(
        rollouts.map(async (r) => {
          while (!r.done) {
            const call = await r.generate();
            if (call) await r.runTool(call);
          }
          // A finished trajectory gives its session's interpreter back at once, for the next one waiting.
          await r.closeSession();
        }),
      );
    } else {
      for (let live = rollouts; live.length > 0; live = live.filter((r) => !r.done)) {
        const calls = await Promise.all(live.map((r) => r.generate()));
        await Promise.all(live.map((r, i) => (calls[i] ? r.runTool(calls[i]!) : undefined)));
        await Promise.all(live.filter((r) => r.done).map((r) => r.closeSession()));
      }
    }
  } finally {
    await Promise.all(rollouts.map((r) => r.closeSession()));
  }
  return rollouts.map((r) => r.t);
}
