/**
 * The embedded engine's KV cache (no I/O): one fixed-size slot per running request, every layer's keys and values
 * in one buffer per layer, laid out so the running batch is always the contiguous rows [0, n) and ONNX Runtime
 * reads it in place — nothing is copied per decode step but the step's own new keys and values. Rows move only
 * when a request leaves (the last row fills its slot) or when a new one starts from a reused prefix.
 *
 * Layout (S slots, H kv heads, D head size, L = context length):
 *   keys[l]    [S, H, D, L]  (transposed: the graph multiplies queries by it directly)
 *   values[l]  [S, H, L, D]
 *   mask       [S, L + 1]    1 on filled positions; the last column is the step's new token (always 1), so
 *                            rows [0, n) are the decode step's attention_mask as they are.
 * A Prefix is a row's first n positions copied out compactly ([H, D, n] and [H, n, D] per layer), for prefix reuse.
 */
export interface Prefix {
  tokens: number[];
  keys: Float32Array[];
  values: Float32Array[];
}

export class SlotCache {
  readonly keys: Float32Array[];
  readonly values: Float32Array[];
  readonly mask: Float32Array;
  readonly rowSize: number;

  constructor(
    readonly layers: number,
    readonly slots: number,
    readonly heads: number,
    readonly dim: number,
    readonly ctx: number,
  ) {
    this.rowSize = heads * dim * ctx;
    this.keys = Array.from({ length: layers }, () => new Float32Array(slots * this.rowSize));
    this.values = Array.from({ length: layers }, () => new Float32Array(slots * this.rowSize));
    this.mask = new Float32Array(slots * (ctx + 1));
    for (let s = 0; s < slots; s++) this.mask[s * (ctx + 1) + ctx] = 1;
  }

  /** Rows [from, from + n) of layer l, as views (what a session.run reads). */
  keyRows(l: number, from: number, n: number): Float32Array {
    return this.keys[l].subarray(from * this.rowSize, (from + n) * this.rowSize);
  }
  valueRows(l: number, from: number, n: number): Float32Array {
    return this.values[l].subarray(from * this.rowSize, (from + n) * this.rowSize);
  }
  maskRows(from: number, n: number): Float32Array {
    return this.mask.subarray(from * (this.ctx + 1), (from + n) * (this.ctx + 1));
  }

  /**
   * Write T new positions [at, at + T) of `row` from a graph output: newK / newV of layer l are [B, H, T, D] and
   * this row is batch entry b of them.
   */
  write(l: number, row: number, at: number, newK: Float32Array, newV: Float32Array, b: number, T: number): void {
    const { heads: H, dim: D, ctx: L } = this;
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
    const m = this.mask.subarray(row * (this.ctx + 1), row * (this.ctx + 1) + this.ctx);
    m.fill(1, 0, to);
    m.fill(0, to);
  }

  /** Copy the first n positions of row `from` into row `to` (and its mask). */
  copyRow(from: number, to: number, n: number): void {
    if (from === to) return;
    const { heads: H, dim: D, ctx: L } = this;
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
    const { heads: H, dim: D, ctx: L } = this;
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
    const { heads: H, dim: D, ctx: L } = this;
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
