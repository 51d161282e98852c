// A figure of the weights shown, for papers and slides: one description (figureLayout: where
// every text, grid and the legend go, in CSS px) drawn two ways — as SVG text (figureSvg: text
// as <text>, cells as <rect>s, or one embedded PNG per head when there are many cells) and onto a
// canvas at any scale (drawFigure: the PNG at 1×, 2×, 4×, independent of devicePixelRatio, so
// a 4× PNG is exactly four times the 1× one in each direction). The cell colours are the page's
// (color.js: the same 256-colour viridis ramp). Pure apart from drawFigure's canvas; tested by
// tests/web/figure.test.mjs.
import { headPixels, weightToRgb } from '../draw/color.js';

/** Cells (heads × n × m) up to which the SVG draws one <rect> per cell; above, one PNG per head. */
export const MAX_SVG_RECTS = 20000;
/** The PNG scales offered next to Save PNG. */
export const FIGURE_SCALES = [1, 2, 4];
/** The largest canvas side and area Chromium and Firefox draw (larger ones stay blank). */
export const MAX_PNG_SIDE = 32767;
export const MAX_PNG_PIXELS = 16384 * 16384;

/**
 * Throws when the figure at `scale` is larger than a browser canvas draws, naming the size and
 * what to do instead (a smaller scale, or the SVG).
 * @param {{width: number, height: number}} fig @param {number} scale
 */
export function checkPngSize(fig, scale) {
  const w = fig.width * scale;
  const h = fig.height * scale;
  if (w > MAX_PNG_SIDE || h > MAX_PNG_SIDE || w * h > MAX_PNG_PIXELS) {
    throw new Error(
      `the figure would be ${w} × ${h} pixels at ${scale}×, more than a browser can draw ` +
        `(at most ${MAX_PNG_SIDE} a side and ${MAX_PNG_PIXELS} pixels): choose a smaller scale, save an SVG, or show fewer tokens or heads`,
    );
  }
}
const PAD = 16;
const GAP = 20;
const FONT_FAMILY = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const LEGEND_W = 200;
const LEGEND_H = 14;
const MASKED_FILL = '#d9d9d9';

/** A CSS font for `size` px, bold or not (canvas measureText / fillText). */
export function figureFont(size, bold = false) {
  return `${bold ? 'bold ' : ''}${size}px ${FONT_FAMILY}`;
}

/** A width estimate for `text` at `size` px when no canvas measures it (node): 0.6 em a character. */
export function roughMeasure(text, size) {
  return Array.from(String(text)).length * size * 0.6;
}

/**
 * The caption's lines: the settings of the view and its link.
 * @param {object} config the export's config (export.js weightsJson: d_model, num_heads, seed, ...)
 * @param {string} [link] the page's address for this view (share.js / address.js), or for an
 *   imported file a description of it (name and shape)
 * @returns {string[]}
 */
export function figureCaption(config, link) {
  const parts = [];
  const keys = [
    'd_model',
    'num_heads',
    'd_head',
    'seed',
    'layer',
    'num_layers',
    'n',
    'm',
    'precision',
  ];
  for (const k of keys)
    if (config[k] !== undefined && config[k] !== null) parts.push(`${k} ${config[k]}`);
  if (config.is_causal) parts.push('causal');
  if (config.positional) parts.push(`positional ${config.positional}`);
  if (config.source && typeof config.source === 'string') parts.push(config.source);
  const lines = [parts.join(' · ')];
  if (link) lines.push(link);
  return lines.filter((l) => l !== '');
}

/** `text` split into pieces of at most `maxWidth` (by `measure`), between characters. */
function wrap(text, maxWidth, measure) {
  const out = [];
  let line = '';
  for (const ch of Array.from(text)) {
    if (line && measure(line + ch) > maxWidth) {
      out.push(line);
      line = '';
    }
    line += ch;
  }
  if (line || out.length === 0) out.push(line);
  return out;
}

/** `text` split at spaces into lines of at most `maxWidth` (a longer word split by wrap). */
function wrapWords(text, maxWidth, measure) {
  const out = [];
  let line = '';
  for (const word of String(text).split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (!line || measure(next) <= maxWidth) line = next;
    else {
      out.push(line);
      line = word;
    }
    if (measure(line) > maxWidth) {
      const pieces = wrap(line, maxWidth, measure);
      line = pieces.pop();
      out.push(...pieces);
    }
  }
  if (line || out.length === 0) out.push(line);
  return out;
}

