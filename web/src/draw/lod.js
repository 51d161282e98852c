// Level of detail for large grids (2048 tokens x 12 heads stay usable): pixels.js holds
// the pooling, import-free so that the compute worker runs it too; here, the page's entry points
// with the viridis table. Pure: tested in tests/web/lod.test.mjs.
import { rampWords } from './color.js';
import { pooledWeightPixels } from './pixels.js';

export { MAX_BUFFER_SIDE, poolFactor, greyMaskedRows } from './pixels.js';

/**
 * Head `head`'s (n, m) weights pooled by `factor`: RGBA pixels of an ImageData(cols, rows),
 * rows = ceil(n / factor), cols = ceil(m / factor), each the colour of its block's largest weight
 * (NaN if any weight of the block is NaN). factor 1 gives one pixel per cell (color.js headPixels).
 * @returns {{rows: number, cols: number, pixels: Uint8ClampedArray}}
 */
export function pooledPixels(weights, head, n, m, factor) {
  return pooledWeightPixels(weights, head * n * m, n, m, factor, rampWords());
}
