// The embedded engine's slot KV cache (workers/engines/slot-cache.ts): writes land at [row, head, pos], rows copy,
// park and load without touching other rows, the mask marks exactly the filled positions, and the capacity grows
// with the rows (their positions moved as they were) and goes back when nothing runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CAPACITY_STEP, SlotCache, commonPrefix } from '../../workers/engines/slot-cache.ts';

const L = 2,
  S = 3,
  H = 2,
  D = 4,
  C = 10;
const keyAt = (c: SlotCache, l: number, row: number, h: number, pos: number, d: number) =>
  c.keys[l]![((row * H + h) * D + d) * C + pos]!;
const valAt = (c: SlotCache, l: number, row: number, h: number, pos: number, d: number) =>
  c.values[l]![((row * H + h) * C + pos) * D + d]!;

/** A graph output [B, H, T, D] whose entries encode (layer, b, h, t, d). */
function output(l: number, B: number, T: number, sign: number): Float32Array {
  const a = new Float32Array(B * H * T * D);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let t = 0; t < T; t++)
        for (let d = 0; d < D; d++) {
          a[((b * H + h) * T + t) * D + d] = sign * (1 + l * 10000 + b * 1000 + h * 100 + t * 10 + d);
        }
  return a;
}

test('write puts batch entry b of a [B, H, T, D] output at positions [at, at + T) of its row, keys transposed', () => {
  const c = new SlotCache(L, S, H, D, C);
  for (let l = 0; l < L; l++) c.write(l, 2, 3, output(l, 2, 4, 1), output(l, 2, 4, -1), 1, 4);
  for (let l = 0; l < L; l++)
    for (let h = 0; h < H; h++)
      for (let t = 0; t < 4; t++)
        for (let d = 0; d < D; d++) {
          const v = 1 + l * 10000 + 1000 + h * 100 + t * 10 + d;
          assert.equal(keyAt(c, l, 2, h, 3 + t, d), v);
          assert.equal(valAt(c, l, 2, h, 3 + t, d), -v);
        }
  assert.equal(keyAt(c, 0, 2, 0, 2, 0), 0);
  assert.equal(keyAt(c, 0, 1, 0, 3, 0), 0); // other rows untouched
  assert.equal(c.keyRows(0, 1, 2).length, 2 * H * D * C);
});

test('copyRow, extract and load move the first n positions and set the mask; the new-token column stays 1', () => {
  const c = new SlotCache(L, S, H, D, C);
  for (let l = 0; l < L; l++) c.write(l, 0, 0, output(l, 1, 6, 1), output(l, 1, 6, -1), 0, 6);
  c.fill(0, 6);
  c.copyRow(0, 1, 4);
  const p = c.extract(0, [5, 6, 7, 8, 9, 10]);
  c.load(2, p, 5);
  for (let l = 0; l < L; l++)
    for (let h = 0; h < H; h++)
      for (let d = 0; d < D; d++) {
        for (let t = 0; t < 6; t++) {
          const v = 1 + l * 10000 + h * 100 + t * 10 + d;
          assert.equal(keyAt(c, l, 1, h, t, d), t < 4 ? v : 0);
          assert.equal(valAt(c, l, 2, h, t, d), t < 5 ? -v : 0);
        }
      }
  const mask = (row: number) => Array.from(c.maskRows(row, 1));
  assert.deepEqual(mask(0), [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1]);
  assert.deepEqual(mask(1), [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1]);
  assert.deepEqual(mask(2), [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1]);
  assert.equal(commonPrefix([1, 2, 3, 4], [1, 2, 9]), 2);
  assert.equal(commonPrefix([], [1]), 0);
});

test('grow moves the rows it is told to keep into a larger capacity, positions and mask as they were; reset empties it', () => {
  const c = new SlotCache(L, S, H, D, 600, 4);
  assert.equal(c.cap, 4);
  for (let l = 0; l < L; l++) c.write(l, 1, 0, output(l, 1, 3, 1), output(l, 1, 3, -1), 0, 3);
  c.fill(1, 3);
  assert.equal(c.grow(4, 2), true, 'fits: nothing moves');
  assert.equal(c.cap, 4);
  assert.equal(c.grow(5, 2), true);
  assert.equal(c.cap, CAPACITY_STEP, 'a whole step');
  const at = (l: number, row: number, h: number, pos: number, d: number) => [
    c.keys[l]![((row * H + h) * D + d) * c.cap + pos]!,
    c.values[l]![((row * H + h) * c.cap + pos) * D + d]!,
  ];
  for (let l = 0; l < L; l++)
    for (let h = 0; h < H; h++)
      for (let d = 0; d < D; d++)
        for (let t = 0; t < 3; t++) {
          const v = 1 + l * 10000 + h * 100 + t * 10 + d;
          assert.deepEqual(at(l, 1, h, t, d), [v, -v]);
        }
  const mask = Array.from(c.maskRows(1, 1));
  assert.equal(mask.length, CAPACITY_STEP + 1);
  assert.deepEqual(mask.slice(0, 4), [1, 1, 1, 0]);
  assert.equal(mask.at(-1), 1, 'the new-token column');
  assert.equal(c.keyRows(0, 0, 2).length, 2 * H * D * CAPACITY_STEP);
  // A quarter more at least, in whole steps, never past the context.
  assert.equal(c.grow(CAPACITY_STEP + 1, 2), true);
  assert.equal(c.cap, 2 * CAPACITY_STEP);
  assert.equal(c.grow(590, 2), true);
  assert.equal(c.cap, 600, 'capped at the context');
  assert.deepEqual(at(0, 1, 1, 2, 3), [1 + 100 + 20 + 3, -(1 + 100 + 20 + 3)]);
  assert.equal(c.grow(601, 2), false, 'past the context');
  c.reset();
  assert.equal(c.cap, 4);
  assert.deepEqual(Array.from(c.maskRows(1, 1)), [0, 0, 0, 0, 1]);
});
