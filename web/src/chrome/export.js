// The weights on screen as files: CSV (one row per cell) and JSON (tokens, configuration and the
// weights as h × n × m), plus the arrangement of the PNG snapshot. Pure functions, no DOM: tested by
// tests/web/export.test.mjs. The drawing and the download itself are in snapshot.js.
//
// Legend: h = heads shown, n = query tokens, m = key tokens. `weights` is the module's attn_weights,
// a Float32Array (H, n, m) row-major over ALL H heads of the result; `heads` picks the ones shown
// (every head unless the view shows a subset), so nothing is averaged or dropped silently.

export const EXPORT_FORMAT = 'mha-lab-attention-weights';
export const EXPORT_VERSION = 1;

/**
 * The shortest decimal that reads back as the same float32 (e.g. 0.424 rather than
 * 0.42399999499320984): a value of the CSV or JSON restores the module's float32 exactly.
 * NaN and ±Infinity (never produced for weights) print as "NaN", "Infinity", "-Infinity".
 */
export function float32String(w) {
  if (!Number.isFinite(w)) return String(w);
  const f = Math.fround(w);
  if (f === 0) return '0';
  for (let p = 1; p <= 9; p++) {
    const s = f.toPrecision(p);
    if (Math.fround(Number(s)) === f) return String(Number(s));
  }
  return String(f); // unreachable: 9 significant digits always round-trip a float32
}

