/**
 * What the format mappers share: reading a record's fields by name with a reason when one is wrong, and the group of
 * a trajectory whose source keeps none (the same prompt in the same step and split). Pure.
 */
import type { ForeignMessage, ForeignProblem, ForeignTokens, ForeignToolCall } from '../../../contracts/foreign.ts';

export type Json = Record<string, unknown>;

export class RecordError extends Error {}

export function asObject(v: unknown, what: string): Json {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new RecordError(`${what} is not an object`);
  return v as Json;
}

export function str(o: Json, key: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new RecordError(`field "${key}" is ${v === undefined ? 'missing' : 'not text'}`);
  return v;
}

export function num(o: Json, key: string): number {
  const v = o[key];
  const n = typeof v === 'boolean' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n))
    throw new RecordError(`field "${key}" is ${v === undefined ? 'missing' : 'not a finite number'}`);
  return n;
}

/** A step: a non-negative safe integer (the store's integer column; the explorer pages by it). */
export function stepNum(o: Json, key: string): number {
  const n = num(o, key);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new RecordError(`field "${key}" ${n} is not a non-negative whole number`);
  return n;
}

export function optNum(o: Json, key: string): number | undefined {
  return o[key] === undefined || o[key] === null ? undefined : num(o, key);
}

export function numbers(o: Json, key: string): number[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number'))
    throw new RecordError(`field "${key}" is not a list of numbers`);
  return v as number[];
}

/** A finite number (booleans as 0/1, as reward functions return them), else undefined. */
export function numeric(v: unknown): number | undefined {
  const n = typeof v === 'boolean' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

/** The fields of `o` not in `used`, for the trajectory's metadata. */
export function rest(o: Json, used: Iterable<string>): Json {
  const skip = new Set(used);
  return Object.fromEntries(Object.entries(o).filter(([k]) => !skip.has(k)));
}

/** A short stable name for a text (FNV-1a, 64 bits as hex): the group of a prompt whose source keeps no group id. */
export function textKey(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(text)) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h.toString(16).padStart(16, '0');
}

export function problem(file: string, line: number, e: unknown): ForeignProblem {
  if (e instanceof RecordError) return { file, line, reason: e.message };
  throw e;
}

/** The value at a dotted path (`run.work.step`); undefined where any part is missing, an error where one is no object. */
export function field(o: Json, path: string): unknown {
  let v: unknown = o;
  for (const [i, key] of path.split('.').entries()) {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'object' || Array.isArray(v))
      throw new RecordError(`field "${path.split('.').slice(0, i).join('.')}" is not an object`);
    v = (v as Json)[key];
  }
  return v;
}

/** A list of numbers at `key` whose entries may be booleans (masks written as true/false), as 0/1. */
export function flags(o: Json, key: string): number[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' || typeof x === 'boolean'))
    throw new RecordError(`field "${key}" is not a list of numbers or booleans`);
  return v.map((x) => (x ? 1 : 0));
}

/** A column some producers write as JSON text (ART's parquet) and others as the value itself. */
export function jsonValue(v: unknown, what: string): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    throw new RecordError(`${what} is not valid JSON`);
  }
}

/** A message's content as text: OpenAI content parts give their text parts (images dropped); none is empty. */
export function contentText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  if (Array.isArray(v) && v.every((p) => p !== null && typeof p === 'object' && 'type' in p))
    return v.flatMap((p) => (typeof p.text === 'string' ? [p.text as string] : [])).join('\n');
  return JSON.stringify(v);
}

/**
 * OpenAI-style tool calls, flat (`{id, name, arguments}`, verifiers v1, rLLM's ToolCall) or nested
 * (`{id, type: 'function', function: {name, arguments}}`, the Chat Completions API); arguments kept as JSON text.
 */
export function toolCalls(v: unknown, what: string): ForeignToolCall[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new RecordError(`${what} is not a list`);
  return v.map((c, i) => {
    const call = asObject(c, `${what}[${i}]`);
    const fn = call.function === undefined ? call : asObject(call.function, `${what}[${i}].function`);
    if (typeof fn.name !== 'string') throw new RecordError(`${what}[${i}] has no function name`);
    const args = fn.arguments;
    return {
      ...(typeof call.id === 'string' ? { id: call.id } : {}),
      name: fn.name,
      arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
    };
  });
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/**
 * One OpenAI-style message (`role`, `content`, `tool_calls`, `tool_call_id`) and the fields of it the mapping does
 * not use (`reasoning_content`, `name`, ...), for the trajectory's metadata. `aliases` names a producer's own roles
 * (NeMo-RL's `environment`) as one of ours.
 */
export function chatMessage(
  v: unknown,
  what: string,
  aliases: Record<string, ForeignMessage['role']> = {},
): { message: ForeignMessage; extra: Json } {
  const o = asObject(v, what);
  const raw = o.role;
  const role = typeof raw === 'string' ? (aliases[raw] ?? raw) : raw;
  if (typeof role !== 'string' || !ROLES.has(role))
    throw new RecordError(`${what}.role ${JSON.stringify(raw)} is not system, user, assistant or tool`);
  const calls = toolCalls(o.tool_calls, `${what}.tool_calls`);
  return {
    message: {
      role: role as ForeignMessage['role'],
      content: contentText(o.content),
      ...(calls?.length ? { toolCalls: calls } : {}),
      ...(typeof o.tool_call_id === 'string' ? { toolCallId: o.tool_call_id } : {}),
    },
    extra: rest(o, ['role', 'content', 'tool_calls', 'tool_call_id']),
  };
}

/**
 * Token arrays over a whole sequence split where training starts: what comes before the first trained token (mask
 * 1) is the prompt (`promptIds`), the rest the completion the other arrays align with. No mask, or nothing trained:
 * no split.
 */
export function splitAtCompletion(t: ForeignTokens): ForeignTokens {
  const at = t.mask ? t.mask.indexOf(1) : -1;
  if (at <= 0) return t;
  const cut = (a: number[] | undefined) => a?.slice(at);
  return Object.fromEntries(
    Object.entries({
      promptIds: t.ids.slice(0, at),
      ids: t.ids.slice(at),
      mask: cut(t.mask),
      rolloutLogprobs: cut(t.rolloutLogprobs),
      trainerLogprobs: cut(t.trainerLogprobs),
      entropies: cut(t.entropies),
      advantages: cut(t.advantages),
    }).filter(([, a]) => a !== undefined),
  ) as unknown as ForeignTokens;
}
