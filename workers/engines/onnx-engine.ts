/**
 * The embedded inference engine: an HF-format decoder (Qwen3, Qwen2, Llama) exported by workers/trainer/export_onnx.py
 * (its static-cache graph), run by onnxruntime-node on the CPU, with a slot KV cache (workers/engines/slot-cache.ts),
 * continuous batching and prefix reuse; the model's own tokenizer.json through HfTokenizer.
 *
 * Decode loop (one at a time, runs while there is work):
 *   1. Step boundary: apply a pending reload once nothing runs; drop aborted requests; admit waiting requests while
 *      the batch has room (maxBatch slots and the token budget). An admitted request takes the next free row and
 *      starts from the parked cache of its session's earlier turn (prefix reuse: the longest common prefix of the
 *      token ids), then only the rest of the prompt is prefilled (batch 1), and its first token sampled. A request
 *      with a shared prompt (a GRPO group's first turn) and no cache of its own starts from the shared cache of
 *      the same prompt's tokens but the last, prefilling those once for the group if no request did yet.
 *   2. One batched decode step over every running request: rows [0, n) of the cache are the past as they lie, the
 *      graph writes nothing back; the engine stores each row's new key/value at its next position.
 *   3. Each request samples its next token with its own PRNG (workers/engines/sampling.ts), streams it, and
 *      leaves the batch when finished (EOS, stop string, max tokens, context full, abort). A finished row's cache
 *      is parked (copied out once, LRU within prefixCacheTokens) so the trajectory's next turn reuses it, and the
 *      last row moves into its slot so the batch stays contiguous.
 * Requests therefore join and leave between decode steps; nothing waits for the batch to drain.
 *
 * Finish rules: EOS token → 'stop' (EOS id in tokenIds, not in text, stopString null). Stop strings are checked on
 * the text (decoded incrementally: workers/engines/detokenize.ts) after every token; the text is cut just after the
 * earliest stop string, which stays in the text and is reported in stopString. maxTokens generated, or the context
 * (block_size) full → 'length'. Abort signal → 'aborted' at the next step boundary. A prompt that is empty or does
 * not leave room for one new token in block_size → 'error'. A request for another weight version than the one
 * served → 'error' with stale: true. Logprobs and entropies are those of the raw model distribution (sampleToken).
 *
 * Hot reload: reload(dir) loads the new model beside the running one; from then on nothing new is admitted, the
 * running requests finish on the old weights, and the swap happens at the first step boundary with none running
 * (in RL the reload comes between steps, when nothing runs). Parked caches are dropped (they hold old activations).
 * Every result carries the weight version it was generated with; reload() resolves once the new weights serve.
 */
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { EngineDevice } from '../../contracts/engine.ts';
import type {
  BatchCounters,
  EngineCapacity,
  EngineStats,
  GenerateChunk,
  GenerateRequest,
  GenerateResult,
  PolicyEngine,
} from './types.ts';
import { type Loaded, loadDir, type ModelConfig, sameShape } from './onnx-model.ts';

export type { ModelConfig } from './onnx-model.ts';
import type { Tokenizer } from './tokenizer.ts';
import { type LogitStats, mulberry32, sampleToken } from './sampling.ts';
import { CAPACITY_STEP, SlotCache } from './slot-cache.ts';
import { MIN_REUSE, ParkedCaches } from './parked-caches.ts';
import { detokStep, newDetok, type DetokState } from './detokenize.ts';

/** config.json of an export (export_onnx.py engine_config). */
export interface OnnxEngineOptions {
  id?: string;
  /** Most requests in the running batch, i.e. cache slots (default 8). */
  maxBatch?: number;
  /** Token budget reported by capacity() (default maxBatch * block_size). */
  totalTokens?: number;
  /** onnxruntime intra-op threads (default: onnxruntime's choice). */
  threads?: number;
  /**
   * Whether onnxruntime's idle threads spin (its default) or sleep between operators. Spinning is faster on cores of
   * its own and burns the cores a trainer beside it needs (async RL on a few cores).
   */
  spin?: boolean;
  /** Where onnxruntime runs the model (default cpu). */
  device?: EngineDevice;
  /**
   * Tokens of finished requests' caches kept for prefix reuse, least recently used evicted first (default
   * 8 × maxBatch × block_size; 0 = off). A trajectory whose cache was evicted has its next turn prefilled again:
   * the same tokens, but float rounding may differ from the reused path.
   */
  prefixCacheTokens?: number;
  /**
   * Positions per cache row to start from (default CAPACITY_STEP); rows grow as they need (slot-cache.ts). The whole
   * context (block_size) is the engine as it was before the capacity grew: bench:engine runs it side by side.
   */
  cacheStart?: number;
}

