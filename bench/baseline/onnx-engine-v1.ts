/**
 * bench:rollout's baseline, kept as it was before the slot cache (one per-step copy of every row's cache, re-prefill at every
 * turn) so the new engine is measured against it side by side on the same model: it runs export_onnx.py's
 * `--graph legacy` export. Not used by the product.
 *
 * The embedded inference engine: an HF-format decoder (Qwen3, Qwen2, Llama) exported by workers/trainer/export_onnx.py,
 * run by onnxruntime-node on the CPU, with a KV cache and continuous batching; the model's own tokenizer.json
 * through HfTokenizer.
 *
 * Decode loop (one at a time, runs while there is work):
 *   1. Step boundary: apply a pending reload; drop aborted requests; admit waiting requests while the batch has
 *      room (maxBatch requests and the token budget). Each admitted request is prefilled on its own (batch 1,
 *      past 0), its first token sampled; it joins the running batch.
 *   2. One batched decode step over every running request: each request's KV cache (length L_b) is copied into
 *      a [B, H, maxL, D] past tensor, right-padded with zeros; attention_mask is 1 on the L_b real positions, 0 on
 *      the padding, 1 on the new token; position_ids = L_b. The new key/value (index maxL of each present
 *      tensor) is appended to each request's own cache.
 *   3. Each request samples its next token with its own PRNG (workers/engines/sampling.ts), streams it, and
 *      leaves the batch when it is finished (EOS, stop string, max tokens, context full, abort).
 * Requests therefore join and leave between decode steps; nothing waits for the batch to drain.
 *
 * Finish rules: EOS token → 'stop' (EOS id in tokenIds, not in text, stopString null). Stop strings are checked on
 * the decoded text after every token; the text is cut just after the earliest stop string, which stays in the
 * text and is reported in stopString. maxTokens generated, or the context (block_size) full → 'length'. Abort
 * signal → 'aborted' at the next step boundary. A prompt that is empty or does not leave room for one new token
 * in block_size → 'error'. Logprobs are those of the raw model distribution (see sampleToken).
 *
 * Hot reload: reload(dir) loads the new model beside the running one and swaps it in at the next step boundary.
 * When the new model has the same shape (layers, heads, head size, vocab, block size) and tokenizer, in-flight
 * requests continue with the new weights on top of KV caches computed by the old ones (as weight sync in
 * vLLM/SGLang does). Otherwise the engine drains first: no new request is admitted, running ones finish on the
 * old weights, then the swap happens. reload() resolves once the new weights are live.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import type {
  EngineCapacity,
  GenerateChunk,
  GenerateRequest,
  GenerateResult,
  InferenceEngine,
  PolicyEngine,
} from '../../workers/engines/types.ts';
import { HfTokenizer } from '../../workers/engines/hf-tokenizer.ts';
import type { Tokenizer } from '../../workers/engines/tokenizer.ts';
import { mulberry32, sampleToken } from '../../workers/engines/sampling.ts';

/** config.json of an export (export_onnx.py engine_config). */
export interface ModelConfig {
  vocab_size: number;
  n_layer: number;
  n_head: number;
  /** Key/value heads (grouped-query attention): the cache's head count. */
  n_kv_head: number;
  n_embd: number;
  block_size: number;
  head_dim: number;
  eos_token_id?: number | null;
}

export interface OnnxEngineOptions {
  id?: string;
  /** Most requests in the running batch (default 8). */
  maxBatch?: number;
  /** Token budget reported by capacity() (default maxBatch * block_size). */
  totalTokens?: number;
  /** onnxruntime intra-op threads (default: onnxruntime's choice). */
  threads?: number;
}

interface Loaded {
  session: ort.InferenceSession;
  config: ModelConfig;
  tokenizer: HfTokenizer;
  tokenizerJson: string;
  dir: string;
}

interface Seq {
  req: GenerateRequest;
  onChunk?: (c: GenerateChunk) => void;
  resolve: (r: GenerateResult) => void;
  prompt: number[];
  reserved: number;
  rng: () => number;
  /** Per layer: key then value, each [H, block_size, D]. */
  kv: Float32Array[];
  len: number;
  /** Sampled, not yet fed to the model. */
  next: number;
  out: number[];
  logprobs: number[];
  text: string;
  done: boolean;
}

async function loadDir(dir: string, threads?: number): Promise<Loaded> {
  const raw = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as ModelConfig;
  const config: ModelConfig = { ...raw, n_kv_head: raw.n_kv_head ?? raw.n_head };
  const tokenizer = HfTokenizer.fromDir(dir);
  const tokenizerJson = fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8');
  if (tokenizer.vocabSize !== config.vocab_size)
    throw new Error(`tokenizer has ${tokenizer.vocabSize} tokens, model ${config.vocab_size}`);
  // Subnormal floats are many times slower on x86; a trained small model's activations have plenty: flush them.
  const opts: ort.InferenceSession.SessionOptions = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    extra: { session: { set_denormal_as_zero: '1' } },
  };
  if (threads) {
    opts.intraOpNumThreads = threads;
    opts.interOpNumThreads = 1;
  }
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), opts);
  return { session, config, tokenizer, tokenizerJson, dir };
}

