/**
 * The embedded engine's KV cache (no I/O): one slot per running request, every layer's keys and values in one
 * buffer per layer, laid out so the running batch is always the contiguous rows [0, n) and ONNX Runtime reads it in
 * place — nothing is copied per decode step but the step's own new keys and values. Rows move only when a request
 * leaves (the last row fills its slot) or when a new one starts from a reused prefix.
 *
 * Layout (S slots, H kv heads, D head size, C = the capacity, positions each row holds now):
 *   keys[l]    [S, H, D, C]  (transposed: the graph multiplies queries by it directly)
 *   values[l]  [S, H, C, D]
 *   mask       [S, C + 1]    1 on filled positions; the last column is the step's new token (always 1), so
 *                            rows [0, n) are the decode step's attention_mask as they are.
 * The capacity grows with the longest row, up to the context length L (grow(), which moves every row once), and
 * goes back to its start when no row runs (reset()). Why not always L: the graph's attention reads all C positions
 * of every row at every decode step, so a cache sized for SmolLM2's 8,192-token context read 8,192 positions per
 * row per layer for rollouts a few hundred tokens long — most of a decode step's time.
 * A Prefix is a row's first n positions copied out compactly ([H, D, n] and [H, n, D] per layer), for prefix reuse.
 */
export interface Prefix {
  tokens: number[];
  keys: Float32Array[];
  values: Float32Array[];
}

/** Capacities are whole multiples of this many positions (fewer re-layouts as rows grow one token at a time). */
export const CAPACITY_STEP = 256;

export class SlotCache {
  keys: Float32Array[];
  values: Float32Array[];
  mask: Float32Array;
  /** Positions each row holds now (≤ ctx). */
  cap: number;
  rowSize: number;
  private readonly startCap: number;

  constructor(
    readonly layers: number,
    readonly slots: number,
    readonly heads: number,
    readonly dim: number,
    readonly ctx: number,
    /** The capacity to start from (and go back to when no row runs); the whole context by default. */
    startCap = ctx,
  ) {
    this.startCap = Math.min(ctx, Math.max(1, startCap));
    this.cap = this.startCap;
    this.rowSize = heads * dim * this.cap;
    this.keys = this.buffers();
    this.values = this.buffers();
    this.mask = this.newMask();
  }

  private buffers(): Float32Array[] {
    return Array.from({ length: this.layers }, () => new Float32Array(this.slots * this.rowSize));
  }

  private newMask(): Float32Array {
    const m = new Float32Array(this.slots * (this.cap + 1));
    for (let s = 0; s < this.slots; s++) m[s * (this.cap + 1) + this.cap] = 1;
    return m;
  }

  /**
   * Make room for positions [0, need) in every row: a larger capacity (a multiple of CAPACITY_STEP, at least a
   * quarter more than now, at most ctx) with the positions and mask of rows [0, rows) moved into it (the rest start
   * empty). False if need > ctx.
   */
  grow(need: number, rows = this.slots): boolean {
    if (need <= this.cap) return true;
    if (need > this.ctx) return false;
    const want = Math.max(need, Math.ceil(this.cap * 1.25));
    this.relayout(Math.min(this.ctx, Math.ceil(want / CAPACITY_STEP) * CAPACITY_STEP), rows);
    return true;
  }

  /** Back to the starting capacity, every row empty: when nothing runs (parked prefixes live outside the slots). */
  reset(): void {
    if (this.cap === this.startCap) return;
    this.cap = this.startCap;
    this.rowSize = this.heads * this.dim * this.cap;
    this.keys = this.buffers();
    this.values = this.buffers();
    this.mask = this.newMask();
  }

  /** Move the first `rows` rows into buffers of capacity `cap` (the positions they hold and their mask). */
  private relayout(cap: number, rows: number): void {
    const { heads: H, dim: D, cap: old } = this;
    const keys = this.keys,
      values = this.values,
      mask = this.mask;
    this.cap = cap;
    this.rowSize = H * D * cap;
    this.keys = this.buffers();
    this.values = this.buffers();
    this.mask = this.newMask();
    for (let l = 0; l < this.layers; l++) {
      for (let r = 0; r < rows; r++)
        for (let h = 0; h < H; h++) {
          for (let d = 0; d < D; d++) {
            const a = ((r * H + h) * D + d) * old;
            this.keys[l].set(keys[l].subarray(a, a + old), ((r * H + h) * D + d) * cap);
          }
          this.values[l].set(
            values[l].subarray((r * H + h) * old * D, (r * H + h + 1) * old * D),
            (r * H + h) * cap * D,
          );
        }
    }
    for (let r = 0; r < rows; r++) this.mask.set(mask.subarray(r * (old + 1), r * (old + 1) + old), r * (cap + 1));
  }

