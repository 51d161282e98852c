// Level of detail for large grids (issue 6: 2048 tokens x 12 heads stay usable). A head's pixel
// buffer holds one pixel per cell up to MAX_BUFFER_SIDE cells a side; beyond, each pixel is the
// MAXIMUM weight of a factor x factor block of cells, so a sharp attention peak stays visible
// however far the grid is shrunk (a mean would wash it out). Pure: tested in tests/web/lod.test.mjs.
import { putWeightPixel } from './color.js';
import { MASKED_RGBA } from './pixels.js';

export const MAX_BUFFER_SIDE = 1024;

/** Cells per buffer pixel along each axis for an (n, m) grid: 1 up to MAX_BUFFER_SIDE. */
export function poolFactor(n, m) {
  return Math.max(1, Math.ceil(Math.max(n, m) / MAX_BUFFER_SIDE));
}

/**
 * Head `head`'s (n, m) weights pooled by `factor`: RGBA pixels of an ImageData(cols, rows),
 * rows = ceil(n / factor), cols = ceil(m / factor), each the colour of its block's largest weight
 * (NaN if any weight of the block is NaN). factor 1 gives one pixel per cell (color.js headPixels).
 * @returns {{rows: number, cols: number, pixels: Uint8ClampedArray}}
 */
export function pooledPixels(weights, head, n, m, factor) {
  const rows = Math.ceil(n / factor);
  const cols = Math.ceil(m / factor);
  const best = new Float32Array(rows * cols).fill(-Infinity);
  const base = head * n * m;
  for (let i = 0; i < n; i++) {
    const r = Math.floor(i / factor) * cols;
    const row = base + i * m;
    for (let j = 0; j < m; j++) {
      const w = weights[row + j];
      const k = r + Math.floor(j / factor);
      if (w > best[k] || Number.isNaN(w)) best[k] = Number.isNaN(best[k]) ? best[k] : w;
    }
  }
  const pixels = new Uint8ClampedArray(rows * cols * 4);
  for (let k = 0; k < rows * cols; k++) putWeightPixel(pixels, k, best[k]);
  return { rows, cols, pixels };
}

/**
 * Greys (#9a9a9a) the buffer rows of `pixels` (cols wide, from pooledPixels or headPixels) whose
 * query rows are all fully masked (fully_masked_rows (h, n), 1 = every key masked): a pooled row
 * is grey only when each of its `factor` rows is masked, so an attended row is never hidden.
 */
export function greyMaskedRows(pixels, masked, head, n, cols, factor) {
  for (let r = 0; r * factor < n; r++) {
    const end = Math.min(n, r * factor + factor);
    let i = r * factor;
    while (i < end && masked[head * n + i] === 1) i++;
    if (i === end) for (let k = r * cols; k < r * cols + cols; k++) pixels.set(MASKED_RGBA, 4 * k);
  }
}