/**
 * Where everything goes, in CSS px.
 * @param {{title: string, captionLines: string[], weights: Float32Array, heads: number[],
 *          headNames?: string[], headNotes?: string[], columns?: number, queryTokens: string[],
 *          keyTokens: string[], maskedRows?: Uint8Array,
 *          measure?: (text: string, size: number, bold: boolean) => number, maxWidth?: number,
 *          panelWidth?: number, ink?: string, background?: string}} p
 *   weights: (H, n, m) row-major over all H heads; heads: the heads drawn, each in full;
 *   headNames[k], headNotes[k]: head heads[k]'s caption and a note under it (e.g. its measured
 *   role), wrapped at the grid's width; columns: heads per row (default: as many as fit maxWidth)
 * @returns {{width: number, height: number, ink: string, background: string,
 *   texts: {x: number, y: number, text: string, size: number, bold: boolean, anchor: string, rotate: boolean}[],
 *   panels: {x: number, y: number, cell: number, head: number, n: number, m: number}[],
 *   legend: {x: number, y: number, width: number, height: number}, maskedRows: Uint8Array|null,
 *   weights: Float32Array, cells: number, description: string}}
 * @throws {Error} when the shapes disagree
 */
export function figureLayout(p) {
  const { title, captionLines = [], weights, heads, queryTokens, keyTokens, maskedRows = null } = p;
  const measure = p.measure ?? ((t, s) => roughMeasure(t, s));
  const maxWidth = p.maxWidth ?? 1200;
  const n = queryTokens.length;
  const m = keyTokens.length;
  if (n === 0 || m === 0) throw new Error(`nothing to draw: ${n} query tokens, ${m} key tokens`);
  if (weights.length % (n * m) !== 0)
    throw new Error(`attn_weights has ${weights.length} values, not a multiple of n*m = ${n}*${m}`);
  const total = weights.length / (n * m);
  for (const h of heads) {
    if (!Number.isInteger(h) || h < 0 || h >= total)
      throw new Error(`head ${h} is not one of the ${total} heads`);
  }
  if (heads.length === 0) throw new Error('no heads to draw');
  // Cells fill about `panelWidth` px, between 2 and 28 px; labels as large as the cells allow.
  const cell = Math.max(2, Math.min(28, Math.floor((p.panelWidth ?? 320) / Math.max(n, m))));
  const labelSize = Math.max(4, Math.min(12, cell - 2));
  const rowLabelW =
    Math.ceil(Math.max(...queryTokens.map((t) => measure(t, labelSize, false)))) + 6;
  const colLabelH = Math.ceil(Math.max(...keyTokens.map((t) => measure(t, labelSize, false)))) + 6;
  const captionSize = 13;
  const noteSize = 11;
  const noteLines = (p.headNotes ?? []).map((note) =>
    note ? wrapWords(note, Math.max(120, m * cell), (s) => measure(s, noteSize, false)) : [],
  );
  const noteH = Math.max(0, ...noteLines.map((lines) => lines.length)) * (noteSize + 3);
  const texts = [];
  const text = (x, y, s, size, bold = false, anchor = 'start', rotate = false) =>
    texts.push({ x, y, text: s, size, bold, anchor, rotate });

  const innerMax = maxWidth - 2 * PAD;
  let y = PAD;
  for (const line of wrap(title, innerMax, (s) => measure(s, 15, true))) {
    y += 15;
    text(PAD, y, line, 15, true);
    y += 4;
  }
  y += GAP - 4;
  const panelW = rowLabelW + m * cell;
  const panelH = captionSize + 6 + noteH + colLabelH + n * cell;
  const panels = [];
  let x = PAD;
  let width = 0;
  heads.forEach((head, k) => {
    const newRow = p.columns
      ? k > 0 && k % p.columns === 0
      : x > PAD && x + panelW > maxWidth - PAD;
    if (newRow) {
      x = PAD;
      y += panelH + GAP;
    }
    text(x + rowLabelW, y + captionSize, p.headNames?.[k] ?? `head ${head}`, captionSize, true);
    (noteLines[k] ?? []).forEach((line, i) =>
      text(x + rowLabelW, y + captionSize + (i + 1) * (noteSize + 3), line, noteSize),
    );
    const gx = x + rowLabelW;
    const gy = y + captionSize + 6 + noteH + colLabelH;
    panels.push({ x: gx, y: gy, cell, head, n, m });
    queryTokens.forEach((t, i) =>
      text(gx - 4, gy + (i + 0.5) * cell + labelSize * 0.35, t, labelSize, false, 'end'),
    );
    keyTokens.forEach((t, j) =>
      text(gx + (j + 0.5) * cell + labelSize * 0.35, gy - 4, t, labelSize, false, 'start', true),
    );
    width = Math.max(width, x + panelW + PAD);
    x += panelW + GAP;
  });
  y += panelH + GAP;
  const legend = { x: PAD + 8, y, width: LEGEND_W, height: LEGEND_H };
  for (const t of [0, 0.5, 1])
    text(legend.x + t * LEGEND_W, y + LEGEND_H + 16, String(t), 12, false, 'middle');
  text(legend.x + LEGEND_W + 14, y + LEGEND_H - 2, 'attention weight', 12);
  y += LEGEND_H + 22;
  const anyMasked =
    maskedRows && heads.some((h) => maskedRows.subarray(h * n, h * n + n).some((v) => v === 1));
  const notes = anyMasked
    ? ['Grey rows: every key of that query is masked (its weights are 0).', ...captionLines]
    : captionLines;
  y += 8;
  // The caption wraps at the grids' width (at least 640 px, at most maxWidth): a long link or
  // source does not widen a figure of small grids.
  const captionWidth = Math.min(innerMax, Math.max(640, width - 2 * PAD));
  for (const line of notes) {
    for (const piece of wrap(line, captionWidth, (s) => measure(s, 12, false))) {
      y += 14;
      text(PAD, y, piece, 12);
      width = Math.max(width, PAD + measure(piece, 12, false) + PAD);
    }
    y += 2;
  }
  width = Math.max(width, legend.x + LEGEND_W + 14 + measure('attention weight', 12, false) + PAD);
  for (const t of texts)
    if (!t.rotate && t.anchor === 'start')
      width = Math.max(width, Math.min(maxWidth, t.x + measure(t.text, t.size, t.bold) + PAD));
  return {
    width: Math.ceil(width),
    height: Math.ceil(y + PAD),
    ink: p.ink ?? '#1a1a1a',
    background: p.background ?? '#ffffff',
    texts,
    panels,
    legend,
    maskedRows: anyMasked ? maskedRows : null,
    weights,
    cells: heads.length * n * m,
    description: [title, ...captionLines].join('\n'),
  };
}

