/**
 * Parser of one assistant turn (docs/method.md §2). Pure.
 *
 * Only the FIRST `<tool_call>` of a turn counts (max parallel calls 1). After the open tag the JSON object is delimited
 * with a string-aware brace matcher (braces and `</tool_call>` inside JSON strings are ignored), then the close tag
 * must follow (whitespace allowed around the JSON). Outcomes:
 * - no `<tool_call>` at all → `{ kind: 'none' }` (the rollout stops: no_tool_call);
 * - a well-formed call to the known tool → `{ kind: 'call', name, arguments: { code, input }, raw }`;
 * - anything else → `{ kind: 'parse_error', message, raw }`; `message` is the text the model gets back inside
 *   `<tool_response>` and the call counts as a tool error.
 *
 * Error texts (our choice where method.md gives only examples):
 * - framing and JSON problems: `Failed to decode tool call: …` (bad JSON, unterminated call, not an object, missing
 *   or malformed `name` / `arguments`);
 * - problems with what was called: `Error when executing tool: …` (unknown tool, missing or non-string `code`,
 *   non-string `input`).
 * `arguments` may be an object or a JSON-encoded string of an object (OpenAI style). A missing `input` means "".
 */
import { DEFAULT_TEMPLATE_SETTINGS, tag, type TemplateSettings } from './template.ts';
import type { ParseResult, Unterminated } from '../../contracts/trajectory.ts';

export interface ParseOptions {
  /** The engine stopped on `</tool_call>` and trimmed it from the text: the end of the text stands for the close tag. */
  stopTrimmed?: boolean;
}

const DECODE = 'Failed to decode tool call: ';
const EXEC = 'Error when executing tool: ';

export interface JsonScan {
  /** Index just past the matching `}`; -1 when the text ended first. */
  end: number;
  /** When end is -1: whether the text ended inside a string. */
  inString: boolean;
}

/**
 * Find the end of the JSON value that starts with `{` at `start`: counts `{`/`[` against `}`/`]` outside strings,
 * honouring backslash escapes inside strings. Does not validate the JSON (JSON.parse does that).
 */
export function scanJsonObject(text: string, start: number): JsonScan {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) return { end: i + 1, inString: false };
    }
  }
  return { end: -1, inString };
}

/** Escape raw control characters that appear inside JSON strings (lenient mode). */
export function escapeControlCharsInStrings(json: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const ch = json[i];
    if (inString) {
      if (ch === '\\') {
        out += ch + (json[i + 1] ?? '');
        i++;
        continue;
      }
      if (ch === '"') inString = false;
      const code = ch.charCodeAt(0);
      if (code < 0x20) {
        out +=
          ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : ch === '\t' ? '\\t' : `\\u${code.toString(16).padStart(4, '0')}`;
        continue;
      }
      out += ch;
      continue;
    }
    if (ch === '"') inString = true;
    out += ch;
  }
  return out;
}

const isWs = (ch: string | undefined) => ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function parseTurn(
  text: string,
  s: TemplateSettings = DEFAULT_TEMPLATE_SETTINGS,
  opts: ParseOptions = {},
): ParseResult {
  const open = tag.open(s.callTag);
  const close = tag.close(s.callTag);
  const at = text.indexOf(open);
  if (at < 0) return { kind: 'none' };
  const bodyStart = at + open.length;
  let i = bodyStart;
  while (isWs(text[i])) i++;

  const unterminated = (why: Unterminated): ParseResult => {
    const raw = text.slice(at);
    const where =
      why === 'in_string' ? 'inside a JSON string' : why === 'in_object' ? 'inside the JSON object' : `before ${close}`;
    return {
      kind: 'parse_error',
      message: `${DECODE}unterminated tool call (the text ended ${where})`,
      raw,
      unterminated: why,
    };
  };
  /** The call could not be delimited as `{…}`: report bad JSON over the text up to the close tag. */
  const badFraming = (): ParseResult => {
    const closeAt = text.indexOf(close, bodyStart);
    if (closeAt < 0 && !opts.stopTrimmed) return unterminated('no_close_tag');
    const body = text.slice(bodyStart, closeAt < 0 ? text.length : closeAt);
    const raw = text.slice(at, closeAt < 0 ? text.length : closeAt + close.length);
    let why: string;
    try {
      JSON.parse(body);
      why = 'expected a single JSON object';
    } catch (e) {
      why = errText(e);
    }
    return { kind: 'parse_error', message: DECODE + why, raw };
  };

  if (i >= text.length)
    return opts.stopTrimmed
      ? { kind: 'parse_error', message: `${DECODE}empty tool call`, raw: text.slice(at) }
      : unterminated('no_close_tag');
  if (text[i] !== '{') return badFraming();
  const scan = scanJsonObject(text, i);
  if (scan.end < 0) return unterminated(scan.inString ? 'in_string' : 'in_object');
  const jsonText = text.slice(i, scan.end);
  let j = scan.end;
  while (isWs(text[j])) j++;
  let raw: string;
  if (text.startsWith(close, j)) raw = text.slice(at, j + close.length);
  else if (j >= text.length && opts.stopTrimmed) raw = text.slice(at);
  else if (j >= text.length) return unterminated('no_close_tag');
  else return badFraming(); // text between the object and the close tag, e.g. an extra `}`

  let obj: unknown;
  try {
    obj = JSON.parse(s.lenientJson ? escapeControlCharsInStrings(jsonText) : jsonText);
  } catch (e) {
    return { kind: 'parse_error', message: DECODE + errText(e), raw };
  }
  return validateCall(obj, s, raw);
}

