/**
 * An InferenceEngine over OpenAI-compatible servers (vLLM, SGLang, `npx toolsmith serve-model`): POST
 * /v1/completions with the raw, already templated prompt, always streamed (SSE).
 *
 * Request: {model, prompt, max_tokens, temperature, top_p, seed, stop, stream: true, logprobs: 0 (only the sampled
 * token's logprob; off with `logprobs: false`), return_token_ids: true (vLLM's extension; off with
 * `returnTokenIds: false` for servers that reject unknown fields, e.g. api.openai.com)}.
 *
 * Token ids: taken from each chunk's `choices[0].token_ids` when the server returns them (vLLM ≥ 0.10.2,
 * serve-model); otherwise `tokenizer.encode(chunk text)` when a tokenizer was given (approximate: the server's
 * tokenisation may differ); otherwise empty.
 *
 * Stop strings: OpenAI servers strip the stop string from the text. So that callers (the tool-call parser waiting
 * for `</tool_call>`) see it, on finish_reason 'stop' we work out which stop string ended generation and append
 * it to the text (as a last chunk with no token ids), matching the embedded engine, which keeps it:
 *   1. `stop_reason` (vLLM, serve-model) or `matched_stop` (SGLang) is a string → that stop string; a number or
 *      null there means the model emitted EOS/a stop token → stopString null.
 *   2. Neither field present (plain OpenAI): if the text already ends with one of the request's stops (a server
 *      that keeps it), that one, not appended again; else if the request had exactly one stop string, that one
 *      (appended); else null (EOS and a stripped stop cannot be told apart).
 * finish_reason 'length' → 'length'; anything else non-null → 'stop'.
 *
 * Base URLs (`http://host:port` or `http://host:port/v1`): each request goes to the one with the fewest requests in
 * flight, ties broken round-robin. A connection error, a timeout, HTTP 5xx or 429 before any token arrived is
 * retried (up to `retries` more attempts) on the next base URL after a backoff (backoffMs · 2^attempt, capped at
 * 2 s). Once a token has been received, a failure ends the request with finishReason 'error' and the partial text
 * (never re-sent: the caller has already seen those chunks). Other 4xx → 'error' at once, with the server's message.
 * `timeoutMs` bounds the wait for the response headers and every gap between stream events.
 *
 * countTokens(): the tokenizer when given, else an estimate of ceil(chars / 4) (about right for BPE vocabularies
 * on English and code; exactness matters only for admission, which keeps headroom). capacity(): `totalTokens`
 * (configure it to the servers' KV cache, summed over base URLs) minus what the requests in flight reserved
 * (prompt tokens + maxTokens each).
 *
 * Weight sync (a PolicyEngine when `weightSync` is set; docs/scaling-out.md "Weight sync"): load(dir) pushes the first export as
 * version 0, reload(dir) the next as version + 1, through each server's reload API (weight-sync.ts). A push first
 * holds new requests back and waits until the requests in flight have finished (so they finish on the weights they
 * started with, whatever the server does on a reload), then calls every server and resolves once EVERY one serves
 * the new version (an error names the server that did not); only then are the held requests sent. Requests carry
 * the version they must be served with (req.weightVersion, default the engine's): in sglang mode as
 * `weight_version` in the body, which serve-model checks (a server on another version answers HTTP 409
 * `stale_weight_version`). A 409 is retried with backoff (100 ms doubling, capped at 2 s), on the next server, for
 * up to `staleTimeoutMs` (default 30 s), then answered as finishReason 'error' with `stale: true`. Results carry
 * `weightVersion`: the server's `weight_version` (serve-model sends it in the body and every stream chunk), else the
 * version the request was sent with (no push overlaps a request). A server reporting another version than the one
 * asked for ends the request as an error: versions are never mixed silently. In vllm-lora mode requests name the
 * adapter of the current version as their `model`.
 *
 * computeMs: the wall time during which at least one request was in flight (the servers' compute is not visible
 * from here; with requests in flight the servers count as busy), so engine-busy is the share of the rollout phase
 * with work at the servers.
 */
import type { WeightSyncMode } from '../../contracts/engine.ts';
import type {
  EngineCapacity,
  EngineStats,
  GenerateChunk,
  GenerateRequest,
  GenerateResult,
  PolicyEngine,
} from './types.ts';
import type { Tokenizer } from './tokenizer.ts';
import { adapterName, pointCurrent, pushWeights, versionLabel } from './weight-sync.ts';
import { errorText, readSseData, StreamedCompletion } from './openai-stream.ts';
import { sleep } from './sleep.ts';

