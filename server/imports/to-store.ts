/**
 * A foreign trajectory (contracts/foreign.ts) as the store keeps every trajectory (server/store/trajectories.ts), so
 * the explorer, the trace inspector, the token view, compare and share links show it as they show a native one.
 * What the source lacks stays absent: no verdict of Toolsmith's own (the reward is the source's), no tool status
 * (a foreign tool message says what came back, not how the call ended), no per-token text spans (no tokenizer).
 * The foreign trajectory itself is kept in the content (`imported`), so an export gives back what was imported. Pure.
 */
import { createHash } from 'node:crypto';
import type { ForeignMessage, ForeignTokens, ForeignTrajectory, ImportOrigin } from '../../contracts/foreign.ts';
import type { StoredTrajectoryContent, StoredTurn, TokenRecord, ToolCallRecord } from '../../contracts/trajectory.ts';
import type { TrajectoryInput } from '../store/trajectories.ts';

/** The stored id of a foreign trajectory: the same for the same run and source id, so a re-read line is a no-op. */
export function importedTrajectoryId(runId: string, foreignId: string): string {
  return `ti_${createHash('sha256').update(runId).update('\0').update(foreignId).digest('hex').slice(0, 24)}`;
}

/** A prompt of several messages as one text, each headed by its role (one user message stays as it is). */
export function promptText(messages: ForeignMessage[]): string {
  if (messages.length === 1 && messages[0]!.role === 'user') return messages[0]!.content;
  return messages.map((m) => `[${m.role}]\n${m.content}`).join('\n\n');
}

/** The code of a call whose arguments are a JSON object with a `code` field (the python tool's), else the text. */
function callCode(args: string): string {
  try {
    const o = JSON.parse(args) as unknown;
    if (o && typeof o === 'object' && typeof (o as { code?: unknown }).code === 'string')
      return (o as { code: string }).code;
  } catch {
    // Not JSON: the arguments are the code as the model wrote it.
  }
  return args;
}

// A foreign message has one time at most (when it was written), never how long it took to generate, and no token
// count per turn: those are absent, not 0.
function emptyTurn(index: number, text: string, time: number): StoredTurn {
  return {
    index,
    text,
    tokens: 0,
    engineFinish: 'stop',
    parse: { kind: 'none' },
    tool: null,
    genStartedAt: time,
    genFinishedAt: time,
    absent: { tokens: true, timing: true },
  };
}

function toolRecord(name: string | null, code: string | null, text: string, time: number): ToolCallRecord {
  return {
    name,
    arguments: code === null ? null : { code, input: '' },
    status: 'ok',
    text,
    appendedText: text,
    tokens: 0,
    appended: true,
    queuedAt: time,
    startedAt: time,
    finishedAt: time,
    durationMs: null,
    queueMs: null,
    stdout: text,
    // The round trip is known once the result's own time is (turnsOf); the token count never is.
    absent: { tokens: true, timing: true },
  };
}

/**
 * The conversation after the prompt as Toolsmith's turns: one turn per assistant message (one more per extra tool
 * call in it), each call's result on the turn that made it (by call id, else the earliest turn still waiting), and
 * any other message (an environment's user turn) as what came back to the turn before it.
 */
