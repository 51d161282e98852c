// Weights to RGBA pixels through a colour table: the loop the grids run for every cell, kept free
// of any import so that the compute worker (compute_worker.js) can run it too and send pixels
// ready to draw, for the grids that would hold the page's thread (compute/cost.js colouredByWorkers:
// pooled ones, beyond 1024 tokens, and more than 2²² weights in all). The page colours the
// others into each grid's kept buffer (heatmap.js cellPixels).
// The table comes from color.js (rampWords: viridis); tests/web/color.test.mjs checks both roads
// give the same pixels.

/** RGBA of the cells of a fully masked row (a plain grey: lod.js greyMaskedRows, heatmap.js). */
export const MASKED_RGBA = Object.freeze([154, 154, 154, 255]);

/**
 * RGBA pixels of weights[offset .. offset + count): weight w shows table word floor(w · 256)
 * (w <= 0: word 0, w >= 1: word 255, NaN: word 256).
 * @param {Float32Array} weights @param {number} offset @param {number} count
 * @param {Uint32Array} lut 257 RGBA words in the platform's byte order (color.js rampWords)
 * @param {Uint8ClampedArray<ArrayBuffer>} [out] where to write them (count * 4 bytes, at a byte offset that is
 *   a multiple of 4); a new array when not given
 * @returns {Uint8ClampedArray<ArrayBuffer>} count * 4 bytes, for an ImageData (`out` when given)
 */
export function weightPixels(weights, offset, count, lut, out = new Uint8ClampedArray(count * 4)) {
  const words = new Uint32Array(out.buffer, out.byteOffset, count);
  for (let c = 0; c < count; c++) {
    const w = weights[offset + c];
    // w <= 0 and w >= 1 clamp; NaN fails both comparisons that pick a colour: index 256.
    words[c] = w > 0 ? lut[w < 1 ? (w * 256) | 0 : 255] : lut[w <= 0 ? 0 : 256];
  }
  return out;
}

// Level of detail (2048 tokens x 12 heads stay usable; lod.js re-exports these). A
// head's pixel buffer holds one pixel per cell up to MAX_BUFFER_SIDE cells a side; beyond, each
// pixel is the MAXIMUM weight of a factor x factor block of cells, so a sharp attention peak stays
// visible however far the grid is shrunk (a mean would wash it out).
export const MAX_BUFFER_SIDE = 1024;

/** Cells per buffer pixel along each axis for an (n, m) grid: 1 up to MAX_BUFFER_SIDE. */
export function poolFactor(n, m) {
  return Math.max(1, Math.ceil(Math.max(n, m) / MAX_BUFFER_SIDE));
}

/**
 * The (n, m) weights at weights[offset ..] pooled by `factor`: RGBA pixels of an
 * ImageData(cols, rows), rows = ceil(n / factor), cols = ceil(m / factor), each the colour (lut,
 * as weightPixels) of its block's largest weight, NaN's if any weight of the block is NaN.
 * @returns {{rows: number, cols: number, pixels: Uint8ClampedArray}}
 */
export function pooledWeightPixels(weights, offset, n, m, factor, lut) {
  // Unpooled: the weights coloured in one pass (pooling by 1 would write and read a copy).
  if (factor === 1) return { rows: n, cols: m, pixels: weightPixels(weights, offset, n * m, lut) };
  const rows = Math.ceil(n / factor);
  const cols = Math.ceil(m / factor);
  const best = new Float32Array(rows * cols).fill(-Infinity);
  for (let i = 0; i < n; i++) {
    const r = Math.floor(i / factor) * cols;
    const row = offset + i * m;
    for (let j = 0; j < m; j++) {
      const w = weights[row + j];
      const k = r + Math.floor(j / factor);
      if (w > best[k] || Number.isNaN(w)) best[k] = Number.isNaN(best[k]) ? best[k] : w;
    }
  }
  return { rows, cols, pixels: weightPixels(best, 0, rows * cols, lut) };
}

/**
 * Greys the buffer rows of `pixels` (cols wide, pooled by `factor` or not) whose query rows are
 * all fully masked (fully_masked_rows (h, n), 1 = every key masked): a pooled row is grey only
 * when each of its `factor` rows is masked, so an attended row is never hidden.
 */
export function greyMaskedRows(pixels, masked, head, n, cols, factor) {
  const words = new Uint32Array(pixels.buffer, pixels.byteOffset, pixels.length / 4);
  const grey = new Uint32Array(Uint8Array.from(MASKED_RGBA).buffer)[0];
  for (let r = 0; r * factor < n; r++) {
    const end = Math.min(n, r * factor + factor);
    let i = r * factor;
    while (i < end && masked[head * n + i] === 1) i++;
    if (i === end) words.fill(grey, r * cols, r * cols + cols);
  }
}

/**
 * One pixel buffer per head of an (h, n, m) result, as each head's grid draws it (pooled beyond
 * MAX_BUFFER_SIDE, fully masked rows grey): what the compute worker sends with its weights.
 * @param {{n: number, m: number, attn_weights: Float32Array, fully_masked_rows: Uint8Array}} result
 * @param {Uint32Array} lut as weightPixels
 * @returns {Uint8ClampedArray[]}
 */
export function resultPixels({ n, m, attn_weights: weights, fully_masked_rows: masked }, lut) {
  const factor = poolFactor(n, m);
  const out = [];
  for (let h = 0; h < weights.length / (n * m); h++) {
    const { cols, pixels } = pooledWeightPixels(weights, h * n * m, n, m, factor, lut);
    greyMaskedRows(pixels, masked, h, n, cols, factor);
    out.push(pixels);
  }
  return out;
}