export interface OpenAIEngineOptions {
  baseUrls: string[];
  model: string;
  apiKey?: string;
  /** Timeout for the response headers and between stream events (ms). */
  timeoutMs: number;
  /** Extra attempts after the first, each on the next base URL; only before any token was received. */
  retries: number;
  /** Capacity reported to the scheduler: tokens the servers hold at once, all base URLs together. */
  totalTokens: number;
  tokenizer?: Tokenizer;
  id?: string;
  /** First retry backoff (default 100 ms), doubling each attempt, capped at 2 s. */
  backoffMs?: number;
  /** Ask for the sampled tokens' logprobs (default true). */
  logprobs?: boolean;
  /** Send vLLM's `return_token_ids: true` (default true). */
  returnTokenIds?: boolean;
  /** Push the trainer's weights to the servers (load/reload); see the header. */
  weightSync?: { mode: WeightSyncMode; timeoutMs: number; pollMs?: number };
  /** How long a request refused as stale (HTTP 409) is retried before it fails (default 30 s). */
  staleTimeoutMs?: number;
}

interface Endpoint {
  url: string;
  inFlight: number;
}

class Retryable extends Error {}
/** The server serves another weight version than the request asked for (retried until staleTimeoutMs). */
class Stale extends Error {}

export class OpenAIEngine implements PolicyEngine {
  readonly id: string;
  private readonly endpoints: Endpoint[];
  private rr = 0;
  private reserved = 0;
  private inFlight = 0;
  private closed = false;
  private readonly live = new Set<AbortController>();
  /** The version every server serves (0 after load, +1 per reload); see the header. */
  weightVersion = 0;
  /** Wall ms with at least one request in flight. */
  private busyMs = 0;
  private busySince = 0;
  /** Set while a push runs: requests wait for it. */
  private gate: Promise<void> | null = null;
  private waiting = 0;
  private readonly idle: (() => void)[] = [];
  /** The `model` requests name (vllm-lora: the current adapter). */
  private served: string;
  /** Requests refused as stale so far (each retry counts). */
  staleRefusals = 0;
  private readonly recent: { at: number; n: number }[] = [];

  constructor(private readonly opts: OpenAIEngineOptions) {
    if (!opts.baseUrls.length) throw new Error('OpenAIEngine needs at least one base URL');
    this.endpoints = opts.baseUrls.map((u) => ({ url: u.replace(/\/+$/, '').replace(/\/v1$/, ''), inFlight: 0 }));
    this.id = opts.id ?? `openai:${opts.model}@${this.endpoints.map((e) => new URL(e.url).host).join(',')}`;
    this.served = opts.model;
  }

  /**
   * The servers to use from now on (a cluster restarted one on a new address): servers still listed keep their
   * counts, new ones start idle. A restarted server serves its start-up weights until the next push; a request it
   * answers with another version is refused as stale and retried, as for any server behind.
   */
  setBaseUrls(urls: string[]) {
    if (urls.length === 0) return;
    const want = urls.map((u) => u.replace(/\/+$/, '').replace(/\/v1$/, ''));
    const kept = this.endpoints.filter((e) => want.includes(e.url));
    const added = want.filter((u) => !kept.some((e) => e.url === u)).map((url) => ({ url, inFlight: 0 }));
    this.endpoints.splice(0, this.endpoints.length, ...kept, ...added);
    this.rr = 0;
  }

  get computeMs(): number {
    return this.busyMs + (this.inFlight > 0 ? performance.now() - this.busySince : 0);
  }

  /** Push the trainer's first export to every server as version 0. */
  load(dir: string): Promise<void> {
    return this.push(dir, 0);
  }

  /** Push a new export as the next version; resolves once every server serves it. */
  reload(dir: string): Promise<void> {
    return this.push(dir, this.weightVersion + 1);
  }

  private async push(dir: string, version: number): Promise<void> {
    const ws = this.opts.weightSync;
    if (!ws)
      throw new Error(
        `${this.id}: no weightSync configured, so weights cannot be pushed to ${this.endpoints.map((e) => e.url).join(', ')}`,
      );
    while (this.gate) await this.gate; // one push at a time
    let open!: () => void;
    this.gate = new Promise<void>((r) => (open = r));
    try {
      if (this.inFlight > 0) await new Promise<void>((r) => this.idle.push(r));
      if (this.closed) throw new Error('engine closed');
      if (ws.mode === 'vllm') pointCurrent(dir);
      // Every server, each to the end: a failure is reported only once the others are done (they may now serve it).
      const done = await Promise.allSettled(
        this.endpoints.map((e) =>
          pushWeights(
            {
              url: e.url,
              apiKey: this.opts.apiKey,
              mode: ws.mode,
              model: this.opts.model,
              timeoutMs: ws.timeoutMs,
              pollMs: ws.pollMs,
            },
            dir,
            version,
          ),
        ),
      );
      const failed = done.flatMap((d) =>
        d.status === 'rejected' ? [d.reason instanceof Error ? d.reason.message : String(d.reason)] : [],
      );
      if (failed.length)
        throw new Error(
          `weight version ${version} (${dir}) did not reach ${failed.length} of ${done.length} server(s): ${failed.join('; ')}`,
        );
      this.weightVersion = version;
      if (ws.mode === 'vllm-lora') this.served = adapterName(this.opts.model, version);
    } finally {
      this.gate = null;
      open();
    }
  }

