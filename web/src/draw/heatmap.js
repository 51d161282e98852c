// One head's attention matrix: a positioned wrapper (`element`) holding
//   - the cells canvas (`canvas`): its backing store holds the pixel buffer, one pixel per cell (or
//     per LOD block, lod.js), scaled up by CSS with `image-rendering: pixelated`, so a new result
//     is one putImageData and the compositor does the scaling; where object-view-box
//     exists, the store is grow-only and CSS shows its top-left cols x rows (backingSize);
//   - two narrow label canvases (rows, columns), copied from sprites drawn once for every head
//     with the same labels, layout, devicePixelRatio and ink (labels.js LabelCache, one shared by
//     every grid of a page; the label canvases' stores grow-only too: labelStore);
//   - the selection as positioned boxes over the cells (the row outline; the cell's ring, or a box
//     in a compact grid) and the selected labels repainted bold in the label canvases;
//   - for rows whose keys are all masked, a hatch canvas (created only when a row is masked);
//   - the weights printed in the cells when cells are large enough (layout.js cellNumberStyle),
//     on a canvas created when first needed, each in the ink of higher contrast on its colour.
// snapshotCanvas() paints all of it (without the selection) into one canvas for the PNG export.
import { headPixels, weightToRgb, cellInk } from './color.js';
import {
  gridLayout,
  cellAt,
  moveCell,
  cellNumberStyle,
  cellNumberText,
  LABELLED_MAX_TOKENS,
  NUMBER_FONT_PX,
} from './layout.js';
import { FONT, FONT_BOLD, LabelCache, labelInSlot, labelSlot } from './labels.js';
import { poolFactor, pooledPixels, greyMaskedRows } from './lod.js';

/** Cells smaller than this (CSS px) get no inner ring: the compact highlight instead. */
const MIN_RING_CELL = 8;

/** A canvas of `width` × `height` CSS px at `dpr`, its context scaled to CSS px. */
function sized(canvas, width, height, dpr) {
  const bw = Math.ceil(width * dpr),
    bh = Math.ceil(height * dpr);
  // (Assigning a size, even the same one, reallocates the backing store.)
  if (canvas.width !== bw) canvas.width = bw;
  if (canvas.height !== bh) canvas.height = bh;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}

// Where CSS can show part of a canvas (object-view-box: Chromium 104+), the cells canvas keeps a
// backing store of 64-pixel steps that only grows (or shrinks below half), and shows its top-left
// corner: a token-count change redraws in place instead of reallocating every head's canvas
// (reallocation is a large share of a large view's update). Elsewhere the backing store is
// exactly the cells' size.
const VIEW_BOX = globalThis.CSS?.supports?.('object-view-box', 'inset(0px)') === true;
/** Backing-store pixels for `need` pixels along one side, given the current `have`. */
function backingSize(need, have) {
  if (!VIEW_BOX) return need;
  return have >= need && have <= 2 * need + 64 ? have : Math.ceil(need / 64) * 64;
}

/**
 * Sizes a label canvas for `width` × `height` CSS px at `dpr` (paintSelection paints it). Like the
 * cells canvas, its backing store grows in steps where object-view-box exists and CSS shows its
 * top-left corner: a token-count change (8 heads, 16 label canvases) repaints them in place
 * instead of reallocating each one.
 */
function labelStore(canvas, width, height, dpr) {
  const w = Math.ceil(width * dpr),
    h = Math.ceil(height * dpr);
  const bw = backingSize(w, canvas.width),
    bh = backingSize(h, canvas.height);
  if (canvas.width !== bw) canvas.width = bw;
  if (canvas.height !== bh) canvas.height = bh;
  canvas.style.objectViewBox = bw === w && bh === h ? '' : `inset(0px ${bw - w}px ${bh - h}px 0px)`;
}

/** Sets an element's CSS box (px) where it changed. */
function place(el, x, y, w, h) {
  const s = el.style;
  for (const [k, v] of [
    ['left', x],
    ['top', y],
    ['width', w],
    ['height', h],
  ]) {
    if (v !== undefined && s[k] !== `${v}px`) s[k] = `${v}px`;
  }
}

