// Weight → colour: viridis as d3-scale-chromatic has it (sequential, perceptually uniform,
// colour-blind safe), from the generated table viridis_table.js (scripts/codegen/gen_viridis.mjs). Weights are probabilities in [0, 1], so the domain is fixed to [0, 1]
// for every head: the same colour means the same weight in every grid.
import { interpolateViridis } from './viridis_table.js';
import { weightPixels } from './pixels.js';

/** The scale used everywhere on the page (the legend, the cells, the browser tests). */
export const colorScale = interpolateViridis;

/** "#rrggbb" or "rgb(r, g, b)" → [r, g, b] (0..255). */
export function parseColor(css) {
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(css);
  if (hex) return [parseInt(hex[1], 16), parseInt(hex[2], 16), parseInt(hex[3], 16)];
  const rgb = /^rgba?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)/i.exec(css);
  if (rgb) return [Number(rgb[1]), Number(rgb[2]), Number(rgb[3])];
  throw new Error(`unrecognised colour "${css}"`);
}

/** Colour of weight `w` as [r, g, b]; w is clamped to [0, 1]; NaN → mid grey. */
export function weightToRgb(w) {
  if (Number.isNaN(w)) return [128, 128, 128];
  const t = w < 0 ? 0 : Math.min(w, 1);
  return parseColor(colorScale(t));
}

/**
 * d3's viridis is a ramp of 256 colours: weight t shows colour floor(t * 256) (clamped to 0..255).
 * The same 256 colours as RGB bytes, read once from colorScale, so a grid's pixels cost a table
 * lookup per cell instead of a colour string each (tests/web/color.test.mjs: equal to weightToRgb).
 */
const RAMP = Uint8Array.from(
  { length: 256 * 3 },
  (_, k) => weightToRgb((Math.floor(k / 3) + 0.5) / 256)[k % 3],
);

/**
 * The ramp as whole RGBA pixels (one 32-bit word each, in the platform's byte order, as a
 * Uint32Array over an ImageData's bytes reads them), plus NaN's grey at index 256: the table of
 * pixels.js (the page sends it to the compute worker, which colours the cells it computed).
 */
const RAMP_WORDS = (() => {
  const bytes = new Uint8Array(257 * 4);
  for (let i = 0; i < 257; i++) {
    const j = Math.min(i, 255) * 3;
    bytes.set(i === 256 ? [128, 128, 128, 255] : [RAMP[j], RAMP[j + 1], RAMP[j + 2], 255], 4 * i);
  }
  return new Uint32Array(bytes.buffer);
})();

/** WCAG relative luminance of an sRGB colour [r, g, b] (0..255). */
export function relativeLuminance(rgb) {
  const [r, g, b] = rgb.map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio of two sRGB colours (1..21). */
export function contrastRatio(a, b) {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** Ramp colour i (0..255) as [r, g, b]: what weight w shows for i = floor(w · 256), clamped. */
export function rampColor(i) {
  return [RAMP[3 * i], RAMP[3 * i + 1], RAMP[3 * i + 2]];
}

/** Per ramp colour, the ink (black or white) of higher contrast on it: the numbers in the cells. */
const RAMP_INK = Array.from({ length: 256 }, (_, i) =>
  contrastRatio(rampColor(i), [0, 0, 0]) >= contrastRatio(rampColor(i), [255, 255, 255])
    ? '#000000'
    : '#ffffff',
);

/** The ink for a number printed on weight w's cell colour (black on NaN's grey). */
export function cellInk(w) {
  if (Number.isNaN(w)) return '#000000';
  return RAMP_INK[Math.max(0, Math.min(255, Math.floor(w * 256)))];
}

/** The colour table of the grids, the small multiples and the workers' pixels (see RAMP_WORDS). */
export function rampWords() {
  return RAMP_WORDS;
}

/**
 * One RGBA pixel per cell of head `head`'s (n, m) matrix, for an ImageData(m, n): weight w shows
 * ramp colour floor(w · 256), NaN grey, written a word at a time (pixels.js; several times faster
 * than a byte at a time; tests/web/color.test.mjs checks every pixel against weightToRgb).
 * weights: Float32Array (h, n, m) row-major, head i at offset i*n*m.
 * @param {Uint8ClampedArray<ArrayBuffer>} [out] where to write them (n*m*4 bytes); a new array when not given
 * @returns {Uint8ClampedArray<ArrayBuffer>} length n*m*4 (`out` when given)
 */
export function headPixels(weights, head, n, m, out) {
  return weightPixels(weights, head * n * m, n * m, rampWords(), out);
}

/** The legend strip: `width` pixels sampled at the centre of each step of [0, 1]. */
export function legendPixels(width) {
  const out = new Uint8ClampedArray(width * 4);
  for (let x = 0; x < width; x++) {
    const [r, g, b] = weightToRgb(width === 1 ? 0 : x / (width - 1));
    out.set([r, g, b, 255], 4 * x);
  }
  return out;
}

/**
 * Text colour (black or white) that reads best on top of weight `w`'s colour,
 * by WCAG relative luminance.
 */
export function textColorOn(w) {
  const [r, g, b] = weightToRgb(w).map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return 1.05 / (lum + 0.05) > (lum + 0.05) / 0.05 ? '#ffffff' : '#000000';
}
