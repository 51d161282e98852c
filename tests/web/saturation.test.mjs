// The random mode's note on one-hot rows (web/src/modes/random/saturation.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oneHotRows, saturationNote } from '../../web/src/modes/random/saturation.js';

test('one-hot rows: largest weight >= 0.99, fully masked rows not counted', () => {
  // 2 heads × 2 rows × 3 keys: one-hot, soft, masked (all zero), exactly 0.99.
  const w = Float32Array.from([1, 0, 0, 0.5, 0.25, 0.25, 0, 0, 0, 0.005, 0.99, 0.005]);
  assert.deepEqual(oneHotRows(w, 2, 2, 3), { oneHot: 2, rows: 3 });
  assert.deepEqual(oneHotRows(Float32Array.from([0.98, 0.02]), 1, 1, 2), { oneHot: 0, rows: 1 });
  assert.deepEqual(oneHotRows(new Float32Array(0), 0, 0, 0), { oneHot: 0, rows: 0 });
});

test('the note: shown from three quarters of the rows up, with the counts and d_model', () => {
  assert.equal(saturationNote({ oneHot: 5, rows: 8 }, 8), '');
  assert.equal(saturationNote({ oneHot: 0, rows: 0 }, 8), '');
  const some = saturationNote({ oneHot: 6, rows: 8 }, 64);
  assert.match(some, /^6 of 8 rows of these grids put at least 99 % of their weight on one key\./);
  assert.match(some, /standard deviation of about d_model \(64 here\)/);
  const every = saturationNote({ oneHot: 96, rows: 96 }, 512);
  assert.match(
    every,
    /^Every row of these grids puts at least 99 % of its weight on one key\. That is module 08's random weights/,
  );
  assert.match(every, /\(512 here\)/);
});