export function turnsOf(messages: ForeignMessage[]): StoredTurn[] {
  const turns: StoredTurn[] = [];
  const waiting: { turn: StoredTurn; id?: string }[] = [];
  for (const m of messages) {
    const time = m.time ?? 0;
    if (m.role === 'assistant') {
      const calls = m.toolCalls ?? [];
      const first = emptyTurn(turns.length, m.content, time);
      turns.push(first);
      calls.forEach((c, i) => {
        const turn = i === 0 ? first : emptyTurn(turns.length, '', time);
        if (i > 0) turns.push(turn);
        const code = callCode(c.arguments);
        turn.parse = { kind: 'call', name: c.name, arguments: { code, input: '' }, raw: c.arguments };
        turn.tool = toolRecord(c.name, code, '', time);
        turn.tool.appended = false; // until its result arrives
        waiting.push({ turn, id: c.id });
      });
      continue;
    }
    const k = m.role === 'tool' ? waiting.findIndex((w) => m.toolCallId !== undefined && w.id === m.toolCallId) : -1;
    const slot = k >= 0 ? k : m.role === 'tool' && waiting.length > 0 ? 0 : -1;
    if (slot >= 0) {
      const [{ turn }] = waiting.splice(slot, 1) as [{ turn: StoredTurn }];
      const tool = turn.tool!;
      Object.assign(tool, { text: m.content, appendedText: m.content, stdout: m.content, appended: true });
      if (m.time !== undefined && turn.genStartedAt > 0) {
        tool.finishedAt = m.time;
        tool.absent = { tokens: true };
      }
      continue;
    }
    // A message with no call to answer: what the environment said back, shown after the last turn.
    const last = turns.at(-1);
    if (last && !last.tool) last.tool = toolRecord(`(${m.role} message)`, null, m.content, time);
    else
      turns.push({
        ...emptyTurn(turns.length, '', time),
        tool: toolRecord(`(${m.role} message)`, null, m.content, time),
      });
  }
  return turns;
}

/** The token arrays as the token view reads them: turns counted from the mask, NaN where the source has no value. */
export function tokenRecordOf(t: ForeignTrajectory): TokenRecord | null {
  const k = t.tokens;
  if (!k || k.ids.length === 0) return null;
  const n = k.ids.length;
  const fill = (a: number[] | undefined) => (a && a.length === n ? a : new Array<number>(n).fill(Number.NaN));
  const mask = k.mask && k.mask.length === n ? k.mask.map((m) => (m ? 1 : 0)) : new Array<number>(n).fill(1);
  let turn = 0;
  const turnOf = mask.map((m, i) => {
    if (i > 0 && m === 1 && mask[i - 1] === 0) turn++;
    return turn;
  });
  const perToken = k.advantages && k.advantages.length === n ? k.advantages : undefined;
  const advantage = t.advantage ?? (perToken ? (perToken.find((a, i) => mask[i] === 1 && a !== 0) ?? 0) : undefined);
  return {
    ids: k.ids,
    mask,
    turn: turnOf,
    chars: new Array<number>(n).fill(0),
    rolloutLogprobs: fill(k.rolloutLogprobs),
    entropy: fill(k.entropies),
    // The store keeps the trainer's side whole or not at all: a source with trainer logprobs has no importance
    // weights or clip states of Toolsmith's, so those are "no value" (NaN) and "not clipped" (0).
    ...(k.trainerLogprobs && k.trainerLogprobs.length === n
      ? { trainerLogprobs: k.trainerLogprobs, weights: fill(undefined), clip: new Array<0>(n).fill(0) }
      : { trainerLogprobs: null, weights: null, clip: null }),
    advantage: advantage ?? null,
  };
}

/**
 * What the content keeps of the source beside the turns: enough to export it back as it came. Its token arrays live
 * in the token side table (TrajectoryTokens) like every trajectory's; only what that table has no column for stays
 * here.
 */
export interface ImportedContent {
  format: ImportOrigin;
  trajectory: Omit<ForeignTrajectory, 'tokens'>;
  tokenExtras?: { promptIds?: number[]; advantages?: (number | null)[]; noMask?: true };
}