/** Text for XML content and attribute values: & < > " ' escaped, and characters XML forbids dropped. */
export function xmlEscape(s) {
  return (
    String(s)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the control characters XML forbids
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
      .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
  );
}

function hex(rgb) {
  return `#${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

const n2 = (v) => String(Math.round(v * 100) / 100);

/**
 * The figure as an SVG document (UTF-8 text). Cells are <rect>s when the figure has at most
 * MAX_SVG_RECTS of them; otherwise each head is one <image> whose href `imageFor(head)` gives
 * (a data:image/png URL of m × n pixels, one per cell, in the same colours).
 * @param {ReturnType<typeof figureLayout>} fig
 * @param {{imageFor?: (head: number) => string}} [opts]
 * @returns {string}
 * @throws {Error} when there are too many cells for rects and no imageFor
 */
export function figureSvg(fig, { imageFor } = {}) {
  const { width, height, ink, background } = fig;
  const out = [];
  out.push('<?xml version="1.0" encoding="UTF-8"?>');
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${xmlEscape(FONT_FAMILY)}">`,
  );
  out.push(`<title>${xmlEscape(fig.description.split('\n')[0])}</title>`);
  out.push(`<desc>${xmlEscape(fig.description)}</desc>`);
  out.push(`<rect width="${width}" height="${height}" fill="${xmlEscape(background)}"/>`);
  const asRects = fig.cells <= MAX_SVG_RECTS;
  if (!asRects && !imageFor)
    throw new Error(
      `${fig.cells} cells are too many for one <rect> each (at most ${MAX_SVG_RECTS}) and no image was given`,
    );
  for (const pn of fig.panels) {
    const { x, y, cell, head, n, m } = pn;
    if (asRects) {
      out.push(`<g data-head="${head}" shape-rendering="crispEdges">`);
      for (let i = 0; i < n; i++) {
        const masked = fig.maskedRows?.[head * n + i] === 1;
        for (let j = 0; j < m; j++) {
          const w = fig.weights[(head * n + i) * m + j];
          const fill = masked ? MASKED_FILL : hex(weightToRgb(w));
          out.push(
            `<rect x="${n2(x + j * cell)}" y="${n2(y + i * cell)}" width="${cell}" height="${cell}" fill="${fill}"/>`,
          );
        }
      }
      out.push('</g>');
    } else {
      out.push(
        `<image data-head="${head}" x="${n2(x)}" y="${n2(y)}" width="${m * cell}" height="${n * cell}" preserveAspectRatio="none" style="image-rendering:pixelated" href="${xmlEscape(imageFor(head))}"/>`,
      );
    }
  }
  const { legend } = fig;
  out.push('<defs><linearGradient id="mha-viridis" x1="0" x2="1" y1="0" y2="0">');
  for (let k = 0; k <= 16; k++)
    out.push(
      `<stop offset="${n2(k / 16)}" stop-color="${hex(weightToRgb(Math.min(k / 16, 0.999)))}"/>`,
    );
  out.push('</linearGradient></defs>');
  out.push(
    `<rect x="${legend.x}" y="${legend.y}" width="${legend.width}" height="${legend.height}" fill="url(#mha-viridis)" stroke="${xmlEscape(ink)}" stroke-width="1"/>`,
  );
  for (const t of [0, 0.5, 1]) {
    const tx = legend.x + t * legend.width;
    out.push(
      `<line x1="${tx}" x2="${tx}" y1="${legend.y + legend.height}" y2="${legend.y + legend.height + 5}" stroke="${xmlEscape(ink)}"/>`,
    );
  }
  out.push(`<g fill="${xmlEscape(ink)}">`);
  for (const t of fig.texts) {
    const attrs = [`x="${n2(t.x)}"`, `y="${n2(t.y)}"`, `font-size="${t.size}"`];
    if (t.bold) attrs.push('font-weight="bold"');
    if (t.anchor !== 'start') attrs.push(`text-anchor="${t.anchor}"`);
    if (t.rotate) attrs.push(`transform="rotate(-90 ${n2(t.x)} ${n2(t.y)})"`);
    out.push(`<text ${attrs.join(' ')} xml:space="preserve">${xmlEscape(t.text)}</text>`);
  }
  out.push('</g>');
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/**
 * Draws the figure on `canvas` at `scale` device pixels per CSS px: the canvas becomes
 * width·scale × height·scale pixels (the layout's size is whole px, so 4× is exactly 4 × 1×).
 * @param {HTMLCanvasElement|OffscreenCanvas} canvas
 * @param {ReturnType<typeof figureLayout>} fig
 * @param {number} scale one of FIGURE_SCALES (any positive whole number works)
 * @param {(w: number, h: number) => HTMLCanvasElement|OffscreenCanvas} makeCanvas a scratch canvas
 */
