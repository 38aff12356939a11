import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeTokenRecord,
  encodeTokenRecord,
  tokenColumnBytes,
  tokenRecordToWire,
} from '../../server/store/token-codec.ts';
import type { TokenRecord } from '../../contracts/trajectory.ts';

const rec = (over: Partial<TokenRecord> = {}): TokenRecord => ({
  ids: [0, 1, 151_643, 2 ** 31 - 1, -5],
  mask: [1, 1, 0, 0, 1],
  turn: [0, 0, 0, 1, 65_535],
  chars: [1, 0, 3, 65_535, 0],
  rolloutLogprobs: [-0.1, NaN, NaN, -Infinity, -1e-30],
  entropy: [0, 2.5, NaN, NaN, 1e30],
  trainerLogprobs: [-0.12, -3, NaN, NaN, -0.5],
  weights: [1, 2, NaN, NaN, 0],
  clip: [0, 4, 0, 0, 5],
  advantage: 0.25,
  ...over,
});

test('encode → decode gives the record back at Float32 precision, NaN and ±Infinity kept, integers exact', () => {
  const r = rec();
  const back = decodeTokenRecord(encodeTokenRecord(r));
  const f = (xs: number[]) => xs.map(Math.fround);
  assert.deepEqual(back, {
    ...r,
    rolloutLogprobs: f(r.rolloutLogprobs),
    entropy: f(r.entropy),
    trainerLogprobs: f(r.trainerLogprobs!),
    weights: f(r.weights!),
  });
  assert.ok(Number.isNaN(back.rolloutLogprobs[1]!) && back.rolloutLogprobs[3] === -Infinity);
  const untrained = decodeTokenRecord(
    encodeTokenRecord(rec({ trainerLogprobs: null, weights: null, clip: null, advantage: null })),
  );
  assert.equal(untrained.trainerLogprobs, null);
  assert.equal(untrained.advantage, null);
});

test('columns are little-endian at fixed widths: 4 bytes per id and float, 2 per turn/chars, 1 per mask/clip', () => {
  const c = encodeTokenRecord(rec());
  assert.deepEqual([...c.ids.subarray(8, 12)], [0x5b, 0x50, 0x02, 0x00]); // 151643 = 0x0002505b
  assert.deepEqual([...c.turn.subarray(8, 10)], [0xff, 0xff]);
  assert.deepEqual(
    [
      c.ids.byteLength,
      c.mask.byteLength,
      c.turn.byteLength,
      c.chars.byteLength,
      c.rolloutLogprobs.byteLength,
      c.clip!.byteLength,
    ],
    [20, 5, 10, 10, 20, 5],
  );
  // NaN is the canonical quiet NaN 0x7fc00000, little-endian.
  assert.deepEqual([...c.entropy.subarray(8, 12)], [0x00, 0x00, 0xc0, 0x7f]);
  assert.equal(tokenColumnBytes(c), 20 + 5 + 10 + 10 + 20 + 20 + 20 + 20 + 5 + 8 + 8);
});

test('values that would wrap, arrays of the wrong length and half-trained records are refused, naming the array', () => {
  assert.throws(
    () => encodeTokenRecord(rec({ ids: [0, 1, 2, 2 ** 31, 4] })),
    /ids\[3\] = 2147483648 is not an integer/,
  );
  assert.throws(() => encodeTokenRecord(rec({ turn: [0, 0, 0, 1, 65_536] })), /turn\[4\] = 65536/);
  assert.throws(() => encodeTokenRecord(rec({ mask: [1, 1, 0, 0, 0.5] })), /mask\[4\] = 0.5/);
  assert.throws(() => encodeTokenRecord(rec({ chars: [1, 2] })), /chars has 2 entries, ids has 5/);
  assert.throws(() => encodeTokenRecord(rec({ weights: null })), /all present .* or all null/);
  const c = encodeTokenRecord(rec());
  assert.throws(() => decodeTokenRecord({ ...c, n: 6 }), /ids has 20 bytes, expected 24 for 6 tokens/);
});

test('decode reads a column that is a view into a larger buffer (as database drivers hand them back)', () => {
  const c = encodeTokenRecord(rec());
  const big = new Uint8Array(c.ids.byteLength + 7);
  big.set(c.ids, 3);
  assert.deepEqual(decodeTokenRecord({ ...c, ids: big.subarray(3, 3 + c.ids.byteLength) }).ids, rec().ids);
});

test('the wire form has null where the record has NaN and survives JSON unchanged', () => {
  const w = tokenRecordToWire(rec({ advantage: NaN }));
  assert.deepEqual(
    w.rolloutLogprobs,
    [-0.1, null, null, -Infinity, -1e-30].map((x) => x),
  );
  assert.deepEqual(w.weights, [1, 2, null, null, 0]);
  assert.equal(w.advantage, null);
  const finite = tokenRecordToWire(rec({ rolloutLogprobs: [-0.1, NaN, NaN, -2, -1] }));
  assert.deepEqual(JSON.parse(JSON.stringify(finite)), finite);
});
