/**
 * An OpenAI-compatible HTTP front for any InferenceEngine (in practice the embedded OnnxEngine), so that OpenAI
 * clients, and OpenAIEngine on another machine, can talk to a trained model. Served by `npx toolsmith serve-model`.
 *
 * Routes:
 *   GET  /v1/models, GET /v1/models/{id}   the one served model
 *   POST /v1/completions                   raw-prompt completions, streaming (SSE) or not
 *   GET  /health                           200 "ok" (no API key needed)
 *   POST /update_weights_from_disk         SGLang's reload API (below); always needs the API key
 *   GET  /get_weight_version, /model_info  {weight_version} (SGLang's; /model_info adds model_path)
 *
 * Weight versions (SGLang's API, so OpenAIEngine's weight sync runs against this server end to end): the server
 * serves one version label at a time (`weightVersion`, default "0"). POST /update_weights_from_disk {model_path,
 * weight_version?} loads the export at model_path (its model.onnx, or <model_path>/onnx/model.onnx: the trainer
 * writes the HF weights and, for this server, the ONNX export beside them), which must lie under one of
 * `weightRoots` (resolved, symlinks followed; none configured: 403). While it runs, new completions wait, the ones
 * in flight finish on the old weights (as SGLang's update lock does), then the engine reloads and the label becomes
 * weight_version (omitted: unchanged, as SGLang). Answers {success, message, num_paused_requests: 0}; 400 with
 * success false when the load fails (the old weights keep serving). Updates run one at a time.
 * A completion may name `weight_version`: a server on another version refuses it with HTTP 409, error code
 * `stale_weight_version`, and the served label as top-level `weight_version`, before generating anything. Every
 * completion body and every stream chunk carries `weight_version`: the label it was generated with.
 *
 * /v1/completions request fields (validated with zod; a bad field → 400 `{error:{message,type,param,code}}` with
 * `param` naming the field; unknown fields such as `user` or `frequency_penalty` are ignored, as OpenAI clients send
 * them): model (must be the served id), prompt (string, or an array holding exactly one string), max_tokens (≥ 0,
 * default 16), temperature (0..2, default 1; 0 = greedy), top_p (0 < p ≤ 1, default 1), seed, stop (string or up to
 * 16 strings), stream, stream_options.include_usage, logprobs (integer 0..5 or null), n (only 1), echo (only false),
 * and the vLLM extension `return_token_ids` (boolean).
 *
 * Response: OpenAI's `text_completion` object. Differences and extensions, all as vLLM does them:
 *   - The stop string that ended generation is NOT in `text` (OpenAI behaviour; the engine keeps it, we strip it);
 *     `choices[i].stop_reason` names it (vLLM), or is null when the model emitted EOS or the length ran out.
 *   - `logprobs` (when requested): `tokens`, `token_logprobs` (of the sampled token under the raw model
 *     distribution), `text_offset` (offsets into prompt + completion, as OpenAI), and `top_logprobs: null` — the
 *     engine does not report alternatives, whatever integer was asked for.
 *   - `return_token_ids: true` adds `choices[i].token_ids` (the generated ids; in a stream, each chunk's new ids) and
 *     `choices[i].prompt_token_ids` (non-stream, and the first stream chunk), when the engine has a tokenizer.
 *   - Streaming: `data: {chunk}\n\n` … `data: [DONE]\n\n`. Text that could be the start of a stop string is held back
 *     until it is known not to be one, so streamed text never contains the (stripped) stop string; token ids and
 *     logprobs are sent as they are sampled. With stream_options.include_usage, a last chunk with `choices: []` and
 *     `usage` precedes [DONE]. An engine error after streaming began is sent as `data: {"error":{...}}` then [DONE].
 * A client that disconnects aborts its request in the engine.
 *
 * Exposure (a web page must not be able to swap the weights or run completions): every request's Host must be one
 * of `allowedHosts` (else 421: DNS rebinding) and an Origin header, when sent, must name one too (else 403: a
 * browser page). The reload route needs the API key even on loopback, so without a key reloads are off (401).
 * A server without a key refuses to listen beyond loopback. Slow clients are cut off: headers within
 * `headersTimeoutMs`, the whole request within `requestTimeoutMs` (the response may take as long as it takes).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { bindRefusal, checkServiceRequest, LOOPBACK_HOSTS } from '../../contracts/hosts.ts';
import type { GenerateResult, InferenceEngine } from './types.ts';
import type { Tokenizer } from './tokenizer.ts';
import {
  CompletionBody,
  CompletionEvents,
  completionJson,
  errorBody,
  HttpError,
  type ReplyInfo,
  sendJson,
  sha256,
  UpdateBody,
} from './openai-wire.ts';

export interface OpenAIServerOptions {
  engine: InferenceEngine & { tokenizer?: Tokenizer; reload?(dir: string): Promise<void> };
  /** Folders /update_weights_from_disk may load from (none: it answers 403). */
  weightRoots?: string[];
  /** The label of the weights the engine starts with (SGLang's --weight-version; default "0"). */
  weightVersion?: string;
  /** The id clients pass as `model` and /v1/models lists. */
  model: string;
  /** When set, every /v1 route needs `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  host?: string;
  port?: number;
  /** Largest request body (default 8 MiB). */
  maxBodyBytes?: number;
  /** Host values it answers to (default: the loopback names and `host`); cli/listen.ts serviceAllowedHosts. */
  allowedHosts?: string[];
  /** Time a client has to send its request headers (default 20 s) and its whole request (default 120 s). */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
}