/** Tokens per KV block in the dashboard's figures (the cache itself is slot-based). */
const BLOCK_TOKENS = 16;

interface Seq {
  req: GenerateRequest;
  onChunk?: (c: GenerateChunk) => void;
  resolve: (r: GenerateResult) => void;
  prompt: number[];
  reserved: number;
  rng: () => number;
  /** Cache row while running, -1 otherwise. */
  row: number;
  /** Positions filled in the cache (prompt + generated tokens already fed). */
  len: number;
  /** Sampled, not yet fed to the model. */
  next: number;
  out: number[];
  logprobs: number[];
  entropies: number[];
  text: string;
  detok: DetokState;
  /** Prompt tokens taken from a cached prefix instead of prefilled. */
  reused: number;
  done: boolean;
  version: number;
}

export class OnnxEngine implements PolicyEngine {
  readonly id: string;
  private m: Loaded;
  private cache: SlotCache;
  private readonly maxBatch: number;
  private readonly totalTokens: number;
  private readonly waiting: Seq[] = [];
  /** running[i] holds cache row i. */
  private readonly running: Seq[] = [];
  private readonly parked: ParkedCaches;
  private loop: Promise<void> | null = null;
  private closed = false;
  private pendingReload: { next: Loaded; resolve: () => void } | null = null;
  private readonly recent: { at: number; tokens: number }[] = [];
  /** Decode steps run so far (batched steps, not prefills). */
  steps = 0;
  /** Sum of batch sizes over decode steps (steps × mean batch), and ms spent inside the model (prefill + decode). */
  stepRows = 0;
  computeMs = 0;
  prefillMs = 0;
  get batchCounters(): BatchCounters {
    return { decodeSteps: this.steps, decodeRows: this.stepRows, prefillMs: this.prefillMs };
  }
  /** Prompt tokens prefilled, and prompt tokens taken from cached prefixes instead. */
  prefillTokens = 0;
  reusedTokens = 0;
  /** Incremented by every completed reload. */
  weightVersion = 0;

  private constructor(
    m: Loaded,
    private readonly opts: OnnxEngineOptions,
  ) {
    this.m = m;
    this.id = opts.id ?? `onnx:${path.basename(m.dir)}`;
    this.maxBatch = opts.maxBatch ?? 8;
    this.totalTokens = opts.totalTokens ?? this.maxBatch * m.config.block_size;
    this.parked = new ParkedCaches(opts.prefixCacheTokens ?? 8 * this.maxBatch * m.config.block_size);
    this.cache = this.newCache(m.config);
  }

  /** Load model.onnx, config.json and tokenizer.json from `dir`. */
  static async load(dir: string, opts: OnnxEngineOptions = {}): Promise<OnnxEngine> {
    return new OnnxEngine(await loadDir(dir, opts), opts);
  }

  get tokenizer(): Tokenizer {
    return this.m.tokenizer;
  }
  get config(): ModelConfig {
    return this.m.config;
  }

  countTokens(text: string): number {
    return this.m.tokenizer.encode(text).length;
  }

  capacity(): EngineCapacity {
    const live = [...this.running, ...this.waiting].filter((q) => !q.done); // finished rows leave at the next boundary
    const reserved = live.reduce((s, q) => s + q.reserved, 0);
    return {
      totalTokens: this.totalTokens,
      freeTokens: Math.max(0, this.totalTokens - reserved),
      inFlight: live.length,
    };
  }

  stats(): EngineStats[] {
    const blocks = (n: number) => Math.ceil(n / BLOCK_TOKENS);
    const now = performance.now();
    while (this.recent.length && now - this.recent[0].at > 5000) this.recent.shift();
    const span = this.recent.length ? Math.max(1000, now - this.recent[0].at) : 1000;
    return [
      {
        id: this.id,
        waiting: this.waiting.length,
        running: this.running.filter((q) => !q.done).length,
        kvBlocksUsed:
          this.running.reduce((s, q) => s + blocks(q.len), 0) + this.parked.tokens.reduce((s, n) => s + blocks(n), 0),
        kvBlocksTotal: blocks(this.maxBatch * this.m.config.block_size) + blocks(this.parked.budget),
        blockTokens: BLOCK_TOKENS,
        tokensPerS: (this.recent.reduce((s, r) => s + r.tokens, 0) * 1000) / span,
        weightVersion: this.weightVersion,
      },
    ];
  }