/** A token record as the shared foreign shape: an array that holds no value anywhere is absent. */
export function foreignTokensOf(record: TokenRecord, extras?: ImportedContent['tokenExtras']): ForeignTokens {
  const some = (a: number[] | null) => (a && a.some((x) => !Number.isNaN(x)) ? a : undefined);
  const rolloutLogprobs = some(record.rolloutLogprobs);
  const entropies = some(record.entropy);
  const trainerLogprobs = some(record.trainerLogprobs);
  return {
    ...(extras?.promptIds ? { promptIds: extras.promptIds } : {}),
    ids: record.ids,
    ...(extras?.noMask ? {} : { mask: record.mask }),
    ...(rolloutLogprobs ? { rolloutLogprobs } : {}),
    ...(trainerLogprobs ? { trainerLogprobs } : {}),
    ...(entropies ? { entropies } : {}),
    ...(extras?.advantages ? { advantages: extras.advantages.map((a) => (a === null ? Number.NaN : a)) } : {}),
  };
}

/** The imported trajectory whole again, its token arrays from the side table. */
export function importedTrajectory(c: ImportedContent, record: TokenRecord | null): ForeignTrajectory {
  return record ? { ...c.trajectory, tokens: foreignTokensOf(record, c.tokenExtras) } : c.trajectory;
}

export function toStoredTrajectory(
  t: ForeignTrajectory,
  ctx: { runId: string; format: ImportOrigin; sampleIndex: number },
): TrajectoryInput {
  const prompt = t.messages.slice(0, t.promptMessages);
  const turns = turnsOf(t.messages.slice(t.promptMessages));
  const tokens = tokenRecordOf(t);
  const toolTokens = tokens ? tokens.mask.filter((m) => m === 0).length : 0;
  const reward = t.reward ?? 0;
  const content: StoredTrajectoryContent & { imported: ImportedContent } = {
    prompt: promptText(prompt),
    finishReason: null,
    finishedAt: t.messages.at(-1)?.time ?? null,
    error: null,
    modelTokens: tokens ? tokens.ids.length - toolTokens : 0,
    turns,
    verdict: {
      correct: null,
      method: 'none',
      extracted: null,
      reason:
        t.reward === undefined
          ? `imported from ${ctx.format}: the source keeps no reward`
          : `imported from ${ctx.format}: the reward ${reward} is the source's; Toolsmith did not check the answer`,
    },
    imported: importedContent(t, ctx.format),
  };
  return {
    id: importedTrajectoryId(ctx.runId, t.id),
    runId: ctx.runId,
    step: t.step,
    stage: 0,
    split: t.split,
    // The prompt's own key: "same prompt across steps" finds it in every step that sampled it.
    problemId: `prompt:${createHash('sha256').update(content.prompt).digest('hex').slice(0, 16)}`,
    groupId: t.groupId,
    sampleIndex: ctx.sampleIndex,
    reward,
    correct: null,
    promptTokens: t.tokens?.promptIds?.length ?? 0,
    responseTokens: tokens?.ids.length ?? 0,
    toolTokens,
    turns: turns.length,
    toolErrors: 0,
    finishReason: 'imported',
    answer: t.answer ?? null,
    content,
    tokens,
    toolCalls: turns.flatMap((turn) =>
      turn.tool?.arguments
        ? [
            {
              turn: turn.index,
              code: turn.tool.arguments.code,
              stdout: turn.tool.stdout ?? '',
              status: 'ok',
              ...(turn.tool.startedAt ? { startedAt: turn.tool.startedAt, finishedAt: turn.tool.finishedAt } : {}),
            },
          ]
        : [],
    ),
  };
}

function importedContent(t: ForeignTrajectory, format: ImportOrigin): ImportedContent {
  const { tokens, ...trajectory } = t;
  const extras = {
    ...(tokens?.promptIds ? { promptIds: tokens.promptIds } : {}),
    // NaN is not JSON: per-token advantages travel with null for "no value" (read back by importedTrajectory).
    ...(tokens?.advantages ? { advantages: tokens.advantages.map((a) => (Number.isNaN(a) ? null : a)) } : {}),
    // The record needs a mask (all model tokens then); an export must not invent one the source lacked.
    ...(tokens && !tokens.mask ? { noMask: true as const } : {}),
  };
  return { format, trajectory, ...(Object.keys(extras).length ? { tokenExtras: extras } : {}) };
}
