// Weights to RGBA pixels through a colour table: the loop the grids run for every cell, kept free
// of any import so that the compute worker (compute_worker.js) can run it too and send pixels
// ready to draw (issue 6: colouring 12 heads of 512 x 512 cost the page ~20 ms a view).
// The table comes from color.js (rampWords: viridis); tests/web/color.test.mjs checks both roads
// give the same pixels.

/** RGBA of the cells of a fully masked row (a plain grey: lod.js greyMaskedRows, heatmap.js). */
export const MASKED_RGBA = Object.freeze([154, 154, 154, 255]);

/**
 * RGBA pixels of weights[offset .. offset + count): weight w shows table word floor(w · 256)
 * (w <= 0: word 0, w >= 1: word 255, NaN: word 256).
 * @param {Float32Array} weights @param {number} offset @param {number} count
 * @param {Uint32Array} lut 257 RGBA words in the platform's byte order (color.js rampWords)
 * @returns {Uint8ClampedArray} count * 4 bytes, for an ImageData
 */
export function weightPixels(weights, offset, count, lut) {
  const out = new Uint8ClampedArray(count * 4);
  const words = new Uint32Array(out.buffer);
  for (let c = 0; c < count; c++) {
    const w = weights[offset + c];
    // w <= 0 and w >= 1 clamp; NaN fails both comparisons that pick a colour: index 256.
    words[c] = w > 0 ? lut[w < 1 ? (w * 256) | 0 : 255] : lut[w <= 0 ? 0 : 256];
  }
  return out;
}

/**
 * One pixel buffer per head of an (h, n, m) result, fully masked rows grey: what each head's grid
 * draws when it is not pooled (lod.js poolFactor 1).
 * @param {{n: number, m: number, attn_weights: Float32Array, fully_masked_rows: Uint8Array}} result
 * @param {Uint32Array} lut as weightPixels
 * @returns {Uint8ClampedArray[]}
 */
export function resultPixels({ n, m, attn_weights: weights, fully_masked_rows: masked }, lut) {
  const heads = weights.length / (n * m);
  const grey = new Uint32Array(Uint8Array.from(MASKED_RGBA).buffer)[0];
  const out = [];
  for (let h = 0; h < heads; h++) {
    const pixels = weightPixels(weights, h * n * m, n * m, lut);
    const words = new Uint32Array(pixels.buffer);
    for (let i = 0; i < n; i++) if (masked[h * n + i] === 1) words.fill(grey, i * m, (i + 1) * m);
    out.push(pixels);
  }
  return out;
}