  generate(req: GenerateRequest, onChunk?: (c: GenerateChunk) => void): Promise<GenerateResult> {
    return new Promise((resolve) => {
      const prompt = this.m.tokenizer.encode(req.prompt);
      const bs = this.m.config.block_size;
      const base = {
        text: '',
        tokenIds: [],
        logprobs: [],
        entropies: [],
        stopString: null,
        promptTokens: prompt.length,
        weightVersion: this.weightVersion,
      };
      if (this.closed) return resolve({ ...base, finishReason: 'aborted', error: 'engine closed' });
      if (req.weightVersion !== undefined && req.weightVersion !== this.weightVersion) {
        return resolve({
          ...base,
          finishReason: 'error',
          stale: true,
          error: `the request is for weight version ${req.weightVersion}; this engine serves version ${this.weightVersion}`,
        });
      }
      if (prompt.length === 0) return resolve({ ...base, finishReason: 'error', error: 'empty prompt' });
      if (prompt.length >= bs)
        return resolve({
          ...base,
          finishReason: 'error',
          error: `prompt of ${prompt.length} tokens leaves no room in the context of ${bs}`,
        });
      if (req.signal?.aborted) return resolve({ ...base, finishReason: 'aborted' });
      if (!(req.maxTokens > 0)) return resolve({ ...base, finishReason: 'length' });
      const seed = req.seed ?? Math.floor(Math.random() * 2 ** 32);
      this.waiting.push({
        req,
        onChunk,
        resolve,
        prompt,
        reserved: Math.min(prompt.length + Math.max(0, req.maxTokens), bs),
        rng: mulberry32(seed),
        row: -1,
        len: 0,
        next: -1,
        out: [],
        logprobs: [],
        entropies: [],
        text: '',
        detok: newDetok(),
        reused: 0,
        done: false,
        version: this.weightVersion,
      });
      this.kick();
    });
  }

