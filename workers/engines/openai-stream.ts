/**
 * The client side of an OpenAI-compatible completion stream (openai-engine.ts): the SSE reader that yields each
 * event's data, and what one completion has produced so far as its chunks arrive (text, token ids, logprobs, the
 * weight version the server reported, how it finished).
 */
import type { GenerateChunk, GenerateResult } from './types.ts';
import type { Tokenizer } from './tokenizer.ts';
import { parseVersion } from './weight-sync.ts';

/**
 * Reads `body` as server-sent events, handing each event's data to `handle` until it returns true (`[DONE]`) or the
 * stream ends. `beforeRead` runs before every read (it re-arms the caller's stall timer). The reader is cancelled on
 * an early stop or an error, which is rethrown.
 */
export async function readSseData(
  body: ReadableStream<Uint8Array>,
  beforeRead: () => void,
  handle: (data: string) => boolean,
): Promise<void> {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let done = false;
  try {
    while (!done) {
      beforeRead();
      const { value, done: eof } = await reader.read();
      if (eof) break;
      buf += dec.decode(value, { stream: true });
      for (;;) {
        const m = /\r?\n\r?\n/.exec(buf);
        if (!m) break;
        const event = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        const data = event
          .split(/\r?\n/)
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).replace(/^ /, ''))
          .join('\n');
        if (data && handle(data)) {
          done = true;
          break;
        }
      }
    }
  } catch (e) {
    void reader.cancel().catch(() => {});
    throw e;
  }
  if (done) void reader.cancel().catch(() => {});
}

/** What one streamed completion has produced so far; `handle` takes each event's data. */
export class StreamedCompletion {
  text = '';
  readonly tokenIds: number[] = [];
  private readonly logprobs: number[] = [];
  anyLogprobs = false;
  /** Whether any text or token arrived (after that a failure cannot be retried elsewhere). */
  received = false;
  /** The weight_version the server reported, when it did. */
  served: number | null = null;
  /** Set when the server reported two versions within this stream. */
  mixed: string | null = null;
  finish: string | null = null;
  stopReason: unknown;
  serverPromptTokens: number | undefined;

  constructor(
    private readonly tokenizer: Tokenizer | undefined,
    /** Told the number of token ids of each chunk that has some (the engine's tokens/s). */
    private readonly onTokens: (n: number) => void,
    private readonly onChunk?: (c: GenerateChunk) => void,
  ) {}

  /** One event's data; true at `[DONE]`. Throws on an error event. */
  handle(data: string): boolean {
    if (data === '[DONE]') return true;
    let ev: any;
    try {
      ev = JSON.parse(data);
    } catch {
      return false;
    }
    if (ev?.error) throw new Error(`server error: ${errorText(JSON.stringify(ev))}`);
    const v = parseVersion(ev?.weight_version ?? ev?.meta_info?.weight_version);
    if (v !== null) {
      if (this.served !== null && v !== this.served) this.mixed = `${this.served} then ${v}`;
      this.served = v;
    }
    if (typeof ev?.usage?.prompt_tokens === 'number') this.serverPromptTokens = ev.usage.prompt_tokens;
    const ch = ev?.choices?.[0];
    if (!ch) return false;
    const text: string = typeof ch.text === 'string' ? ch.text : '';
    let ids: number[] = Array.isArray(ch.token_ids) ? ch.token_ids : [];
    if (!Array.isArray(ch.token_ids) && text && this.tokenizer) ids = this.tokenizer.encode(text);
    const lps: unknown[] | null = Array.isArray(ch.logprobs?.token_logprobs) ? ch.logprobs.token_logprobs : null;
    if (lps) {
      this.anyLogprobs = true;
      this.logprobs.push(...lps.map((x) => (typeof x === 'number' ? x : NaN)));
    }
    if (text || ids.length) {
      this.received = true;
      this.text += text;
      this.tokenIds.push(...ids);
      if (ids.length) this.onTokens(ids.length);
      this.onChunk?.({ text, tokenIds: ids, logprobs: lps ? lps.map((x) => (typeof x === 'number' ? x : NaN)) : null });
    }
    if (ch.finish_reason != null) {
      this.finish = String(ch.finish_reason);
      if ('stop_reason' in ch) this.stopReason = ch.stop_reason;
      else if ('matched_stop' in ch) this.stopReason = ch.matched_stop;
    }
    return false;
  }

  /** Appends the stop string the server stripped, as a last chunk with no token ids. */
  appendStop(stopString: string) {
    this.text += stopString;
    this.onChunk?.({ text: stopString, tokenIds: [], logprobs: this.anyLogprobs ? [] : null });
  }

  /** The result so far, ending with `finishReason`. */
  result(
    finishReason: GenerateResult['finishReason'],
    promptTokens: number,
    want: number | null,
    extra: Partial<GenerateResult> = {},
  ): GenerateResult {
    return {
      text: this.text,
      tokenIds: this.tokenIds,
      logprobs: this.anyLogprobs ? this.logprobs : null,
      finishReason,
      stopString: null,
      promptTokens,
      weightVersion: this.served ?? want,
      ...extra,
    };
  }
}

/** The message of an OpenAI-style error body (`{error: {message}}` or `{message}`), else its start. */
export function errorText(body: string): string {
  try {
    const j = JSON.parse(body);
    if (typeof j?.error?.message === 'string') return j.error.message;
    if (typeof j?.message === 'string') return j.message;
  } catch {
    /* not JSON */
  }
  return body.slice(0, 300);
}