/** One head's grid. Put `element` on the page (it holds `canvas`, the focusable cells). */
export class HeadHeatmap {
  /**
   * @param {object} p
   * @param {LabelCache} [p.labels] the label texts, widths and sprites it shares with the page's other
   *   grids (default: a cache of its own)
   * @param {number} p.head head index
   * @param {object} p.result the module's result ({n, m, attn_weights, fully_masked_rows})
   * @param {string[]} p.tokens labels of the query rows (and of the key columns, by default)
   * @param {string[]} [p.keyTokens] labels of the key columns when they differ (cross-attention)
   * @param {string} [p.name] what the grid is called in its accessible label (default "Head h")
   * @param {(sel: {head: number, row: number, col: number, source: string} | null) => void} p.onSelect
   *   the pointer, the focus ('focus') or the arrow keys ('keyboard') moved to a cell; null: left it
   * @param {(cell: {head: number, row: number, col: number}) => void} [p.onActivate] click, tap,
   *   Enter or Space on a cell (locks / unlocks it); without it, clicks do nothing
   * @param {() => void} [p.onClear] Escape (clears the selection); without it, Escape leaves the grid
   */
  constructor({
    labels = new LabelCache(),
    head,
    result,
    tokens,
    keyTokens,
    name = `Head ${head}`,
    onSelect,
    onActivate,
    onClear,
  }) {
    this.labels = labels;
    this.head = head;
    this.name = name;
    this.onSelect = onSelect;
    this.selection = null; // {head, row, col} shared by all heads
    this.lastCell = null; // the last selected (row, col), kept when the selection is cleared
    this.layout = null;
    this.theme = { ink: '#1a1a1a', accent: '#b3006b' };

    const make = (tag, className) => Object.assign(document.createElement(tag), { className });
    this.element = make('div', 'heatmap-grid');
    this.rowCanvas = make('canvas', 'hm-labels');
    this.colCanvas = make('canvas', 'hm-labels');
    this.rowMark = make('div', 'hm-outline');
    this.cellMark = make('div', '');
    const canvas = make('canvas', 'heatmap');
    // data-origin-x/y: where cell (0, 0) is in the canvas (tests/browser/helpers.mjs cellCentre).
    Object.assign(canvas.dataset, { head: String(head), originX: '0', originY: '0' });
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'application');
    canvas.setAttribute('aria-roledescription', 'attention heatmap');
    canvas.textContent = `${name} attention weights; see the table that follows.`;
    this.canvas = canvas;
    this.element.append(this.rowCanvas, this.colCanvas, canvas, this.rowMark, this.cellMark);
    this.setData({ result, tokens, keyTokens });