export function drawFigure(canvas, fig, scale, makeCanvas) {
  if (!Number.isInteger(scale) || scale < 1 || scale > 8)
    throw new Error(`scale ${scale} is not a whole number from 1 to 8`);
  checkPngSize(fig, scale);
  canvas.width = fig.width * scale;
  canvas.height = fig.height * scale;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  ctx.fillStyle = fig.background;
  ctx.fillRect(0, 0, fig.width, fig.height);
  ctx.imageSmoothingEnabled = false;
  for (const pn of fig.panels) {
    const img = headImage(fig, pn.head, makeCanvas);
    ctx.drawImage(img, pn.x, pn.y, pn.m * pn.cell, pn.n * pn.cell);
  }
  const { legend } = fig;
  const strip = makeCanvas(256, 1);
  const sctx = strip.getContext('2d');
  const data = sctx.createImageData(256, 1);
  for (let k = 0; k < 256; k++) data.data.set([...weightToRgb((k + 0.5) / 256), 255], 4 * k);
  sctx.putImageData(data, 0, 0);
  ctx.drawImage(strip, legend.x, legend.y, legend.width, legend.height);
  ctx.strokeStyle = fig.ink;
  ctx.lineWidth = 1;
  ctx.strokeRect(legend.x, legend.y, legend.width, legend.height);
  for (const t of [0, 0.5, 1]) {
    const tx = legend.x + t * legend.width;
    ctx.beginPath();
    ctx.moveTo(tx, legend.y + legend.height);
    ctx.lineTo(tx, legend.y + legend.height + 5);
    ctx.stroke();
  }
  ctx.fillStyle = fig.ink;
  ctx.textBaseline = 'alphabetic';
  for (const t of fig.texts) {
    ctx.font = figureFont(t.size, t.bold);
    ctx.textAlign = t.anchor === 'middle' ? 'center' : t.anchor === 'end' ? 'right' : 'left';
    if (t.rotate) {
      ctx.save();
      ctx.translate(t.x, t.y);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText(t.text, 0, 0);
      ctx.restore();
    } else {
      ctx.fillText(t.text, t.x, t.y);
    }
  }
}

/** Head `head` as an m × n canvas, one pixel per cell (masked rows grey). */
export function headImage(fig, head, makeCanvas) {
  const { n, m } = fig.panels.find((pn) => pn.head === head);
  const c = makeCanvas(m, n);
  const cctx = c.getContext('2d');
  const img = cctx.createImageData(m, n);
  headPixels(fig.weights, head, n, m, img.data);
  if (fig.maskedRows) {
    for (let i = 0; i < n; i++) {
      if (fig.maskedRows[head * n + i] !== 1) continue;
      for (let j = 0; j < m; j++) img.data.set([0xd9, 0xd9, 0xd9, 255], 4 * (i * m + j));
    }
  }
  cctx.putImageData(img, 0, 0);
  return c;
}