/** One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF; quotes doubled. */
export function csvField(value) {
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * Cells a CSV or JSON file holds at most (h·n·m): 512 tokens × 12 heads (3.1 M cells, a 67 MB CSV)
 * take the page a few seconds; 2048 × 12 (50 M cells) froze it for half a minute and crashed the
 * tab. Larger views export as PNG.
 */
export const MAX_EXPORT_CELLS = 1 << 22;

function checkShape({ weights, heads, queryTokens, keyTokens }) {
  const n = queryTokens.length;
  const m = keyTokens.length;
  if (n === 0 || m === 0) throw new Error(`nothing to export: ${n} query tokens, ${m} key tokens`);
  if (weights.length % (n * m) !== 0) {
    throw new Error(`attn_weights has ${weights.length} values, not a multiple of n*m = ${n}*${m}`);
  }
  const total = weights.length / (n * m);
  for (const h of heads) {
    if (!Number.isInteger(h) || h < 0 || h >= total)
      throw new Error(`head ${h} is not one of the ${total} heads`);
  }
  const cells = heads.length * n * m;
  if (cells > MAX_EXPORT_CELLS) {
    throw new Error(
      `${heads.length} heads × ${n} × ${m} = ${cells} weights are too many for one file ` +
        `(at most ${MAX_EXPORT_CELLS}): save a PNG, or use fewer tokens or heads`,
    );
  }
  return { n, m, total };
}

/**
 * CSV with a header and one row per (head, query, key) cell, in the order head, query, key:
 *   head,query_index,query,key_index,key,weight
 *   0,0,Heads,2,at,0.424
 * Tokens are written as they are (quoted when needed): the tokenizer makes every character other
 * than letters and digits a token of its own, so a token can never be a spreadsheet formula
 * longer than one sign.
 * @param {{weights: Float32Array, heads: number[], queryTokens: string[], keyTokens: string[]}} p
 * @returns {string} lines joined by CRLF (RFC 4180), ending with CRLF
 * @throws {Error} when the shapes disagree (the message names them)
 */
export function weightsCsv(p) {
  const { n, m } = checkShape(p);
  const { weights, heads, queryTokens, keyTokens } = p;
  const lines = ['head,query_index,query,key_index,key,weight'];
  for (const h of heads) {
    for (let i = 0; i < n; i++) {
      const q = csvField(queryTokens[i]);
      for (let j = 0; j < m; j++) {
        lines.push(
          `${h},${i},${q},${j},${csvField(keyTokens[j])},${float32String(weights[(h * n + i) * m + j])}`,
        );
      }
    }
  }
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * The JSON document of the weights shown:
 *   {format, version, config: {...}, tokens: [n], key_tokens: [m], heads: [h] (indices into the
 *    model's heads), shape: [h, n, m], attn_weights: h × n × m nested arrays,
 *    fully_masked_rows: h × n of 0/1 (1: every key of that row is masked, its weights are 0)}
 * @param {{weights: Float32Array, heads: number[], queryTokens: string[], keyTokens: string[],
 *          maskedRows?: Uint8Array, config: object}} p  maskedRows: (H, n); config: the settings
 *          that produced the weights (d_model, num_heads, d_head, seed, is_causal, positional, ...),
 *          copied as is
 * @returns {object} ready for JSON.stringify
 * @throws {Error} when the shapes disagree
 */
export function weightsJson(p) {
  const { n, m } = checkShape(p);
  const { weights, heads, queryTokens, keyTokens, maskedRows, config } = p;
  const attn = heads.map((h) =>
    Array.from({ length: n }, (_, i) =>
      Array.from({ length: m }, (_, j) => Number(float32String(weights[(h * n + i) * m + j]))),
    ),
  );
  const masked = heads.map((h) =>
    Array.from({ length: n }, (_, i) => (maskedRows?.[h * n + i] === 1 ? 1 : 0)),
  );
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    config: { ...config },
    tokens: [...queryTokens],
    key_tokens: [...keyTokens],
    heads: [...heads],
    shape: [heads.length, n, m],
    attn_weights: attn,
    fully_masked_rows: masked,
  };
}

/**
 * A file name for an export: "mha-attention-d8-h2-seed7-causal.png". Only [a-z0-9.-].
 * @param {{d_model: number, num_heads: number, seed?: number, is_causal?: boolean}} config
 * @param {'png'|'csv'|'json'} ext
 */
export function exportFileName(config, ext, stem = 'mha-attention') {
  const parts = [stem, `d${config.d_model}`, `h${config.num_heads}`];
  if (config.seed !== undefined) parts.push(`seed${config.seed}`);
  if (config.is_causal) parts.push('causal');
  return `${parts
    .join('-')
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')}.${ext}`;
}

/** The PNG snapshot's margin (CSS px) around everything. */
export const SNAPSHOT_PAD = 16;

/**
 * Where each piece of the PNG snapshot goes, in CSS px (the caller scales by devicePixelRatio):
 * a title band, the head panels in rows (as many per row as fit `maxWidth`, at least one), each
 * with its caption above, then the legend with its caption. The snapshot is wide enough for a
 * title of `titleWidth` px up to `maxWidth` (a longer one is elided: elideText).
 * @param {{titleHeight: number, captionHeight: number, panels: {width: number, height: number}[],
 *          legend: {width: number, height: number}, legendCaptionHeight: number, maxWidth: number,
 *          titleWidth?: number, pad?: number, gap?: number}} p
 * @returns {{width: number, height: number, title: {x, y}, panels: {x, y, captionY}[],
 *            legend: {x, y}, legendCaption: {x, y}}}
 */
export function snapshotLayout({
  titleHeight,
  captionHeight,
  panels,
  legend,
  legendCaptionHeight,
  maxWidth,
  titleWidth = 0,
  pad = SNAPSHOT_PAD,
  gap = 16,
}) {
  const placed = [];
  let x = pad;
  let y = pad + titleHeight + gap;
  let rowHeight = 0;
  let width = 0;
  for (const p of panels) {
    if (x > pad && x + p.width + pad > maxWidth) {
      x = pad;
      y += rowHeight + gap;
      rowHeight = 0;
    }
    placed.push({ x, y: y + captionHeight, captionY: y });
    rowHeight = Math.max(rowHeight, captionHeight + p.height);
    width = Math.max(width, x + p.width + pad);
    x += p.width + gap;
  }
  const legendY = y + rowHeight + gap;
  width = Math.max(
    width,
    pad + legend.width + pad,
    pad + Math.min(titleWidth, maxWidth - 2 * pad) + pad,
  );
  return {
    width: Math.ceil(width),
    height: Math.ceil(legendY + legend.height + legendCaptionHeight + pad),
    title: { x: pad, y: pad },
    panels: placed,
    legend: { x: pad, y: legendY },
    legendCaption: { x: pad, y: legendY + legend.height },
  };
}

/**
 * `text` cut to fit `maxWidth` as measured by `measure` (e.g. a canvas context's measureText
 * width, in px), ending in "…" when cut: a snapshot's title quotes the whole sentence, up to 2048
 * tokens, which fillText would otherwise clip at the image's edge mid-character. Cuts between
 * grapheme clusters (Intl.Segmenter: an accent, a flag or a joined emoji stays whole; between
 * code points where it is missing); the longest prefix that fits, by bisection.
 * @param {string} text @param {number} maxWidth @param {(s: string) => number} measure
 * @returns {string}
 */
export function elideText(text, maxWidth, measure) {
  if (measure(text) <= maxWidth) return text;
  const points =
    typeof Intl.Segmenter === 'function'
      ? Array.from(
          new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text),
          (g) => g.segment,
        )
      : Array.from(text);
  let lo = 0; // points[0 .. lo) + "…" fits (the empty prefix is taken to fit)
  let hi = points.length; // ... and points[0 .. hi) + "…" does not, or is the whole text
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (measure(`${points.slice(0, mid).join('')}…`) <= maxWidth) lo = mid;
    else hi = mid;
  }
  return `${points.slice(0, lo).join('').trimEnd()}…`;
}
