/**
 * TokenRecord ↔ the TrajectoryTokens row's binary columns, pure. Each array is packed little-endian at a fixed
 * width — ids Int32, mask and clip Uint8, turn and chars Uint16, logprobs/entropy/weights Float32 (NaN kept as NaN) —
 * so a 2,000-token response costs ~30 KB instead of the ~100 KB of JSON number arrays, and decoding is a typed-array
 * view, not a parse. Out-of-range values are refused rather than wrapped: a silently wrapped id would show the wrong
 * token.
 */
import type { ClipState, TokenRecord, TokenRecordWire } from '../../contracts/trajectory.ts';

/** The stored columns (server/store/trajectories.ts writes them; prisma/schema.prisma TrajectoryTokens). */
export interface TokenColumns {
  n: number;
  ids: Uint8Array;
  mask: Uint8Array;
  turn: Uint8Array;
  chars: Uint8Array;
  rolloutLogprobs: Uint8Array;
  entropy: Uint8Array;
  trainerLogprobs: Uint8Array | null;
  weights: Uint8Array | null;
  clip: Uint8Array | null;
  advantage: number | null;
}

type Kind = 'i32' | 'u8' | 'u16' | 'f32';
const WIDTH: Record<Kind, number> = { i32: 4, u8: 1, u16: 2, f32: 4 };
const RANGE: Record<Exclude<Kind, 'f32'>, [number, number]> = {
  i32: [-(2 ** 31), 2 ** 31 - 1],
  u8: [0, 255],
  u16: [0, 65535],
};
const TYPED = { i32: Int32Array, u8: Uint8Array, u16: Uint16Array, f32: Float32Array } as const;
// Typed arrays use the host's byte order: on a little-endian host (every platform Node ships for) they are the
// stored format and pack/unpack is a bulk copy, ~5× faster than DataView per element; elsewhere DataView it is.
const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function pack(name: string, xs: readonly number[], kind: Kind, n: number): Uint8Array {
  if (xs.length !== n) throw new Error(`token record: ${name} has ${xs.length} entries, ids has ${n}`);
  if (kind !== 'f32') {
    const [lo, hi] = RANGE[kind];
    for (let i = 0; i < n; i++) {
      const x = xs[i]!;
      if (!Number.isInteger(x) || x < lo || x > hi)
        throw new Error(`token record: ${name}[${i}] = ${x} is not an integer in ${lo}..${hi}`);
    }
  }
  if (LE) {
    const a = new TYPED[kind](xs as number[]);
    return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  }
  const buf = new Uint8Array(n * WIDTH[kind]);
  const v = new DataView(buf.buffer);
  for (let i = 0; i < n; i++) {
    const x = xs[i]!;
    if (kind === 'f32') v.setFloat32(i * 4, x, true);
    else if (kind === 'i32') v.setInt32(i * 4, x, true);
    else if (kind === 'u16') v.setUint16(i * 2, x, true);
    else v.setUint8(i, x);
  }
  return buf;
}

function unpack(name: string, b: Uint8Array, kind: Kind, n: number): number[] {
  if (b.byteLength !== n * WIDTH[kind])
    throw new Error(
      `stored token record: ${name} has ${b.byteLength} bytes, expected ${n * WIDTH[kind]} for ${n} tokens`,
    );
  if (LE) {
    // A typed view needs an aligned offset; drivers hand back views into shared buffers, so copy when it is not.
    const w = WIDTH[kind];
    const src = b.byteOffset % w === 0 ? b : b.slice();
    const a = new TYPED[kind](src.buffer as ArrayBuffer, src.byteOffset, n);
    // A plain loop: Array.from(typedArray) goes through the iterator and is ~10× slower.
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) out[i] = a[i]!;
    return out;
  }
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    out[i] =
      kind === 'f32'
        ? v.getFloat32(i * 4, true)
        : kind === 'i32'
          ? v.getInt32(i * 4, true)
          : kind === 'u16'
            ? v.getUint16(i * 2, true)
            : v.getUint8(i);
  }
  return out;
}

export function encodeTokenRecord(r: TokenRecord): TokenColumns {
  const n = r.ids.length;
  const trained = [r.trainerLogprobs, r.weights, r.clip];
  if (trained.some((x) => x === null) && trained.some((x) => x !== null)) {
    throw new Error('token record: trainerLogprobs, weights and clip are all present (trained on) or all null');
  }
  return {
    n,
    ids: pack('ids', r.ids, 'i32', n),
    mask: pack('mask', r.mask, 'u8', n),
    turn: pack('turn', r.turn, 'u16', n),
    chars: pack('chars', r.chars, 'u16', n),
    rolloutLogprobs: pack('rolloutLogprobs', r.rolloutLogprobs, 'f32', n),
    entropy: pack('entropy', r.entropy, 'f32', n),
    trainerLogprobs: r.trainerLogprobs ? pack('trainerLogprobs', r.trainerLogprobs, 'f32', n) : null,
    weights: r.weights ? pack('weights', r.weights, 'f32', n) : null,
    clip: r.clip ? pack('clip', r.clip, 'u8', n) : null,
    advantage: r.advantage,
  };
}

export function decodeTokenRecord(c: TokenColumns): TokenRecord {
  const { n } = c;
  return {
    ids: unpack('ids', c.ids, 'i32', n),
    mask: unpack('mask', c.mask, 'u8', n),
    turn: unpack('turn', c.turn, 'u16', n),
    chars: unpack('chars', c.chars, 'u16', n),
    rolloutLogprobs: unpack('rolloutLogprobs', c.rolloutLogprobs, 'f32', n),
    entropy: unpack('entropy', c.entropy, 'f32', n),
    trainerLogprobs: c.trainerLogprobs ? unpack('trainerLogprobs', c.trainerLogprobs, 'f32', n) : null,
    weights: c.weights ? unpack('weights', c.weights, 'f32', n) : null,
    clip: c.clip ? (unpack('clip', c.clip, 'u8', n) as ClipState[]) : null,
    advantage: c.advantage,
  };
}

/** Bytes the row's arrays take (what bench:db reports per trajectory). */
export function tokenColumnBytes(c: TokenColumns): number {
  return (
    [c.ids, c.mask, c.turn, c.chars, c.rolloutLogprobs, c.entropy, c.trainerLogprobs, c.weights, c.clip].reduce(
      (a, b) => a + (b?.byteLength ?? 0),
      0,
    ) +
    8 /* n */ +
    (c.advantage === null ? 0 : 8)
  );
}

/**
 * The record as the API returns it: plain JSON, where NaN (no value) has no literal, so float arrays carry null
 * there instead (the tRPC link has no transformer). components/trace/token-scale.ts reads this shape.
 */
export function tokenRecordToWire(r: TokenRecord): TokenRecordWire {
  const f = (xs: number[]) => xs.map((x) => (Number.isNaN(x) ? null : x));
  return {
    ...r,
    rolloutLogprobs: f(r.rolloutLogprobs),
    entropy: f(r.entropy),
    trainerLogprobs: r.trainerLogprobs ? f(r.trainerLogprobs) : null,
    weights: r.weights ? f(r.weights) : null,
    advantage: r.advantage !== null && Number.isNaN(r.advantage) ? null : r.advantage,
  };
}
