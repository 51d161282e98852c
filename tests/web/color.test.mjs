import { test } from 'node:test';
import assert from 'node:assert/strict';
import { interpolateViridis } from 'd3-scale-chromatic';
import {
  colorScale,
  parseColor,
  weightToRgb,
  headPixels,
  legendPixels,
  textColorOn,
} from '../../web/src/draw/color.js';

test('the scale is d3-scale-chromatic viridis', () => {
  for (let i = 0; i <= 4096; i++)
    assert.equal(colorScale(i / 4096), interpolateViridis(i / 4096), `t=${i / 4096}`);
  assert.deepEqual(weightToRgb(0), parseColor(interpolateViridis(0)));
  assert.deepEqual(weightToRgb(0), [0x44, 0x01, 0x54]); // viridis starts dark purple
  assert.deepEqual(weightToRgb(1), [0xfd, 0xe7, 0x25]); // and ends yellow
});

test('weights outside [0, 1] are clamped, NaN is grey', () => {
  assert.deepEqual(weightToRgb(-0.5), weightToRgb(0));
  assert.deepEqual(weightToRgb(2), weightToRgb(1));
  assert.deepEqual(weightToRgb(NaN), [128, 128, 128]);
});

test('parseColor reads hex and rgb()', () => {
  assert.deepEqual(parseColor('#0a0B0c'), [10, 11, 12]);
  assert.deepEqual(parseColor('rgb(1, 2, 3)'), [1, 2, 3]);
  assert.throws(() => parseColor('teal'), /unrecognised colour "teal"/);
});

test('headPixels: one opaque RGBA pixel per cell of the chosen head', () => {
  // h = 2 heads, n = 2 queries, m = 3 keys
  const w = Float32Array.from([1, 0, 0, 0.5, 0.25, 0.25, /* head 1 */ 0, 0, 1, 0.2, 0.3, 0.5]);
  const px = headPixels(w, 1, 2, 3);
  assert.equal(px.length, 2 * 3 * 4);
  for (let c = 0; c < 6; c++) {
    assert.deepEqual(Array.from(px.slice(4 * c, 4 * c + 3)), weightToRgb(w[6 + c]));
    assert.equal(px[4 * c + 3], 255);
  }
});

test('headPixels into a given buffer: the same pixels, written in place at its byte offset, nothing around them touched', () => {
  const w = Float32Array.from([1, 0, 0, 0.5, 0.25, 0.25, /* head 1 */ 0, 0, 1, 0.2, 0.3, 0.5]);
  const store = new Uint8ClampedArray(4 + 2 * 3 * 4 + 4).fill(7);
  const out = store.subarray(4, 4 + 2 * 3 * 4);
  assert.equal(headPixels(w, 1, 2, 3, out), out);
  assert.deepEqual(out, headPixels(w, 1, 2, 3));
  assert.deepEqual([...store.subarray(0, 4), ...store.subarray(28)], [7, 7, 7, 7, 7, 7, 7, 7]);
  // Written again with other weights: every pixel replaced (the grids reuse one buffer a view).
  headPixels(w, 0, 2, 3, out);
  assert.deepEqual(out, headPixels(w, 0, 2, 3));
});

test('headPixels: the 256-colour lookup gives weightToRgb exactly, at every step edge and in between', () => {
  const ws = [NaN, -1, -0, 0, 1e-9, 1, 1.5, 0.999999, 0.5, 1 / 3];
  for (let i = 0; i <= 256; i++)
    ws.push(i / 256, Math.max(0, i / 256 - 1e-7), Math.min(1, i / 256 + 1e-7));
  for (let i = 0; i < 5000; i++) ws.push(Math.fround(Math.sin(i) * 0.5 + 0.5));
  const w = Float32Array.from(ws);
  const px = headPixels(w, 0, 1, w.length);
  for (let c = 0; c < w.length; c++) {
    assert.deepEqual(Array.from(px.slice(4 * c, 4 * c + 3)), weightToRgb(w[c]), `w=${w[c]}`);
  }
});

test('legend runs from the colour of 0 to the colour of 1', () => {
  const px = legendPixels(256);
  assert.deepEqual(Array.from(px.slice(0, 3)), weightToRgb(0));
  assert.deepEqual(Array.from(px.slice(255 * 4, 255 * 4 + 3)), weightToRgb(1));
});

test('text colour contrasts with the cell', () => {
  assert.equal(textColorOn(0), '#ffffff');
  assert.equal(textColorOn(1), '#000000');
});

