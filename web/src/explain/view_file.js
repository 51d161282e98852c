// An imported view in one file, to save and open again: the tokens, the whole attention tensor
// (every layer and head, float32-exact decimals) and the view's settings (layer shown, heads
// drawn). Documented in docs/export.md ("View files"). Pure: tested by tests/web/view_file.test.mjs.
import { float32String } from '../chrome/export.js';

export const VIEW_FORMAT = 'mha-lab-attention-view';
export const VIEW_VERSION = 1;
/** The most weights (layers × heads × n × m) a view file holds: 4 M, a JSON file of about 40 MB. */
export const MAX_VIEW_WEIGHTS = 1 << 22;

/**
 * The view file's document.
 * @param {{layers: Float32Array[], num_heads: number, n: number, m: number, rows: string[],
 *          cols: string[], layer: number, heads?: number[], source: string}} v
 *   layers: each (num_heads, n, m) row-major; rows, cols: the query and key labels
 * @returns {object} ready for JSON.stringify
 * @throws {Error} when the shapes disagree or the tensor is too large
 */
export function viewDocument(v) {
  const { layers, num_heads: numHeads, n, m } = v;
  const total = layers.length * numHeads * n * m;
  if (total > MAX_VIEW_WEIGHTS)
    throw new Error(`${total} weights are too many for a view file (at most ${MAX_VIEW_WEIGHTS})`);
  layers.forEach((l, k) => {
    if (l.length !== numHeads * n * m)
      throw new Error(
        `layer ${k} has ${l.length} weights, not num_heads*n*m = ${numHeads}*${n}*${m}`,
      );
  });
  if (v.rows.length !== n || v.cols.length !== m)
    throw new Error(`${v.rows.length} query and ${v.cols.length} key labels for n=${n}, m=${m}`);
  return {
    format: VIEW_FORMAT,
    version: VIEW_VERSION,
    source: v.source,
    num_layers: layers.length,
    num_heads: numHeads,
    n,
    m,
    query_tokens: [...v.rows],
    key_tokens: [...v.cols],
    view: { layer: v.layer, heads: v.heads ? [...v.heads] : [...Array(numHeads).keys()] },
    attn_weights: layers.map((l) => Array.from(l, (w) => Number(float32String(w)))),
  };
}

/** The view file as text (JSON, one line per layer). */
export function viewFileText(v) {
  const doc = viewDocument(v);
  const { attn_weights: w, ...rest } = doc;
  const head = JSON.stringify(rest, null, 1).replace(/\n}$/, '');
  return `${head},\n "attn_weights": [\n${w.map((l) => `  ${JSON.stringify(l)}`).join(',\n')}\n ]\n}\n`;
}

/** Whether `text` looks like a view file (a JSON object naming VIEW_FORMAT), without parsing all of it. */
export function isViewFile(text) {
  return /^\s*\{[\s\S]{0,200}"format"\s*:\s*"mha-lab-attention-view"/.test(text.slice(0, 400));
}

const isCount = (v) => Number.isInteger(v) && v >= 1;

/**
 * A view file read back, every field checked.
 * @param {string} text
 * @returns {{layers: Float32Array[], num_layers: number, num_heads: number, n: number, m: number,
 *   rows: string[], cols: string[], layer: number, heads: number[], source: string}}
 * @throws {Error} naming what is wrong (not JSON, another format or version, a shape that disagrees,
 *   a weight that is not a number)
 */
export function parseViewFile(text) {
  let d;
  try {
    d = JSON.parse(text);
  } catch (e) {
    throw new Error(`not a view file: the JSON does not parse (${e.message})`);
  }
  if (!d || typeof d !== 'object' || Array.isArray(d))
    throw new Error('not a view file: the JSON is not an object');
  if (d.format !== VIEW_FORMAT)
    throw new Error(`not a view file: format is ${JSON.stringify(d.format)}, not "${VIEW_FORMAT}"`);
  if (d.version !== VIEW_VERSION)
    throw new Error(
      `view file version ${JSON.stringify(d.version)} is not supported (this page reads version ${VIEW_VERSION})`,
    );
  for (const k of ['num_layers', 'num_heads', 'n', 'm']) {
    if (!isCount(d[k]))
      throw new Error(
        `view file: ${k} is ${JSON.stringify(d[k])}, not a whole number of at least 1`,
      );
  }
  const { num_layers: L, num_heads: H, n, m } = d;
  if (L * H * n * m > MAX_VIEW_WEIGHTS)
    throw new Error(
      `view file: ${L}×${H}×${n}×${m} weights are too many (at most ${MAX_VIEW_WEIGHTS})`,
    );
  const labels = (key, len) => {
    const v = d[key];
    if (!Array.isArray(v) || v.length !== len || !v.every((t) => typeof t === 'string')) {
      throw new Error(`view file: ${key} must be ${len} strings`);
    }
    return v;
  };
  const rows = labels('query_tokens', n);
  const cols = labels('key_tokens', m);
  if (!Array.isArray(d.attn_weights) || d.attn_weights.length !== L)
    throw new Error(`view file: attn_weights must hold ${L} layers`);
  const layers = d.attn_weights.map((l, k) => {
    if (!Array.isArray(l) || l.length !== H * n * m)
      throw new Error(`view file: layer ${k} must hold num_heads*n*m = ${H * n * m} weights`);
    const out = new Float32Array(l.length);
    for (let i = 0; i < l.length; i++) {
      const w = l[i];
      if (typeof w !== 'number' || !Number.isFinite(w) || w < 0 || w > 1) {
        throw new Error(
          `view file: layer ${k}, weight ${i} is ${JSON.stringify(w)}, not a number in [0, 1]`,
        );
      }
      out[i] = w;
    }
    return out;
  });
  const view = d.view && typeof d.view === 'object' ? d.view : {};
  const layer = view.layer ?? L - 1;
  if (!Number.isInteger(layer) || layer < 0 || layer >= L)
    throw new Error(
      `view file: view.layer ${JSON.stringify(view.layer)} is not one of the ${L} layers`,
    );
  const heads = view.heads ?? [...Array(H).keys()];
  if (
    !Array.isArray(heads) ||
    heads.length === 0 ||
    !heads.every((h) => Number.isInteger(h) && h >= 0 && h < H)
  ) {
    throw new Error(`view file: view.heads must list heads from 0 to ${H - 1}`);
  }
  return {
    layers,
    num_layers: L,
    num_heads: H,
    n,
    m,
    rows,
    cols,
    layer,
    heads,
    source: typeof d.source === 'string' ? d.source : 'view file',
  };
}
