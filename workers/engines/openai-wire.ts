/**
 * The OpenAI-compatible server's wire (openai-server.ts): the request bodies it accepts, its error shape and JSON
 * replies, and the pieces of a completion it streams (the text held back while it may still become a stop string,
 * the legacy logprobs object). Pure but for writing a reply.
 */
import { createHash } from 'node:crypto';
import type http from 'node:http';
import { z } from 'zod';

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
