import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  poolFactor,
  pooledPixels,
  greyMaskedRows,
  MAX_BUFFER_SIDE,
} from '../../web/src/draw/lod.js';
import { headPixels, weightToRgb } from '../../web/src/draw/color.js';

test('one pixel per cell up to MAX_BUFFER_SIDE, then blocks', () => {
  assert.equal(poolFactor(64, 64), 1);
  assert.equal(poolFactor(MAX_BUFFER_SIDE, 3), 1);
  assert.equal(poolFactor(MAX_BUFFER_SIDE + 1, 3), 2);
  assert.equal(poolFactor(2048, 2048), 2);
  assert.equal(poolFactor(4096, 10), 4);
});

test("factor 1 is headPixels; larger factors keep each block's largest weight, also in ragged edge blocks", () => {
  // h = 2, n = 5, m = 3: head 1 pooled by 2 → 3 rows x 2 cols.
  const w = new Float32Array(2 * 5 * 3);
  const head1 = [
    0.1,
    0.9,
    0.0,
    /**/ 0.2,
    0.3,
    0.7,
    /**/ 0.5,
    0.0,
    0.25,
    /**/ 0.05,
    0.6,
    0.0,
    /**/ 0.33,
    0.01,
    NaN,
  ];
  w.set(head1, 15);
  assert.deepEqual(pooledPixels(w, 1, 5, 3, 1).pixels, headPixels(w, 1, 5, 3));
  const p = pooledPixels(w, 1, 5, 3, 2);
  assert.equal(p.rows, 3);
  assert.equal(p.cols, 2);
  const want = [0.9, 0.7, 0.6, 0.25, 0.33, NaN]; // max of each 2x2 block (NaN wins: never hidden)
  want.forEach((x, k) =>
    assert.deepEqual(Array.from(p.pixels.slice(4 * k, 4 * k + 3)), weightToRgb(x), `block ${k}`),
  );
});

test('a single peak in a 2048 x 2048 head survives pooling', () => {
  const n = 2048;
  const w = new Float32Array(n * n).fill(1 / n);
  w[1000 * n + 1999] = 1;
  const p = pooledPixels(w, 0, n, n, poolFactor(n, n));
  assert.equal(p.rows, 1024);
  const k = 500 * 1024 + 999;
  assert.deepEqual(Array.from(p.pixels.slice(4 * k, 4 * k + 3)), weightToRgb(1));
  assert.deepEqual(Array.from(p.pixels.slice(0, 3)), weightToRgb(1 / n));
});

test('masked rows are grey in the buffer: each row at factor 1, a pooled row only when all its rows are masked', () => {
  const GREY = [154, 154, 154, 255];
  // h = 2, n = 5, cols = 2; head 1 masks rows 1, 2 and 4 (head 0 masks row 0, which must not matter).
  const masked = Uint8Array.from([1, 0, 0, 0, 0, /**/ 0, 1, 1, 0, 1]);
  const rowOf = (p, r, cols) => Array.from(p.subarray(4 * r * cols, 4 * (r + 1) * cols));
  const ones = (rows, cols) => new Uint8ClampedArray(rows * cols * 4).fill(7);
  let p = ones(5, 2);
  greyMaskedRows(p, masked, 1, 5, 2, 1);
  for (const r of [0, 3]) assert.deepEqual(rowOf(p, r, 2), Array(8).fill(7), `row ${r} untouched`);
  for (const r of [1, 2, 4]) assert.deepEqual(rowOf(p, r, 2), [...GREY, ...GREY], `row ${r} grey`);
  // Pooled by 2: buffer rows {0,1}, {2,3}, {4}: only {4} is all masked ({0,1} and {2,3} attend).
  p = ones(3, 2);
  greyMaskedRows(p, masked, 1, 5, 2, 2);
  assert.deepEqual(rowOf(p, 0, 2), Array(8).fill(7));
  assert.deepEqual(rowOf(p, 1, 2), Array(8).fill(7));
  assert.deepEqual(rowOf(p, 2, 2), [...GREY, ...GREY]);
});