function sameShape(a: ModelConfig, b: ModelConfig): boolean {
  return (
    a.n_layer === b.n_layer &&
    a.n_kv_head === b.n_kv_head &&
    a.head_dim === b.head_dim &&
    a.vocab_size === b.vocab_size &&
    a.block_size === b.block_size
  );
}

export class LegacyOnnxEngine implements PolicyEngine {
  readonly id: string;
  private m: Loaded;
  private readonly maxBatch: number;
  private readonly totalTokens: number;
  private readonly waiting: Seq[] = [];
  private readonly running: Seq[] = [];
  private loop: Promise<void> | null = null;
  private closed = false;
  private pendingReload: { next: Loaded; resolve: () => void } | null = null;
  /** Decode steps run so far (batched steps, not prefills). */
  steps = 0;
  /** Sum of batch sizes over decode steps (steps × mean batch), and ms spent inside the model (prefill + decode). */
  stepRows = 0;
  computeMs = 0;
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
  }

  /** Load model.onnx, config.json and tokenizer.json from `dir`. */
  static async load(dir: string, opts: OnnxEngineOptions = {}): Promise<LegacyOnnxEngine> {
    return new LegacyOnnxEngine(await loadDir(dir, opts.threads), opts);
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
    const reserved = [...this.running, ...this.waiting].reduce((s, q) => s + q.reserved, 0);
    return {
      totalTokens: this.totalTokens,
      freeTokens: Math.max(0, this.totalTokens - reserved),
      inFlight: this.running.length + this.waiting.length,
    };
  }

  generate(req: GenerateRequest, onChunk?: (c: GenerateChunk) => void): Promise<GenerateResult> {
    return new Promise((resolve) => {
      const prompt = this.m.tokenizer.encode(req.prompt);
      const bs = this.m.config.block_size;
      const base = {
        text: '',
        tokenIds: [],
        logprobs: [],
        stopString: null,
        promptTokens: prompt.length,
        weightVersion: this.weightVersion,
      };
      if (this.closed) return resolve({ ...base, finishReason: 'aborted', error: 'engine closed' });
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
        kv: [],
        len: 0,
        next: -1,
        out: [],
        logprobs: [],
        text: '',
        done: false,
      });
      this.kick();
    });
  }

  /**
   * Swap in the model exported to `dir` between decode steps (see the header for what happens to in-flight
   * requests). Resolves when the new weights are live.
   */
  async reload(dir: string): Promise<void> {
    const next = await loadDir(dir, this.opts.threads);
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
    await this.m.session.release();
  }

  // ——— the loop ———

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
      const draining = this.pendingReload !== null; // only set here when shapes differ and requests still run
      while (!draining && this.waiting.length && this.running.length < this.maxBatch) {
        const reserved = this.running.reduce((s, q) => s + q.reserved, 0);
        if (this.running.length > 0 && reserved + this.waiting[0].reserved > this.totalTokens) break;
        const q = this.waiting.shift()!;
        this.running.push(q);
        const t0 = performance.now();
        await this.guard([q], () => this.prefill(q));
        this.computeMs += performance.now() - t0;
      }
      if (this.running.length) {
        const t0 = performance.now();
        for (const batch of lengthBuckets(this.running)) await this.guard(batch, () => this.decodeStep(batch));
        this.computeMs += performance.now() - t0;
      }
      await new Promise((r) => setImmediate(r)); // let new requests, aborts and reloads in
    }
    if (this.closed) for (const q of [...this.running]) this.finish(q, 'aborted', null, 'engine closed');
  }

  private applyReload(): void {
    const p = this.pendingReload;
    if (!p) return;
    const compatible = sameShape(p.next.config, this.m.config) && p.next.tokenizerJson === this.m.tokenizerJson;
    if (!compatible && this.running.length) return; // drain first
    const old = this.m;
    this.m = p.next;
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

  private feeds(
    ids: BigInt64Array,
    pos: BigInt64Array,
    mask: Float32Array,
    B: number,
    T: number,
    past: Float32Array[],
    P: number,
  ) {
    const { n_layer, n_kv_head: H, head_dim } = this.m.config;
    const f: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', ids, [B, T]),
      position_ids: new ort.Tensor('int64', pos, [B, T]),
      attention_mask: new ort.Tensor('float32', mask, [B, P + T]),
    };
    for (let l = 0; l < n_layer; l++) {
      f[`past_key_${l}`] = new ort.Tensor('float32', past[2 * l], [B, H, P, head_dim]);
      f[`past_value_${l}`] = new ort.Tensor('float32', past[2 * l + 1], [B, H, P, head_dim]);
    }
    return f;
  }

  private async prefill(q: Seq): Promise<void> {
    const { n_layer, n_kv_head: H, head_dim, block_size, vocab_size } = this.m.config;
    const T = q.prompt.length;
    const empty = Array.from({ length: 2 * n_layer }, () => new Float32Array(0));
    const out = await this.m.session.run(
      this.feeds(
        BigInt64Array.from(q.prompt, BigInt),
        BigInt64Array.from({ length: T }, (_, i) => BigInt(i)),
        new Float32Array(T).fill(1),
        1,
        T,
        empty,
        0,
      ),
    );
    q.kv = [];
    for (let l = 0; l < n_layer; l++) {
      for (const name of [`present_key_${l}`, `present_value_${l}`]) {
        const src = out[name].data as Float32Array; // [1, H, T, D]
        const dst = new Float32Array(H * block_size * head_dim);
        for (let h = 0; h < H; h++)
          dst.set(src.subarray(h * T * head_dim, (h + 1) * T * head_dim), h * block_size * head_dim);
        q.kv.push(dst);
      }
    }
    q.len = T;
    const logits = out.logits.data as Float32Array;
    this.accept(q, logits.subarray((T - 1) * vocab_size, T * vocab_size));
  }

  private async decodeStep(batch: Seq[]): Promise<void> {
    const { n_layer, n_kv_head: H, head_dim, block_size, vocab_size } = this.m.config;
    const B = batch.length;
    const P = Math.max(...batch.map((q) => q.len));
    const ids = new BigInt64Array(B);
    const pos = new BigInt64Array(B);
    const mask = new Float32Array(B * (P + 1));
    batch.forEach((q, b) => {
      ids[b] = BigInt(q.next);
      pos[b] = BigInt(q.len);
      mask.fill(1, b * (P + 1), b * (P + 1) + q.len);
      mask[b * (P + 1) + P] = 1;
    });
    const past: Float32Array[] = [];
    for (let t = 0; t < 2 * n_layer; t++) {
      const dst = new Float32Array(B * H * P * head_dim);
      batch.forEach((q, b) => {
        for (let h = 0; h < H; h++) {
          const from = h * block_size * head_dim;
          dst.set(q.kv[t].subarray(from, from + q.len * head_dim), (b * H + h) * P * head_dim);
        }
      });
      past.push(dst);
    }
    const out = await this.m.session.run(this.feeds(ids, pos, mask, B, 1, past, P));
    this.steps++;
    this.stepRows += B;
    const names = Array.from({ length: n_layer }, (_, l) => [`present_key_${l}`, `present_value_${l}`]).flat();
    const logits = out.logits.data as Float32Array;
    batch.forEach((q, b) => {
      if (q.done) return; // aborted or closed while the step ran
      names.forEach((name, t) => {
        const src = out[name].data as Float32Array; // [B, H, P+1, D]
        for (let h = 0; h < H; h++) {
          const at = ((b * H + h) * (P + 1) + P) * head_dim;
          q.kv[t].set(src.subarray(at, at + head_dim), h * block_size * head_dim + q.len * head_dim);
        }
      });
      q.len++;
      this.accept(q, logits.subarray(b * vocab_size, (b + 1) * vocab_size));
    });
  }

  /** Sample the next token from `logits`, stream it, and finish the request if it is done. */
  private accept(q: Seq, logits: Float32Array): void {
    const { id, logprob } = sampleToken(logits, { temperature: q.req.temperature, topP: q.req.topP }, q.rng);
    q.out.push(id);
    q.logprobs.push(logprob);
    q.next = id;
    const eos = this.m.tokenizer.eosId !== undefined && id === this.m.tokenizer.eosId;
    const before = q.text.length;
    q.text += eos ? '' : this.m.tokenizer.decode([id]);
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
    else if (q.out.length >= q.req.maxTokens || q.len + 1 >= this.m.config.block_size) this.finish(q, 'length');
  }

  private finish(q: Seq, reason: GenerateResult['finishReason'], stop: string | null = null, error?: string): void {
    if (q.done) return;
    q.done = true;
    let i = this.running.indexOf(q);
    if (i >= 0) this.running.splice(i, 1);
    i = this.waiting.indexOf(q);
    if (i >= 0) this.waiting.splice(i, 1);
    q.kv = [];
    q.resolve({
      text: q.text,
      tokenIds: q.out,
      logprobs: q.logprobs,
      finishReason: reason,
      stopString: stop,
      promptTokens: q.prompt.length,
      weightVersion: this.weightVersion,
      ...(error ? { error } : {}),
    });
  }
}

/**
 * Continuous batching mixes short and long contexts, and a decode step pads every row's past to the longest one
 * (copying it in and out). Sorting by length and splitting where the padding would waste more than half the copy
 * keeps each step's work near the real tokens; each extra bucket costs one more session.run.
 */
export function lengthBuckets<T extends { len: number }>(running: T[]): T[][] {
  const sorted = [...running].sort((a, b) => a.len - b.len);
  const out: T[][] = [];
  let cur: T[] = [];
  let sum = 0;
  for (const q of sorted) {
    // Adding q (the longest so far) makes the bucket's cost (n+1) × q.len against sum + q.len of real tokens.
    if (cur.length >= 4 && (cur.length + 1) * q.len > 2 * (sum + q.len)) {
      out.push(cur);
      cur = [];
      sum = 0;
    }
    cur.push(q);
    sum += q.len;
  }
  if (cur.length) out.push(cur);
  return out;
}