  /** Swap in the model exported to `dir` (see the header: running requests finish on the old weights first). */
  async reload(dir: string): Promise<void> {
    const next = await loadDir(dir, this.opts);
    if (this.closed) {
      await next.session.release();
      throw new Error('engine closed');
    }
    await new Promise<void>((resolve) => {
      const prev = this.pendingReload;
      this.pendingReload = {
        next,
        resolve: () => {
          prev?.resolve();
          resolve();
        },
      };
      if (prev) void prev.next.session.release();
      this.kick();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.loop;
    for (const q of this.waiting.splice(0)) this.finish(q, 'aborted', null, 'engine closed');
    if (this.pendingReload) {
      await this.pendingReload.next.session.release();
      this.pendingReload.resolve();
      this.pendingReload = null;
    }
    this.parked.clear();
    await this.m.session.release();
  }

  // ——— the loop ———

  private newCache(c: ModelConfig): SlotCache {
    return new SlotCache(
      c.n_layer,
      this.maxBatch,
      c.n_kv_head,
      c.head_dim,
      c.block_size,
      this.opts.cacheStart ?? CAPACITY_STEP,
    );
  }

  private kick(): void {
    if (this.loop) return;
    this.loop = this.run().finally(() => {
      this.loop = null;
      if (!this.closed && (this.waiting.length || this.pendingReload)) this.kick();
    });
  }

  private async run(): Promise<void> {
    while (!this.closed && (this.waiting.length || this.running.length || this.pendingReload)) {
      this.applyReload();
      for (const q of [...this.running, ...this.waiting]) if (q.req.signal?.aborted) this.finish(q, 'aborted');
      this.reap();
      while (!this.pendingReload && this.waiting.length && this.running.length < this.maxBatch) {
        const reserved = this.running.reduce((s, q) => s + q.reserved, 0); // reap() ran: all live
        if (this.running.length > 0 && reserved + this.waiting[0].reserved > this.totalTokens) break;
        const q = this.waiting.shift()!;
        if (q.req.weightVersion !== undefined && q.req.weightVersion !== this.weightVersion) {
          this.finish(
            q,
            'error',
            null,
            `the request is for weight version ${q.req.weightVersion}; this engine serves version ${this.weightVersion}`,
            true,
          );
          continue;
        }
        q.row = this.running.length;
        q.version = this.weightVersion;
        this.running.push(q);
        const t0 = performance.now();
        await this.guard([q], () => this.prefill(q));
        this.computeMs += performance.now() - t0;
        this.prefillMs += performance.now() - t0;
        this.reap();
      }
      if (this.running.length) {
        const t0 = performance.now();
        await this.guard([...this.running], () => this.decodeStep());
        this.computeMs += performance.now() - t0;
        this.reap();
      }
      await new Promise((r) => setImmediate(r)); // let new requests, aborts and reloads in
    }
    if (this.closed) for (const q of [...this.running]) this.finish(q, 'aborted', null, 'engine closed');
    this.reap();
    this.cache.reset(); // nothing runs: the next batch grows it to what it needs
  }

  private applyReload(): void {
    const p = this.pendingReload;
    if (!p || this.running.length) return; // running requests finish on the weights they started with
    const old = this.m;
    this.m = p.next;
    if (!sameShape(p.next.config, old.config)) this.cache = this.newCache(p.next.config);
    this.parked.clear();
    this.pendingReload = null;
    this.weightVersion++;
    void old.session.release();
    p.resolve();
  }

  private async guard(qs: Seq[], f: () => Promise<void>): Promise<void> {
    try {
      await f();
    } catch (e) {
      for (const q of qs) if (!q.done) this.finish(q, 'error', null, e instanceof Error ? e.message : String(e));
    }
  }

  /** Remove finished requests from the batch: park their caches, keep the rows contiguous. */
  private reap(): void {
    for (let i = this.running.length - 1; i >= 0; i--) {
      const q = this.running[i];
      if (!q.done) continue;
      if (q.len >= MIN_REUSE && this.parked.budget > 0 && q.version === this.weightVersion) this.park(q);
      const last = this.running.pop()!;
      if (last !== q) {
        this.cache.copyRow(last.row, q.row, last.len);
        last.row = q.row;
        this.running[i] = last;
      }
      q.row = -1;
    }
  }

  private park(q: Seq): void {
    const tokens = [...q.prompt, ...q.out].slice(0, q.len);
    this.parked.keep(this.cache.extract(q.row, tokens), { session: q.req.sessionId });
  }

  /** Start `q` from the longest parked prefix of its prompt (ParkedCaches.take); returns its length. */
  private reusePrefix(q: Seq): number {
    const found = this.parked.take(q.prompt, q.req.sessionId, q.prompt.length - 1); // the last token is always fed
    if (!found) {
      this.cache.fill(q.row, 0);
      return 0;
    }
    this.cache.load(q.row, found.from, found.n);
    return found.n;
  }

  private feeds(ids: number[], pos: number[], mask: Float32Array, B: number, T: number, row: number) {
    const { n_layer, n_kv_head: H, head_dim: D } = this.m.config;
    const L = this.cache.cap;
    const f: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [B, T]),
      position_ids: new ort.Tensor('int64', BigInt64Array.from(pos, BigInt), [B, T]),
      attention_mask: new ort.Tensor('float32', mask, [B, L + T]),
    };
    for (let l = 0; l < n_layer; l++) {
      f[`past_key_${l}`] = new ort.Tensor('float32', this.cache.keyRows(l, row, B), [B, H, D, L]);
      f[`past_value_${l}`] = new ort.Tensor('float32', this.cache.valueRows(l, row, B), [B, H, L, D]);
    }
    return f;
  }

  private store(
    out: ort.InferenceSession.OnnxValueMapType,
    B: number,
    T: number,
    rowOf: (b: number) => number,
    at: (b: number) => number,
  ): void {
    for (let l = 0; l < this.m.config.n_layer; l++) {
      const k = out[`new_key_${l}`].data as Float32Array,
        v = out[`new_value_${l}`].data as Float32Array;
      for (let b = 0; b < B; b++) this.cache.write(l, rowOf(b), at(b), k, v, b, T);
    }
  }

  private async prefill(q: Seq): Promise<void> {
    this.cache.grow(q.prompt.length, this.running.length); // rows [0, running) hold live requests, q the last
    let p = this.reusePrefix(q);
    q.reused = p;
    const shared = q.prompt.length - 1; // the last prompt token is always fed, for its logits
    if (p === 0 && q.req.sharedPrompt && shared >= MIN_REUSE) {
      const s = this.parked.shared(q.prompt, shared);
      if (s) {
        this.cache.load(q.row, s, shared);
        q.reused = shared;
      } else {
        // The first of the group: its tokens but the last as one piece, kept for the others.
        if (!(await this.prefillFrom(q, 0, shared))) return;
        this.parked.keep(this.cache.extract(q.row, q.prompt.slice(0, shared)), { shared: true });
      }
      p = shared;
    }
    const out = await this.prefillFrom(q, p, q.prompt.length);
    if (!out) return;
    this.reusedTokens += q.reused;
    this.accept(q, out.logits.data as Float32Array, rowStats(out, 0));
  }