test("resultPixels (the worker's road): every head as headPixels gives it, fully masked rows grey as lod.js draws them", async () => {
  const { resultPixels, MASKED_RGBA } = await import('../../web/src/draw/pixels.js');
  const { greyMaskedRows } = await import('../../web/src/draw/lod.js');
  const { rampWords } = await import('../../web/src/draw/color.js');
  // h = 3 heads, n = 2 queries, m = 4 keys; head 1's row 0 and head 2's row 1 fully masked.
  const w = Float32Array.from({ length: 3 * 2 * 4 }, (_, i) => (i % 7) / 6 - 0.01);
  w[3] = NaN;
  const masked = Uint8Array.of(0, 0, 1, 0, 0, 1);
  const pixels = resultPixels(
    { n: 2, m: 4, attn_weights: w, fully_masked_rows: masked },
    rampWords(),
  );
  assert.equal(pixels.length, 3);
  for (let h = 0; h < 3; h++) {
    const want = headPixels(w, h, 2, 4);
    greyMaskedRows(want, masked, h, 2, 4, 1);
    assert.deepEqual(pixels[h], want, `head ${h}`);
  }
  assert.deepEqual(Array.from(pixels[1].slice(0, 4)), [...MASKED_RGBA]);
  assert.deepEqual(Array.from(pixels[0].slice(12, 15)), weightToRgb(NaN));
});

test('resultPixels pools beyond 1024 tokens as the grid does (lod.js pooledPixels, greyMaskedRows)', async () => {
  const { resultPixels } = await import('../../web/src/draw/pixels.js');
  const { pooledPixels, greyMaskedRows, poolFactor } = await import('../../web/src/draw/lod.js');
  const { rampWords } = await import('../../web/src/draw/color.js');
  const n = 1100; // factor 2: 550 x 550 buffer pixels
  assert.equal(poolFactor(n, n), 2);
  const w = Float32Array.from({ length: 2 * n * n }, (_, i) => ((i * 2654435761) % 1000) / 1000);
  w[5] = NaN; // head 0, block (0, 2): NaN, as a NaN weight in a block makes its pixel
  const masked = new Uint8Array(2 * n);
  masked[n + 6] = masked[n + 7] = 1; // head 1: rows 6 and 7 (one buffer row) fully masked
  masked[n + 9] = 1; // and row 9 only: its buffer row keeps row 8's weights
  const pixels = resultPixels({ n, m: n, attn_weights: w, fully_masked_rows: masked }, rampWords());
  for (const h of [0, 1]) {
    const want = pooledPixels(w, h, n, n, 2);
    greyMaskedRows(want.pixels, masked, h, n, want.cols, 2);
    assert.deepEqual(pixels[h], want.pixels, `head ${h}`);
  }
  assert.deepEqual(Array.from(pixels[0].slice(8, 11)), weightToRgb(NaN));
  assert.deepEqual(Array.from(pixels[1].slice(3 * 550 * 4, 3 * 550 * 4 + 4)), [154, 154, 154, 255]);
  assert.notDeepEqual(Array.from(pixels[1].slice(4 * 550 * 4, 4 * 550 * 4 + 3)), [154, 154, 154]);
});

test('the ink of the numbers in cells has WCAG contrast >= 4.5 on every colour of the scale', async () => {
  const { cellInk, rampColor, contrastRatio } = await import('../../web/src/draw/color.js');
  const inks = new Set();
  for (let i = 0; i < 256; i++) {
    const w = (i + 0.5) / 256;
    // The cell's colour is ramp colour i (headPixels' lookup) and weightToRgb's.
    assert.deepEqual(rampColor(i), weightToRgb(w));
    const ink = parseColor(cellInk(w));
    inks.add(cellInk(w));
    const ratio = contrastRatio(rampColor(i), ink);
    assert.ok(
      ratio >= 4.5,
      `ramp colour ${i} (${rampColor(i)}): ink ${cellInk(w)} contrast ${ratio.toFixed(2)}`,
    );
  }
  assert.deepEqual(
    [...inks].sort(),
    ['#000000', '#ffffff'],
    'dark cells get white ink, bright cells black',
  );
  assert.equal(cellInk(0), '#ffffff');
  assert.equal(cellInk(1), '#000000');
  assert.equal(contrastRatio([0, 0, 0], [255, 255, 255]), 21);
});