  stats(): EngineStats[] {
    const now = performance.now();
    while (this.recent.length && now - this.recent[0].at > 5000) this.recent.shift();
    const n = this.recent.reduce((s, x) => s + x.n, 0);
    return [
      {
        id: this.id,
        waiting: this.waiting,
        running: this.inFlight,
        kvBlocksUsed: 0,
        kvBlocksTotal: 0,
        blockTokens: 0,
        tokensPerS: n / 5,
        weightVersion: this.opts.weightSync ? this.weightVersion : null,
      },
    ];
  }

  countTokens(text: string): number {
    return this.opts.tokenizer ? this.opts.tokenizer.encode(text).length : Math.ceil(text.length / 4);
  }

  capacity(): EngineCapacity {
    return {
      totalTokens: this.opts.totalTokens,
      freeTokens: Math.max(0, this.opts.totalTokens - this.reserved),
      inFlight: this.inFlight,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.live) c.abort();
  }

  /** The endpoint with the fewest requests in flight, ties broken round-robin; skips `avoid` when there is another. */
  private pick(avoid?: Endpoint): Endpoint {
    const n = this.endpoints.length;
    let best: Endpoint | null = null;
    for (let i = 0; i < n; i++) {
      const e = this.endpoints[(this.rr + i) % n];
      if (e === avoid && n > 1) continue;
      if (!best || e.inFlight < best.inFlight) best = e;
    }
    this.rr = (this.endpoints.indexOf(best!) + 1) % n;
    return best!;
  }

  async generate(req: GenerateRequest, onChunk?: (c: GenerateChunk) => void): Promise<GenerateResult> {
    const promptTokens = req.promptTokens ?? this.countTokens(req.prompt);
    const base: GenerateResult = {
      text: '',
      tokenIds: [],
      logprobs: null,
      finishReason: 'aborted',
      stopString: null,
      promptTokens,
      weightVersion: null,
    };
    if (this.closed) return { ...base, error: 'engine closed' };
    if (req.signal?.aborted) return base;
    if (this.gate) {
      // A push is under way: wait for it, so this request is served by the new weights only.
      this.waiting++;
      try {
        for (let g = this.gate as Promise<void> | null; g && !req.signal?.aborted; g = this.gate)
          await Promise.race([g, aborted(req.signal)]);
      } finally {
        this.waiting--;
      }
      if (req.signal?.aborted) return base;
      if (this.closed) return { ...base, error: 'engine closed' };
    }
    const reserve = promptTokens + Math.max(0, req.maxTokens);
    this.reserved += reserve;
    if (this.inFlight++ === 0) this.busySince = performance.now();
    const want = this.opts.weightSync ? (req.weightVersion ?? this.weightVersion) : null;
    try {
      let ep: Endpoint | undefined;
      let lastErr = '';
      let staleTries = 0;
      const staleUntil = Date.now() + (this.opts.staleTimeoutMs ?? 30_000);
      for (let attempt = 0; attempt <= this.opts.retries; attempt++) {
        if (attempt > 0 || staleTries > 0) {
          const k = staleTries > 0 ? staleTries - 1 : attempt - 1;
          await sleep(Math.min(2000, (this.opts.backoffMs ?? 100) * 2 ** k), req.signal);
          if (req.signal?.aborted || this.closed) return { ...base, error: this.closed ? 'engine closed' : undefined };
        }
        ep = this.pick(ep);
        try {
          return await this.attempt(ep, req, promptTokens, want, onChunk);
        } catch (e) {
          if (e instanceof Stale) {
            this.staleRefusals++;
            staleTries++;
            attempt--; // a refusal is not a failed attempt: retried until staleUntil
            if (Date.now() >= staleUntil)
              return {
                ...base,
                finishReason: 'error',
                stale: true,
                weightVersion: want,
                error: `${ep.url}: ${e.message} (still after ${this.opts.staleTimeoutMs ?? 30_000} ms of retries)`,
              };
            continue;
          }
          if (!(e instanceof Retryable)) throw e;
          lastErr = `${ep.url}: ${e.message}`;
        }
      }
      return {
        ...base,
        finishReason: 'error',
        error: `no server answered after ${this.opts.retries + 1} attempt(s); last: ${lastErr}`,
      };
    } finally {
      this.reserved -= reserve;
      if (--this.inFlight === 0) {
        this.busyMs += performance.now() - this.busySince;
        for (const r of this.idle.splice(0)) r();
      }
    }
  }

