/**
 * The OpenAI-compatible server's wire (openai-server.ts): the request bodies it accepts, its error shape and JSON
 * replies, a whole completion's reply, and the events of a streamed one (the text held back while it may still become
 * a stop string, the legacy logprobs object). Pure but for writing a reply.
 */
import { createHash } from 'node:crypto';
import type http from 'node:http';
import { z } from 'zod';
import type { GenerateChunk, GenerateResult } from './types.ts';

const stringOrOne = z.union([z.string(), z.array(z.string()).length(1, 'must hold exactly one prompt')]);

export const CompletionBody = z.object({
  model: z.string(),
  prompt: stringOrOne,
  max_tokens: z.number().int().min(0).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(16)]).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  logprobs: z.number().int().min(0).max(5).nullish(),
  n: z.literal(1).nullish(),
  echo: z.literal(false).nullish(),
  return_token_ids: z.boolean().nullish(),
  /** Serve only with this weight version (409 otherwise). */
  weight_version: z.union([z.string(), z.number()]).nullish(),
});

export const UpdateBody = z.object({
  model_path: z.string().min(1, 'give the export directory to load'),
  weight_version: z.union([z.string().min(1), z.number()]).nullish(),
  load_format: z.string().nullish(),
  abort_all_requests: z
    .literal(false, { error: 'abort_all_requests is not supported (requests in flight always finish first)' })
    .nullish(),
  flush_cache: z.boolean().nullish(),
});
export type CompletionBody = z.infer<typeof CompletionBody>;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type = 'invalid_request_error',
  ) {
    super(message);
  }
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();

export function errorBody(message: string, type: string, param: string | null, code: string | null) {
  return { error: { message, type, param, code } };
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const s = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
  res.end(s);
}

/** Length of the longest suffix of `text` that is a prefix (possibly all) of one of `stops`: not yet safe to send. */
export function heldBack(text: string, stops: string[]): number {
  let hold = 0;
  for (const s of stops) {
    for (let k = Math.min(s.length, text.length); k > hold; k--) {
      if (text.endsWith(s.slice(0, k))) {
        hold = k;
        break;
      }
    }
  }
  return hold;
}

export function logprobsObj(tokens: string[], lps: number[] | null, start: number) {
  const text_offset: number[] = [];
  let at = start;
  for (const t of tokens) {
    text_offset.push(at);
    at += t.length;
  }
  return { tokens, token_logprobs: lps ?? tokens.map(() => null), top_logprobs: null, text_offset };
}

/** What a completion's reply carries besides the engine's result. */
export interface ReplyInfo {
  id: string;
  created: number;
  model: string;
  prompt: string;
  stop: string[];
  wantLogprobs: boolean;
  wantIds: boolean;
  promptIds?: number[];
  includeUsage: boolean;
  /** Each token id's text. */
  tokenText: (ids: number[]) => string[];
  version: string;
}

/** The result's text without the stop string that ended it (OpenAI servers strip it). */
function withoutStop(r: GenerateResult): string {
  return r.stopString !== null && r.text.endsWith(r.stopString)
    ? r.text.slice(0, r.text.length - r.stopString.length)
    : r.text;
}

const usage = (r: GenerateResult) => ({
  prompt_tokens: r.promptTokens,
  completion_tokens: r.tokenIds.length,
  total_tokens: r.promptTokens + r.tokenIds.length,
});

/** The JSON reply of a completion that was not streamed. */
export function completionJson(r: GenerateResult, o: ReplyInfo) {
  const choice: Record<string, unknown> = {
    index: 0,
    text: withoutStop(r),
    finish_reason: r.finishReason,
    stop_reason: r.stopString,
    logprobs: o.wantLogprobs ? logprobsObj(o.tokenText(r.tokenIds), r.logprobs, o.prompt.length) : null,
  };
  if (o.wantIds) {
    choice.token_ids = r.tokenIds;
    choice.prompt_token_ids = o.promptIds ?? null;
  }
  return {
    id: o.id,
    object: 'text_completion',
    created: o.created,
    model: o.model,
    weight_version: o.version,
    choices: [choice],
    usage: usage(r),
  };
}

/**
 * A streamed completion's events on `res`: a chunk per engine chunk, holding back text that may still become a stop
 * string, then the final chunk and the usage. The headers go out with the first event.
 */
export class CompletionEvents {
  started = false;
  /** The engine's text so far (may end in a stop string). */
  text = '';
  /** Chars of `text` already sent. */
  private emitted = 0;
  private offset: number;
  private first = true;

  constructor(
    private readonly res: http.ServerResponse,
    private readonly o: ReplyInfo,
  ) {
    this.offset = o.prompt.length;
  }

  start() {
    if (this.started) return;
    this.started = true;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
  }

  private send(obj: unknown) {
    this.start();
    this.res.write(`data: ${JSON.stringify(obj)}\n\n`);
  }

  private chunk(text: string, ids: number[], lps: number[] | null, finish: string | null, stopReason: string | null) {
    const o = this.o;
    const choice: Record<string, unknown> = {
      index: 0,
      text,
      finish_reason: finish,
      stop_reason: stopReason,
      logprobs: null,
    };
    if (o.wantLogprobs && ids.length) {
      const toks = o.tokenText(ids);
      choice.logprobs = logprobsObj(toks, lps, this.offset);
      this.offset += toks.join('').length;
    }
    if (o.wantIds) {
      choice.token_ids = ids;
      if (this.first) choice.prompt_token_ids = o.promptIds ?? null;
    }
    this.first = false;
    this.send({
      id: o.id,
      object: 'text_completion',
      created: o.created,
      model: o.model,
      weight_version: o.version,
      choices: [choice],
    });
  }

  /** The engine's chunk callback. */
  readonly onChunk = (c: GenerateChunk) => {
    this.text += c.text;
    const safe = this.text.length - heldBack(this.text, this.o.stop);
    const text = safe > this.emitted ? this.text.slice(this.emitted, safe) : '';
    this.emitted = Math.max(this.emitted, safe);
    this.chunk(text, c.tokenIds, c.logprobs, null, null);
  };

  /** The last chunk of a finished generation (what was held back, without the stop string), then the usage. */
  finish(r: GenerateResult) {
    const final = withoutStop(r);
    this.chunk(final.length > this.emitted ? final.slice(this.emitted) : '', [], null, r.finishReason, r.stopString);
    if (this.o.includeUsage) {
      this.send({
        id: this.o.id,
        object: 'text_completion',
        created: this.o.created,
        model: this.o.model,
        weight_version: this.o.version,
        choices: [],
        usage: usage(r),
      });
    }
  }
}