export class OpenAIServer {
  private server: http.Server | null = null;
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly inFlight = new Set<AbortController>();
  private readonly key: Buffer | null;
  /** The weight version label being served. */
  private version: string;
  /** The checkpoint the engine last loaded through /update_weights_from_disk (null: its start-up one). */
  private modelPath: string | null = null;
  /** Set while an update runs: completions wait for it. */
  private updating: Promise<void> | null = null;

  private readonly allowedHosts: string[];

  constructor(private readonly opts: OpenAIServerOptions) {
    this.key = opts.apiKey ? Buffer.from(opts.apiKey) : null;
    this.version = opts.weightVersion ?? '0';
    const host = opts.host ?? '127.0.0.1';
    this.allowedHosts = opts.allowedHosts ?? [
      ...LOOPBACK_HOSTS,
      host.includes(':') && !host.startsWith('[') ? `[${host}]` : host,
    ];
  }

  /** The weight version label served now. */
  get weightVersion(): string {
    return this.version;
  }

  /** Start listening; resolves with the base URL (`http://host:port`, without /v1). */
  listen(): Promise<{ url: string; port: number; host: string }> {
    const refused = bindRefusal(this.opts.host ?? '127.0.0.1', this.key !== null, {
      service: 'serve-model',
      tokenHow: 'set TOOLSMITH_SERVE_API_KEY or pass --api-key-file FILE',
    });
    if (refused) return Promise.reject(new Error(refused));
    const headersTimeout = this.opts.headersTimeoutMs ?? 20_000;
    const requestTimeout = Math.max(headersTimeout, this.opts.requestTimeoutMs ?? 120_000);
    // Node checks these timeouts every connectionsCheckingInterval (30 s by default): check often enough to matter.
    const server = http.createServer(
      { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1000, headersTimeout) },
      (req, res) => {
        this.handle(req, res).catch((e) => {
          const err =
            e instanceof HttpError
              ? e
              : new HttpError(500, e instanceof Error ? e.message : String(e), null, null, 'server_error');
          if (!res.headersSent) sendJson(res, err.status, errorBody(err.message, err.type, err.param, err.code));
          else res.end();
        });
      },
    );
    this.server = server;
    const host = this.opts.host ?? '127.0.0.1';
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port ?? 8000, host, () => {
        server.off('error', reject);
        const port = (server.address() as AddressInfo).port;
        const shown = host.includes(':') ? `[${host}]` : host;
        resolve({ url: `http://${shown}:${port}`, port, host });
      });
    });
  }

  /** Stop accepting connections, give requests in flight `graceMs` to finish, then abort them. */
  async close(graceMs = 10000): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeIdleConnections();
    const deadline = Date.now() + graceMs;
    while (this.inFlight.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const c of this.inFlight) c.abort();
    server.closeAllConnections();
    await closed;
  }

  private authorised(req: http.IncomingMessage): boolean {
    if (!this.key) return true;
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (!m) return false;
    // Fixed-length digests: neither the key's content nor its length leaks through timing.
    return timingSafeEqual(sha256(Buffer.from(m[1].trim())), sha256(this.key));
  }

  private modelCard() {
    return { id: this.opts.model, object: 'model', created: this.created, owned_by: 'toolsmith' };
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const p = url.pathname.replace(/\/+$/, '') || '/';
    const refusal = checkServiceRequest({ host: req.headers.host, origin: req.headers.origin }, this.allowedHosts);
    if (refusal)
      throw new HttpError(
        refusal.status,
        refusal.message,
        null,
        refusal.status === 421 ? 'misdirected_request' : 'forbidden_origin',
      );
    if (p === '/health' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    const weights =
      p === '/update_weights_from_disk' ||
      p === '/get_weight_version' ||
      p === '/model_info' ||
      p === '/get_model_info';
    if (!p.startsWith('/v1/') && !weights) throw new HttpError(404, `no route ${req.method} ${p}`, null, 'not_found');
    // Swapping the served weights always needs the key: without one configured, reloads are off.
    if (p === '/update_weights_from_disk' && !this.key)
      throw new HttpError(
        401,
        'weight reloads need an API key: start serve-model with TOOLSMITH_SERVE_API_KEY or --api-key-file FILE and send Authorization: Bearer <key>',
        null,
        'invalid_api_key',
      );
    if (!this.authorised(req))
      throw new HttpError(
        401,
        'Incorrect API key provided (send Authorization: Bearer <key>)',
        null,
        'invalid_api_key',
      );
    if (p === '/update_weights_from_disk') {
      if (req.method !== 'POST') throw new HttpError(405, 'use POST /update_weights_from_disk');
      return this.updateWeights(res, await this.readBody(req));
    }
    if (weights) {
      if (req.method !== 'GET') throw new HttpError(405, `use GET ${p}`);
      const info: Record<string, unknown> = { weight_version: this.version };
      if (p !== '/get_weight_version') Object.assign(info, { model_path: this.modelPath, is_generation: true });
      return sendJson(res, 200, info);
    }
    if (p === '/v1/models' && req.method === 'GET')
      return sendJson(res, 200, { object: 'list', data: [this.modelCard()] });
    if (p.startsWith('/v1/models/') && req.method === 'GET') {
      const id = decodeURIComponent(p.slice('/v1/models/'.length));
      if (id !== this.opts.model)
        throw new HttpError(404, `The model \`${id}\` does not exist`, 'model', 'model_not_found');
      return sendJson(res, 200, this.modelCard());
    }
    if (p === '/v1/completions') {
      if (req.method !== 'POST') throw new HttpError(405, 'use POST /v1/completions');
      return this.completions(req, res, await this.readBody(req));
    }
    throw new HttpError(404, `no route ${req.method} ${p}`, null, 'not_found');
  }

  /** POST /update_weights_from_disk (see the header). */
  private async updateWeights(res: http.ServerResponse, raw: unknown): Promise<void> {
    const parsed = UpdateBody.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return sendJson(res, 400, {
        success: false,
        message: `${issue.path.map(String).join('.') || 'body'}: ${issue.message}`,
        num_paused_requests: 0,
      });
    }
    const b = parsed.data;
    const engine = this.opts.engine;
    if (!engine.reload)
      return sendJson(res, 400, {
        success: false,
        message: 'this engine cannot reload weights',
        num_paused_requests: 0,
      });
    const roots = this.opts.weightRoots ?? [];
    if (!roots.length)
      return sendJson(res, 403, {
        success: false,
        message: 'weight updates are off: start serve-model with --weights-root DIR',
        num_paused_requests: 0,
      });
    let dir: string;
    try {
      dir = fs.realpathSync(b.model_path);
    } catch {
      return sendJson(res, 400, {
        success: false,
        message: `model_path: no such directory ${b.model_path}`,
        num_paused_requests: 0,
      });
    }
    const under = roots.some((r) => {
      let real = r;
      try {
        real = fs.realpathSync(r);
      } catch {
        /* missing root */
      }
      const rel = path.relative(real, dir);
      return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
    });
    if (!under)
      return sendJson(res, 403, {
        success: false,
        message: `model_path: ${b.model_path} is not under the weights root${roots.length > 1 ? 's' : ''} ${roots.join(', ')}`,
        num_paused_requests: 0,
      });
    const onnx = [dir, path.join(dir, 'onnx')].find((d) => fs.existsSync(path.join(d, 'model.onnx')));
    if (!onnx)
      return sendJson(res, 400, {
        success: false,
        message: `model_path: no model.onnx in ${b.model_path} or its onnx/ folder (serve-model loads ONNX exports: set engine.weightSync.onnx so the trainer writes one, or run workers/trainer/export_onnx.py --model DIR --out DIR/onnx)`,
        num_paused_requests: 0,
      });
    for (let u = this.updating as Promise<void> | null; u; u = this.updating) await u.catch(() => {});
    let done!: () => void;
    this.updating = new Promise<void>((r) => (done = r));
    try {
      while (this.inFlight.size) await new Promise((r) => setTimeout(r, 10)); // requests in flight finish on the old weights
      await engine.reload(onnx);
      this.modelPath = dir;
      if (b.weight_version != null) this.version = String(b.weight_version);
      sendJson(res, 200, {
        success: true,
        message: `Succeeded to update model weights.${b.weight_version != null ? ` Weight version updated to ${this.version}.` : ''}`,
        num_paused_requests: 0,
      });
    } catch (e) {
      sendJson(res, 400, {
        success: false,
        message: `loading ${onnx} failed: ${e instanceof Error ? e.message : String(e)}`,
        num_paused_requests: 0,
      });
    } finally {
      this.updating = null;
      done();
    }
  }

  private async readBody(req: http.IncomingMessage): Promise<unknown> {
    const max = this.opts.maxBodyBytes ?? 8 * 1024 * 1024;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > max) throw new HttpError(413, `request body over ${max} bytes`);
      chunks.push(c as Buffer);
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw new HttpError(400, 'request body is not valid JSON');
    }
  }

  private async completions(req: http.IncomingMessage, res: http.ServerResponse, raw: unknown): Promise<void> {
    const b = parseCompletion(raw);
    // Wait out an update, then check the version and join the in-flight set in the same tick (updateWeights
    // drains that set, so nothing admitted here runs across a reload).
    for (let u = this.updating as Promise<void> | null; u; u = this.updating) await u.catch(() => {});
    const version = this.version;
    if (b.weight_version != null && String(b.weight_version) !== version) {
      return sendJson(res, 409, {
        ...errorBody(
          `this server serves weight version ${version}; the request asked for ${b.weight_version} (retry once it is reloaded)`,
          'invalid_request_error',
          'weight_version',
          'stale_weight_version',
        ),
        weight_version: version,
      });
    }
    if (b.model !== this.opts.model)
      throw new HttpError(
        404,
        `The model \`${b.model}\` does not exist (this server serves \`${this.opts.model}\`)`,
        'model',
        'model_not_found',
      );
    const prompt = typeof b.prompt === 'string' ? b.prompt : b.prompt[0];
    const stop = (b.stop == null ? [] : typeof b.stop === 'string' ? [b.stop] : b.stop).filter((s) => s.length > 0);
    const wantIds = b.return_token_ids === true;
    const tok = this.opts.engine.tokenizer;
    const ctl = new AbortController();
    this.inFlight.add(ctl);
    res.on('close', () => {
      if (!res.writableFinished) ctl.abort();
    });
    const greq = {
      prompt,
      maxTokens: b.max_tokens ?? 16,
      temperature: b.temperature ?? 1,
      topP: b.top_p ?? 1,
      seed: b.seed ?? undefined,
      stop,
      signal: ctl.signal,
    };
    const o: ReplyInfo = {
      id: `cmpl-${randomBytes(12).toString('hex')}`,
      created: Math.floor(Date.now() / 1000),
      model: this.opts.model,
      prompt,
      stop,
      wantLogprobs: b.logprobs != null,
      wantIds,
      promptIds: wantIds && tok ? tok.encode(prompt) : undefined,
      includeUsage: b.stream_options?.include_usage === true,
      tokenText: (ids: number[]) => ids.map((i) => (tok ? tok.decode([i]) : '')),
      version,
    };
    try {
      if (!b.stream) {
        const r = await this.opts.engine.generate(greq);
        if (r.finishReason === 'error') throw new HttpError(400, r.error ?? 'generation failed', 'prompt');
        if (r.finishReason === 'aborted') return; // client gone, or server closing
        return sendJson(res, 200, completionJson(r, o));
      }
      await this.stream(res, greq, o);
    } finally {
      this.inFlight.delete(ctl);
    }
  }

  private async stream(
    res: http.ServerResponse,
    greq: Parameters<InferenceEngine['generate']>[0],
    o: ReplyInfo,
  ): Promise<void> {
    const events = new CompletionEvents(res, o);
    let r: GenerateResult;
    try {
      r = await this.opts.engine.generate(greq, events.onChunk);
    } catch (e) {
      r = {
        text: events.text,
        tokenIds: [],
        logprobs: null,
        finishReason: 'error',
        stopString: null,
        promptTokens: 0,
        weightVersion: null,
        error: e instanceof Error ? e.message : String(e),
      };
    }
    if (r.finishReason === 'error') {
      if (!events.started) throw new HttpError(400, r.error ?? 'generation failed', 'prompt');
      res.write(`data: ${JSON.stringify(errorBody(r.error ?? 'generation failed', 'server_error', null, null))}\n\n`);
    } else if (r.finishReason === 'aborted') {
      if (!events.started || res.destroyed) {
        res.destroy();
        return;
      }
    } else {
      events.finish(r);
    }
    events.start();
    res.end('data: [DONE]\n\n');
  }
}

/** A completion request's body, checked: a 400 naming the first field that is wrong. */
function parseCompletion(raw: unknown): CompletionBody {
  const parsed = CompletionBody.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue.path.length ? issue.path.map(String).join('.') : null;
    throw new HttpError(400, `${param ?? 'body'}: ${issue.message}`, param);
  }
  return parsed.data;
}