  /** Run q's prompt tokens [from, to) through the model into its row (batch 1); null if q finished meanwhile. */
  private async prefillFrom(q: Seq, from: number, to: number) {
    const L = this.cache.cap;
    const rest = q.prompt.slice(from, to);
    const T = rest.length;
    const mask = new Float32Array(L + T);
    mask.set(this.cache.maskRows(q.row, 1).subarray(0, L));
    mask.fill(1, L);
    const out = await this.m.session.run(
      this.feeds(
        rest,
        rest.map((_, i) => from + i),
        mask,
        1,
        T,
        q.row,
      ),
    );
    if (q.done) return null;
    this.store(
      out,
      1,
      T,
      () => q.row,
      () => from,
    );
    q.len = to;
    this.cache.fill(q.row, q.len);
    this.prefillTokens += T;
    return out;
  }

  private async decodeStep(): Promise<void> {
    const batch = [...this.running];
    const B = batch.length;
    this.cache.grow(Math.max(...batch.map((q) => q.len)) + 1, B); // each row writes its next position
    const out = await this.m.session.run(
      this.feeds(
        batch.map((q) => q.next),
        batch.map((q) => q.len),
        this.cache.maskRows(0, B),
        B,
        1,
        0,
      ),
    );
    this.steps++;
    this.stepRows += B;
    const V = this.m.config.vocab_size;
    const logits = out.logits.data as Float32Array;
    this.store(
      out,
      B,
      1,
      (b) => b,
      (b) => batch[b].len,
    );
    batch.forEach((q, b) => {
      if (q.done) return; // aborted or closed while the step ran
      this.cache.mask[q.row * (this.cache.cap + 1) + q.len] = 1;
      q.len++;
      this.accept(q, logits.subarray(b * V, (b + 1) * V), rowStats(out, b));
    });
    this.recent.push({ at: performance.now(), tokens: B });
  }

  /** Sample the next token from `logits`, stream it, and finish the request if it is done. */
  private accept(q: Seq, logits: Float32Array, stats?: LogitStats): void {
    const { id, logprob, entropy } = sampleToken(
      logits,
      { temperature: q.req.temperature, topP: q.req.topP },
      q.rng,
      stats,
    );
    q.out.push(id);
    q.logprobs.push(logprob);
    q.entropies.push(entropy);
    q.next = id;
    const tok = this.m.tokenizer;
    const eos = tok.eosId !== undefined && id === tok.eosId;
    const before = q.text.length;
    const full = q.out.length >= q.req.maxTokens || q.len + 1 >= this.m.config.block_size;
    if (!eos) q.text += detokStep(tok, q.out, q.detok, full);
    let stop: string | null = null;
    let cut = Infinity;
    for (const s of q.req.stop) {
      if (!s) continue;
      const at = q.text.indexOf(s, Math.max(0, before - s.length + 1));
      if (at >= 0 && at + s.length < cut) {
        cut = at + s.length;
        stop = s;
      }
    }
    if (stop !== null) q.text = q.text.slice(0, cut);
    q.onChunk?.({ text: q.text.slice(before), tokenIds: [id], logprobs: [logprob] });
    if (eos || stop !== null) this.finish(q, 'stop', stop);
    else if (full) this.finish(q, 'length');
  }

  private finish(
    q: Seq,
    reason: GenerateResult['finishReason'],
    stop: string | null = null,
    error?: string,
    stale = false,
  ): void {
    if (q.done) return;
    q.done = true;
    const i = this.waiting.indexOf(q);
    if (i >= 0) this.waiting.splice(i, 1);
    q.resolve({
      text: q.text,
      tokenIds: q.out,
      logprobs: q.logprobs,
      entropies: q.entropies,
      finishReason: reason,
      stopString: stop,
      promptTokens: q.prompt.length,
      weightVersion: q.version,
      ...(error ? { error } : {}),
      ...(stale ? { stale } : {}),
    });
  }
}

/** Row b's log-sum-exp and entropy where the graph computes them (exports since 2026-12-07; older ones: undefined,
 *  and the sampler computes them itself). */
function rowStats(out: ort.InferenceSession.OnnxValueMapType, b: number): LogitStats | undefined {
  const lse = out.logsumexp?.data as Float64Array | undefined;
  const h = out.entropy?.data as Float64Array | undefined;
  return lse && h ? { logSumExp: lse[b]!, entropy: h[b]! } : undefined;
}