  /** Rows [from, from + n) of layer l, as views (what a session.run reads). */
  keyRows(l: number, from: number, n: number): Float32Array {
    return this.keys[l].subarray(from * this.rowSize, (from + n) * this.rowSize);
  }
  valueRows(l: number, from: number, n: number): Float32Array {
    return this.values[l].subarray(from * this.rowSize, (from + n) * this.rowSize);
  }
  maskRows(from: number, n: number): Float32Array {
    return this.mask.subarray(from * (this.cap + 1), (from + n) * (this.cap + 1));
  }

  /**
   * Write T new positions [at, at + T) of `row` from a graph output: newK / newV of layer l are [B, H, T, D] and
   * this row is batch entry b of them.
   */
  write(l: number, row: number, at: number, newK: Float32Array, newV: Float32Array, b: number, T: number): void {
    const { heads: H, dim: D, cap: L } = this;
    const k = this.keys[l],
      v = this.values[l];
    for (let h = 0; h < H; h++) {
      const src = (b * H + h) * T * D;
      const kBase = (row * H + h) * D * L;
      for (let t = 0; t < T; t++) for (let d = 0; d < D; d++) k[kBase + d * L + at + t] = newK[src + t * D + d];
      v.set(newV.subarray(src, src + T * D), ((row * H + h) * L + at) * D);
    }
  }

  /** Mark positions [0, to) of `row` filled (1) and the rest of its context empty. */
  fill(row: number, to: number): void {
    const m = this.mask.subarray(row * (this.cap + 1), row * (this.cap + 1) + this.cap);
    m.fill(1, 0, to);
    m.fill(0, to);
  }

  /** Copy the first n positions of row `from` into row `to` (and its mask). */
  copyRow(from: number, to: number, n: number): void {
    if (from === to) return;
    const { heads: H, dim: D, cap: L } = this;
    for (let l = 0; l < this.layers; l++) {
      const k = this.keys[l],
        v = this.values[l];
      for (let h = 0; h < H; h++) {
        for (let d = 0; d < D; d++) {
          const a = ((from * H + h) * D + d) * L,
            b = ((to * H + h) * D + d) * L;
          k.copyWithin(b, a, a + n);
        }
        const a = (from * H + h) * L * D,
          b = (to * H + h) * L * D;
        v.copyWithin(b, a, a + n * D);
      }
    }
    this.fill(to, n);
  }

  /** The first n positions of `row`, copied out (a parked prefix). */
  extract(row: number, tokens: number[]): Prefix {
    const n = tokens.length;
    const { heads: H, dim: D, cap: L } = this;
    const keys: Float32Array[] = [],
      values: Float32Array[] = [];
    for (let l = 0; l < this.layers; l++) {
      const k = new Float32Array(H * D * n),
        v = new Float32Array(H * n * D);
      for (let h = 0; h < H; h++) {
        for (let d = 0; d < D; d++) {
          const a = ((row * H + h) * D + d) * L;
          k.set(this.keys[l].subarray(a, a + n), (h * D + d) * n);
        }
        const a = (row * H + h) * L * D;
        v.set(this.values[l].subarray(a, a + n * D), h * n * D);
      }
      keys.push(k);
      values.push(v);
    }
    return { tokens, keys, values };
  }

  /** Load the first n positions of a parked prefix into `row`. */
  load(row: number, p: Prefix, n: number): void {
    const m = p.tokens.length;
    const { heads: H, dim: D, cap: L } = this;
    for (let l = 0; l < this.layers; l++) {
      for (let h = 0; h < H; h++) {
        for (let d = 0; d < D; d++)
          this.keys[l].set(p.keys[l].subarray((h * D + d) * m, (h * D + d) * m + n), ((row * H + h) * D + d) * L);
        this.values[l].set(p.values[l].subarray(h * m * D, h * m * D + n * D), (row * H + h) * L * D);
      }
    }
    this.fill(row, n);
  }
}

/** Length of the common prefix of a and b. */
export function commonPrefix(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