/** Check the decoded object: name, arguments (object or JSON string), code, input. */
export function validateCall(obj: unknown, s: TemplateSettings, raw: string): ParseResult {
  const fail = (message: string): ParseResult => ({ kind: 'parse_error', message, raw });
  if (!isObject(obj)) return fail(`${DECODE}the tool call must be a JSON object with "name" and "arguments"`);
  if (!('name' in obj)) return fail(`${DECODE}missing key "name"`);
  if (typeof obj.name !== 'string') return fail(`${DECODE}"name" must be a string`);
  if (obj.name !== s.toolName)
    return fail(`${EXEC}unknown tool ${JSON.stringify(obj.name)}; the available tool is ${JSON.stringify(s.toolName)}`);
  if (!('arguments' in obj)) return fail(`${DECODE}missing key "arguments"`);
  let args: unknown = obj.arguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(s.lenientJson ? escapeControlCharsInStrings(args) : args);
    } catch (e) {
      return fail(`${DECODE}"arguments" is a string that is not valid JSON: ${errText(e)}`);
    }
  }
  if (!isObject(args)) return fail(`${DECODE}"arguments" must be a JSON object`);
  if (!(s.codeArg in args)) return fail(`${EXEC}missing required argument "${s.codeArg}"`);
  const code = args[s.codeArg];
  if (typeof code !== 'string') return fail(`${EXEC}argument "${s.codeArg}" must be a string`);
  const input = args[s.inputArg] ?? '';
  if (typeof input !== 'string') return fail(`${EXEC}argument "${s.inputArg}" must be a string`);
  return { kind: 'call', name: obj.name, arguments: { code, input }, raw };
}

/**
 * True when the engine stopped on the `</tool_call>` stop string but that string was inside the call's JSON (e.g.
 * code printing "</tool_call>"): the stop was false and the rollout should let the model continue the same turn.
 */
export function stoppedInsideCall(text: string, s: TemplateSettings = DEFAULT_TEMPLATE_SETTINGS): boolean {
  const close = tag.close(s.callTag);
  if (!text.endsWith(close)) return false;
  const r = parseTurn(text, s);
  return r.kind === 'parse_error' && (r.unterminated === 'in_string' || r.unterminated === 'in_object');
}

/** Number of `<answer>` opening tags in model-generated text (for p_format in GRPO-RoC). */
export function countAnswerBlocks(text: string, s: TemplateSettings = DEFAULT_TEMPLATE_SETTINGS): number {
  const open = tag.open(s.answerTag);
  let n = 0;
  for (let k = text.indexOf(open); k >= 0; k = text.indexOf(open, k + open.length)) n++;
  return n;
}

/** The content of the last complete `<answer>…</answer>` block, or null. */
export function lastAnswerBlock(text: string, s: TemplateSettings = DEFAULT_TEMPLATE_SETTINGS): string | null {
  const open = tag.open(s.answerTag);
  const close = tag.close(s.answerTag);
  const start = text.lastIndexOf(open);
  if (start < 0) return null;
  const end = text.indexOf(close, start + open.length);
  return end < 0 ? null : text.slice(start + open.length, end);
}