    // The cell under a pointer event (the canvas holds the cells only).
    const at = (e) =>
      this.layout &&
      cellAt(
        { originX: 0, originY: 0, cell: this.layout.cell },
        this.n,
        this.m,
        e.offsetX,
        e.offsetY,
      );
    // Pointer hover reads a cell; a touch does not hover (a tap is a click, which locks the cell:
    // a hover on touch would change the readout above the grid and move the grid under the finger).
    canvas.addEventListener('pointermove', (e) => {
      if (e.pointerType === 'touch') return;
      const c = at(e);
      if (c) this.onSelect({ head, row: c.row, col: c.col, source: 'pointer' });
    });
    canvas.addEventListener('pointerleave', (e) => {
      if (e.pointerType === 'touch') return;
      // (getRootNode: inside an element's shadow root, document.activeElement is the host.)
      if (canvas.getRootNode().activeElement !== canvas) this.onSelect(null);
    });
    // Focus from a press (mouse or touch) selects nothing by itself: the click that follows does,
    // at the cell pressed (a selection on focus would move the grid before the click lands). For
    // a touch, focus comes after pointerup, so the press counts until its click (or 5 s).
    let pressedAt = 0;
    canvas.addEventListener('pointerdown', () => {
      pressedAt = performance.now();
    });
    canvas.addEventListener('click', () => {
      pressedAt = 0;
    });
    canvas.addEventListener('focus', () => {
      if (pressedAt && performance.now() - pressedAt < 5000) return;
      // Keep the cell when Tab moves on to the next head.
      const s = this.lastCell;
      const row = s && s.row < this.n ? s.row : 0;
      const col = s && s.col < this.m ? s.col : 0;
      this.onSelect({ head, row, col, source: 'focus' });
    });
    canvas.addEventListener('blur', () => this.onSelect(null));
    // Click or tap: lock (or unlock) the cell, when the owner handles locking.
    canvas.addEventListener('click', (e) => {
      const c = at(e);
      if (c && onActivate) onActivate({ head, row: c.row, col: c.col });
    });
    canvas.addEventListener('keydown', (e) => {
      const s =
        this.selection && this.selection.head === head ? this.selection : { row: 0, col: 0 };
      if (e.key === 'Escape') {
        if (onClear) onClear();
        else canvas.blur();
        return;
      }
      if ((e.key === 'Enter' || e.key === ' ') && onActivate) {
        e.preventDefault();
        onActivate({ head, row: s.row, col: s.col });
        return;
      }
      const next = moveCell(e.key, s.row, s.col, this.n, this.m);
      if (!next) return;
      e.preventDefault();
      this.onSelect({ head, row: next.row, col: next.col, source: 'keyboard' });
    });
  }

  /** The (h, n, m) weights of the result on show (this head's at head * n * m). */
  get weights() {
    return this.result.attn_weights;
  }

  /**
   * New weights and labels for this head, keeping its canvases and listeners (the Date translator
   * redraws on every keystroke): the cells are drawn now; call resize() to place and label them.
   * @param {{result: object, tokens: string[], keyTokens?: string[]}} p
   */
  setData({ result, tokens, keyTokens }) {
    this.n = result.n;
    this.m = result.m;
    const { n, m, head } = this;
    this.result = result; // its attn_weights are read when needed (compute/split.js joinHeads: lazily)
    this.masked = result.fully_masked_rows;
    this.rowSet = this.labels.labelSet(tokens);
    this.colSet = keyTokens ? this.labels.labelSet(keyTokens) : this.rowSet;
    this.rowLabels = this.rowSet.texts;
    this.colLabels = this.colSet.texts;
    // One pixel per cell, or per block of cells beyond lod.js's MAX_BUFFER_SIDE (max-pooled);
    // rows whose keys are all masked grey (hatched over when cells are big enough, see draw).
    const factor = poolFactor(n, m);
    // The compute worker may have coloured (and pooled) the cells already (result.pixels,
    // pixels.js resultPixels: the same pixels).
    const given = result.pixels?.[head];
    // The kept buffer serves unpooled grids coloured here only: dropped otherwise.
    if (given || factor > 1) this.pixelStore = null;
    const { rows, cols, pixels } = given
      ? { rows: Math.ceil(n / factor), cols: Math.ceil(m / factor), pixels: given }
      : factor === 1
        ? { rows: n, cols: m, pixels: this.cellPixels(result, head) }
        : pooledPixels(this.weights, head, n, m, factor);
    if (!given) greyMaskedRows(pixels, this.masked, head, n, cols, factor);
    const c = this.canvas;
    const width = backingSize(cols, c.width),
      height = backingSize(rows, c.height);
    if (c.width !== width) c.width = width;
    if (c.height !== height) c.height = height;
    c.getContext('2d').putImageData(new ImageData(pixels, cols, rows), 0, 0);
    // The cells' pixels are the top-left cols x rows of the backing store; CSS shows only them.
    c.style.objectViewBox =
      width === cols && height === rows
        ? ''
        : `inset(0px ${width - cols}px ${height - rows}px 0px)`;
    this.pixelCols = cols;
    this.pixelRows = rows;
    Object.assign(c.dataset, {
      pool: String(factor),
      rows: String(n),
      cols: String(m),
      pixelCols: String(cols),
      pixelRows: String(rows),
    });
    c.setAttribute(
      'aria-label',
      `${this.name}: ${n} query rows by ${m} key columns. ` +
        'Arrow keys move between cells; the value is read out below the controls.',
    );
    this.drawnKey = undefined;
  }

  /**
   * Head `head`'s unpooled cell pixels, coloured into this grid's kept buffer (putImageData copies
   * them out): a new buffer every view costs more than the colouring itself, memory touched for the
   * first time being slow. The weights come
   * from the result's own view of this head when it has one (compute/split.js joinHeads: no joined copy).
   * The buffer is made anew when it is too small, or more than 4 times too large (a large view's
   * pixels are not kept for good once smaller ones replace it).
   */
  cellPixels(result, head) {
    const { n, m } = this;
    const bytes = n * m * 4;
    const kept = this.pixelStore;
    if (!kept || kept.length < bytes || kept.length > 4 * bytes)
      this.pixelStore = new Uint8ClampedArray(bytes);
    const own = result.headWeights?.[head];
    return headPixels(
      own ?? this.weights,
      own !== undefined ? 0 : head,
      n,
      m,
      this.pixelStore.subarray(0, bytes),
    );
  }

  /**
   * Lays the grid out for `availableWidth` CSS px at the current devicePixelRatio, then draws.
   * @param {number} availableWidth
   * @param {{ink: string, accent: string}} theme label colours (see readTheme)
   * @param {{labels?: boolean}} [opts] labels: false draws a thumbnail (no labels, no numbers)
   */
  resize(availableWidth, theme, { labels = true } = {}) {
    this.theme = theme;
    // A compact grid (more than LABELLED_MAX_TOKENS a side) draws no labels: nothing to measure.
    // Row labels may be drawn bold when highlighted: measure bold; a bold column label is ~10% wider.
    const compact = !labels || Math.max(this.n, this.m) > LABELLED_MAX_TOKENS;
    this.layout = gridLayout({
      n: this.n,
      m: this.m,
      rowLabelWidth: compact ? 0 : this.labels.widest(this.rowSet, FONT_BOLD),
      colLabelWidth: compact ? 0 : this.labels.widest(this.colSet, FONT) * 1.1,
      availableWidth,
      labels: !compact,
    });
    this.dpr = window.devicePixelRatio || 1;
    this.draw();
  }

  /** Places the cells, copies the labels, hatches masked rows and draws the selection. */
  draw() {
    if (!this.layout) return;
    const { n, m, head, dpr } = this;
    const { width, height, cell, originX, originY, labels } = this.layout;
    place(this.element, undefined, undefined, width, height);
    place(this.canvas, originX, originY, m * cell, n * cell);
    this.canvas.dataset.cell = String(cell);
    this.rowCanvas.hidden = this.colCanvas.hidden = !labels;
    this.bold = [];
    if (labels) {
      place(this.rowCanvas, 0, originY, originX, n * cell);
      place(this.colCanvas, originX, 0, m * cell, originY);
      labelStore(this.rowCanvas, originX, n * cell, dpr);
      labelStore(this.colCanvas, m * cell, originY, dpr);
    }
    // Rows whose keys are all masked: hatched, with a label, on a layer made when first needed.
    const rows = [];
    for (let i = 0; i < n; i++) if (this.masked[head * n + i] === 1) rows.push(i);
    const hatch = rows.length > 0 && cell >= 4;
    if (hatch && !this.maskLayer) {
      this.maskLayer = Object.assign(document.createElement('canvas'), { className: 'hm-masked' });
      this.canvas.after(this.maskLayer);
    }
    if (this.maskLayer) {
      this.maskLayer.hidden = !hatch;
      if (hatch) {
        place(this.maskLayer, originX, originY, m * cell, n * cell);
        const ctx = sized(this.maskLayer, m * cell, n * cell, dpr);
        for (const i of rows) this.hatchRow(ctx, i);
      }
    }
    this.drawNumbers(labels ? cellNumberStyle(cell) : null, rows);
    this.paintSelection(this.selection);
  }

  /**
   * The weights printed in the cells (`style`: cellNumberStyle's; null: none), except in masked
   * rows (`masked`: their indices). The canvas's data-numbers says how many were printed.
   */
  drawNumbers(style, masked) {
    const { n, m, head, dpr } = this;
    this.canvas.dataset.numbers = '0';
    if (!style) {
      if (this.numberLayer) this.numberLayer.hidden = true;
      return;
    }
    const { cell, originX, originY } = this.layout;
    if (!this.numberLayer) {
      this.numberLayer = Object.assign(document.createElement('canvas'), {
        className: 'hm-numbers',
      });
      this.numberLayer.setAttribute('aria-hidden', 'true');
      (this.maskLayer ?? this.canvas).after(this.numberLayer);
    }
    const layer = this.numberLayer;
    layer.hidden = false;
    place(layer, originX, originY, m * cell, n * cell);
    const ctx = sized(layer, m * cell, n * cell, dpr);
    ctx.font = `${NUMBER_FONT_PX}px system-ui, sans-serif`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    const w = this.weights;
    const skip = new Set(masked);
    let count = 0;
    for (let i = 0; i < n; i++) {
      if (skip.has(i)) continue;
      for (let j = 0; j < m; j++) {
        const v = w[(head * n + i) * m + j];
        ctx.fillStyle = cellInk(v);
        ctx.fillText(cellNumberText(v, style), (j + 0.5) * cell, (i + 0.5) * cell);
        count++;
      }
    }
    this.canvas.dataset.numbers = String(count);
  }

  setSelection(sel) {
    this.selection = sel;
    if (sel) this.lastCell = { row: sel.row, col: sel.col };
    // Redraw only when what this head shows changes: the highlighted row, or (in the selected
    // head only) the selected cell.
    const key = sel ? `${sel.row}|${sel.head === this.head ? sel.col : -1}` : '';
    if (key !== this.drawnKey && this.layout) this.paintSelection(sel);
  }

  /**
   * The highlight: the selected query row outlined in every head, the selected cell ringed in its
   * own head (boxes moved over the cells), their labels bold in the accent colour.
   */
  paintSelection(sel) {
    const { n, m, head, dpr } = this;
    const { cell, originX, originY } = this.layout;
    const selRow = sel && sel.row < n ? sel.row : -1;
    const selCol = sel && sel.head === head && sel.col < m ? sel.col : -1;
    this.canvas.dataset.highlightRow = selRow >= 0 ? String(selRow) : '';
    this.drawnKey = sel ? `${sel.row}|${selCol}` : '';
    if (this.layout.labels) {
      // Labels: a copy of the sprite, the selected one bold over a cleared spot.
      [
        [this.rowCanvas, selRow, 'row', this.rowLabels],
        [this.colCanvas, selCol, 'col', this.colLabels],
      ].forEach(([c, now, kind, texts], k) => {
        if (this.bold[k] === now) return;
        this.bold[k] = now;
        const ctx = c.getContext('2d');
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        ctx.clearRect(0, 0, c.width, c.height);
        ctx.drawImage(this.labelSprite(k), 0, 0);
        if (now < 0) return;
        ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
        ctx.clearRect(...labelSlot(kind, this.layout, now));
        ctx.fillStyle = this.theme.accent;
        labelInSlot(ctx, kind, texts[now], now, this.layout, FONT_BOLD);
      });
    }
    this.rowMark.hidden = selRow < 0;
    this.cellMark.hidden = selRow < 0 || selCol < 0;
    if (selRow < 0) return;
    // A two-tone outline (black outside, white inside: visible on every viridis colour) 3 px
    // outside the box (x, y, w, h).
    const outline = (el, x, y, w, h) => place(el, originX + x - 3, originY + y - 3, w + 6, h + 6);
    if (cell < MIN_RING_CELL) {
      // A compact grid: the row outlined at least 3 px tall, the cell marked by a small box.
      const band = Math.max(cell, 3);
      const y = (selRow + 0.5) * cell - band / 2;
      outline(this.rowMark, 0, y, m * cell, band);
      this.cellMark.className = 'hm-outline';
      if (selCol >= 0) outline(this.cellMark, (selCol + 0.5) * cell - band / 2, y, band, band);
    } else {
      outline(this.rowMark, 0, selRow * cell, m * cell, cell);
      if (selCol >= 0) {
        const [r, g, b] = weightToRgb(this.weights[(head * n + selRow) * m + selCol]);
        // A contrasting inner ring: dark on bright cells, white on dark ones.
        this.cellMark.className =
          0.299 * r + 0.587 * g + 0.114 * b > 140 ? 'hm-ring dark' : 'hm-ring';
        place(
          this.cellMark,
          originX + selCol * cell + 1,
          originY + selRow * cell + 1,
          cell - 2,
          cell - 2,
        );
      }
    }
  }

  /** The sprite of this grid's row labels (k = 0) or column labels (1), drawn for them (LabelCache.sprite). */
  labelSprite(k) {
    return this.labels.sprite(
      k ? this.colSet : this.rowSet,
      k ? 'col' : 'row',
      this.layout,
      this.dpr,
      this.theme.ink,
    );
  }

  /**
   * The whole grid (cells, masked rows, labels; no selection) in a new canvas of the layout's size
   * at devicePixelRatio, for the PNG snapshot (snapshot.js composeSnapshot).
   * @returns {HTMLCanvasElement}
   */
  snapshotCanvas() {
    const { n, m, dpr } = this;
    const { width, height, cell, originX, originY } = this.layout;
    const out = document.createElement('canvas');
    const ctx = sized(out, width, height, dpr);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(
      this.canvas,
      0,
      0,
      this.pixelCols,
      this.pixelRows,
      originX,
      originY,
      m * cell,
      n * cell,
    );
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    const [rows, cols] = this.layout.labels ? [this.labelSprite(0), this.labelSprite(1)] : [];
    const numbers = this.numberLayer && !this.numberLayer.hidden && this.numberLayer;
    for (const [c, x, y] of [
      [!this.maskLayer?.hidden && this.maskLayer, originX, originY],
      [numbers, originX, originY],
      [rows, 0, originY],
      [cols, originX, 0],
    ]) {
      if (c) ctx.drawImage(c, Math.round(x * dpr), Math.round(y * dpr));
    }
    return out;
  }

  /** Masked row i hatched, with a label, on the masked layer (CSS px, origin = the grid's). */
  hatchRow(ctx, i) {
    const { cell } = this.layout;
    const y0 = i * cell;
    const w = this.m * cell;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, y0, w, cell);
    ctx.clip();
    ctx.fillStyle = '#f2f2f2';
    ctx.fillRect(0, y0, w, cell);
    ctx.strokeStyle = '#767676';
    ctx.lineWidth = 1;
    for (let x = -cell; x < w + cell; x += 6) {
      ctx.beginPath();
      ctx.moveTo(x, y0 + cell);
      ctx.lineTo(x + cell, y0);
      ctx.stroke();
    }
    if (w >= 60) {
      ctx.font = FONT_BOLD;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      const label = 'masked';
      const tw = ctx.measureText(label).width + 8;
      ctx.fillStyle = '#f2f2f2';
      ctx.fillRect(w / 2 - tw / 2, y0 + 1, tw, cell - 2);
      ctx.fillStyle = '#111';
      ctx.fillText(label, w / 2, y0 + cell / 2);
    }
    ctx.restore();
  }
}

/**
 * Label colours from the stylesheet (--label-ink, --accent-ink on `el`), read once per layout:
 * reading computed style per canvas would force a style pass over every table cell each time.
 */
export function readTheme(el) {
  const style = getComputedStyle(el);
  return {
    ink: style.getPropertyValue('--label-ink').trim() || '#1a1a1a',
    accent: style.getPropertyValue('--accent-ink').trim() || '#b3006b',
  };
}