  /** One request to `ep`. Throws Retryable when nothing was received yet and another server may do better. */
  private async attempt(
    ep: Endpoint,
    req: GenerateRequest,
    promptTokens: number,
    want: number | null,
    onChunk?: (c: GenerateChunk) => void,
  ): Promise<GenerateResult> {
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    req.signal?.addEventListener('abort', onAbort);
    this.live.add(ctl);
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        ctl.abort();
      }, this.opts.timeoutMs);
    };
    ep.inFlight++;
    const c = new StreamedCompletion(
      this.opts.tokenizer,
      (n) => this.recent.push({ at: performance.now(), n }),
      onChunk,
    );
    const failed = (msg: string): GenerateResult => {
      if (req.signal?.aborted || (this.closed && !timedOut))
        return c.result('aborted', promptTokens, want, this.closed ? { error: 'engine closed' } : {});
      if (!c.received) throw new Retryable(msg);
      return c.result('error', promptTokens, want, {
        error: `${ep.url}: ${msg} after ${c.tokenIds.length || c.text.length} token(s)/char(s) of output`,
      });
    };
    try {
      arm();
      let res: Response;
      try {
        res = await this.post(ep, this.requestBody(req, want), ctl.signal);
      } catch (e) {
        return failed(timedOut ? `no response in ${this.opts.timeoutMs} ms` : causeOf(e));
      }
      if (!res.ok) {
        const text = await res.text().catch(() => '');
        if (res.status === 409 && /stale_weight_version/.test(text)) throw new Stale(errorText(text));
        const msg = `HTTP ${res.status}: ${errorText(text)}`;
        if (res.status >= 500 || res.status === 429) return failed(msg);
        return c.result('error', promptTokens, want, { error: `${ep.url}: ${msg}` });
      }
      if (!res.body) return failed('response has no body');
      try {
        await readSseData(res.body, arm, (data) => c.handle(data));
      } catch (e) {
        return failed(timedOut ? `stream stalled for ${this.opts.timeoutMs} ms` : causeOf(e));
      }
      if (c.finish === null) return failed('stream ended without a finish_reason');
      return this.finished(ep, req, c, promptTokens, want);
    } finally {
      clearTimeout(timer);
      ep.inFlight--;
      this.live.delete(ctl);
      req.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The body of a streamed /v1/completions request (see the header). */
  private requestBody(req: GenerateRequest, want: number | null): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: this.served,
      prompt: req.prompt,
      max_tokens: req.maxTokens,
      temperature: req.temperature,
      top_p: req.topP,
      stop: req.stop.length ? req.stop : undefined,
      stream: true,
      stream_options: { include_usage: true },
    };
    if (req.seed !== undefined) body.seed = req.seed;
    if (this.opts.logprobs !== false) body.logprobs = 0;
    if (this.opts.returnTokenIds !== false) body.return_token_ids = true;
    if (want !== null && this.opts.weightSync?.mode === 'sglang') body.weight_version = versionLabel(want);
    return body;
  }

  private post(ep: Endpoint, body: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
    return fetch(`${ep.url}/v1/completions`, {
      method: 'POST',
      signal,
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
    });
  }

  /** The result of a stream that finished: an error if its weight version was not the one asked for. */
  private finished(
    ep: Endpoint,
    req: GenerateRequest,
    c: StreamedCompletion,
    promptTokens: number,
    want: number | null,
  ): GenerateResult {
    if (c.mixed !== null || (want !== null && c.served !== null && c.served !== want)) {
      // Never mix silently: this text is not what the caller's weight version would have generated.
      return c.result('error', promptTokens, want, {
        weightVersion: c.served,
        error: `${ep.url}: generated with weight version ${c.mixed ?? c.served}, but the request asked for ${want}`,
      });
    }
    const pt = c.serverPromptTokens ?? promptTokens;
    if (c.finish === 'length') return c.result('length', pt, want);
    const stopString = this.whichStop(req.stop, c.text, c.stopReason);
    if (stopString !== null && !c.text.endsWith(stopString)) c.appendStop(stopString);
    return c.result('stop', pt, want, { stopString });
  }

  private whichStop(stops: string[], text: string, stopReason: unknown): string | null {
    if (typeof stopReason === 'string') return stopReason;
    if (stopReason !== undefined) return null; // null or a stop token id: EOS
    const live = stops.filter(Boolean);
    const atEnd = live.filter((s) => text.endsWith(s)).sort((a, b) => b.length - a.length)[0];
    if (atEnd) return atEnd;
    return live.length === 1 ? live[0] : null;
  }
}

function causeOf(e: unknown): string {
  const err = e as { message?: string; cause?: { code?: string; message?: string } };
  return err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}

/** Resolves when `signal` aborts (never without one). */
function aborted(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve();
    else signal?.addEventListener('abort', () => resolve(), { once: true });
  });
}
