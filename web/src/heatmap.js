// One head's attention matrix drawn on a canvas: cells from a pixel buffer (one pixel per cell,
// scaled up without smoothing), token labels on both axes, the highlighted query row.
import { headPixels, weightToRgb } from './color.js';
import { truncateLabel } from './format.js';
import { gridLayout, cellAt, moveCell, FONT_PX, LABEL_GAP, LABELLED_MAX_TOKENS, OUTLINE_PAD } from './layout.js';
import { poolFactor, pooledPixels } from './lod.js';

const LABEL_CHARS = 12;
const FONT = `${FONT_PX}px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif`;
const FONT_BOLD = `bold ${FONT}`;
/** Cells smaller than this (CSS px) get no inner ring: the compact highlight instead. */
const MIN_RING_CELL = 8;

/**
 * @param {object} p
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
export class HeadHeatmap {
  constructor({ head, result, tokens, keyTokens, name = `Head ${head}`, onSelect, onActivate, onClear }) {
    this.head = head;
    this.name = name;
    this.onSelect = onSelect;
    this.selection = null; // {head, row, col} shared by all heads
    this.lastCell = null; // the last selected (row, col), kept when the selection is cleared
    this.layout = null;
    this.theme = { ink: '#1a1a1a', accent: '#b3006b' };

    // The pixel buffer: one pixel per (query, key) cell.
    this.cells = document.createElement('canvas');

    const canvas = document.createElement('canvas');
    canvas.className = 'heatmap';
    canvas.dataset.head = String(head);
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'application');
    canvas.setAttribute('aria-roledescription', 'attention heatmap');
    canvas.textContent = `${name} attention weights; see the table that follows.`;
    this.canvas = canvas;
    this.setData({ result, tokens, keyTokens });

    // Pointer hover reads a cell; a touch does not hover (a tap is a click, which locks the cell:
    // a hover on touch would change the readout above the grid and move the grid under the finger).
    canvas.addEventListener('pointermove', (e) => {
      if (e.pointerType === 'touch') return;
      const c = this.layout && cellAt(this.layout, this.n, this.m, e.offsetX, e.offsetY);
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
      const c = this.layout && cellAt(this.layout, this.n, this.m, e.offsetX, e.offsetY);
      if (c && onActivate) onActivate({ head, row: c.row, col: c.col });
    });
    canvas.addEventListener('keydown', (e) => {
      const s = this.selection && this.selection.head === head ? this.selection : { row: 0, col: 0 };
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

  /**
   * New weights and labels for this head, keeping its canvas and listeners (the Date translator
   * redraws on every keystroke). Call resize() afterwards to draw.
   */
  setData({ result, tokens, keyTokens }) {
    this.n = result.n;
    this.m = result.m;
    this.weights = result.attn_weights;
    this.masked = result.fully_masked_rows;
    this.tokens = tokens;
    this.rowLabels = tokens.map((t) => truncateLabel(t, LABEL_CHARS));
    this.colLabels = keyTokens ? keyTokens.map((t) => truncateLabel(t, LABEL_CHARS)) : this.rowLabels;
    // One pixel per cell, or per block of cells beyond lod.js's MAX_BUFFER_SIDE (max-pooled).
    const factor = poolFactor(this.n, this.m);
    const { rows, cols, pixels } = factor === 1
      ? { rows: this.n, cols: this.m, pixels: headPixels(this.weights, this.head, this.n, this.m) }
      : pooledPixels(this.weights, this.head, this.n, this.m, factor);
    // (Assigning a canvas size, even the same one, reallocates its backing store.)
    if (this.cells.width !== cols) this.cells.width = cols;
    if (this.cells.height !== rows) this.cells.height = rows;
    const cctx = this.cells.getContext('2d');
    const img = cctx.createImageData(cols, rows);
    img.data.set(pixels);
    cctx.putImageData(img, 0, 0);
    this.canvas.dataset.pool = String(factor);
    this.canvas.dataset.rows = String(this.n);
    this.canvas.dataset.cols = String(this.m);
    this.canvas.setAttribute(
      'aria-label',
      `${this.name}: ${this.n} query rows by ${this.m} key columns. ` +
        'Arrow keys move between cells; the value is read out below the controls.',
    );
    this.drawnKey = undefined;
    this.baseValid = false;
  }

  /**
   * Sizes the canvas for `availableWidth` CSS px at the current devicePixelRatio, then draws.
   * @param {{ink: string, accent: string}} theme label colours (see readTheme)
   */
  resize(availableWidth, theme) {
    this.theme = theme;
    const ctx = this.canvas.getContext('2d');
    ctx.font = FONT;
    // A compact grid (more than LABELLED_MAX_TOKENS a side) draws no labels: nothing to measure.
    const compact = Math.max(this.n, this.m) > LABELLED_MAX_TOKENS;
    const widest = (labels) => (compact ? 0 : labels.reduce((w, l) => Math.max(w, ctx.measureText(l).width), 0));
    // Row labels may be drawn bold when highlighted: measure bold.
    ctx.font = FONT_BOLD;
    const rowLabelWidth = widest(this.rowLabels);
    ctx.font = FONT;
    const colLabelWidth = widest(this.colLabels) * 1.1; // bold highlight is ~10% wider
    this.layout = gridLayout({ n: this.n, m: this.m, rowLabelWidth, colLabelWidth, availableWidth });
    const { width, height, originX, originY, cell } = this.layout;
    const dpr = window.devicePixelRatio || 1;
    this.dpr = dpr;
    // Sizes assigned only when they change: assigning one, even the same, reallocates the
    // backing store and forces a layout (issue 6: most of a re-render was spent there).
    const backingWidth = Math.ceil(width * dpr), backingHeight = Math.ceil(height * dpr);
    if (this.canvas.width !== backingWidth) this.canvas.width = backingWidth;
    if (this.canvas.height !== backingHeight) this.canvas.height = backingHeight;
    // Element size in CSS px (CSSOM, allowed by style-src 'self').
    if (this.canvas.style.width !== `${width}px`) this.canvas.style.width = `${width}px`;
    if (this.canvas.style.height !== `${height}px`) this.canvas.style.height = `${height}px`;
    Object.assign(this.canvas.dataset, {
      originX: String(originX),
      originY: String(originY),
      cell: String(cell),
    });
    this.baseValid = false;
    this.draw();
  }

  setSelection(sel) {
    this.selection = sel;
    if (sel) this.lastCell = { row: sel.row, col: sel.col };
    // Redraw only when what this head shows changes: the highlighted row, or (in the selected
    // head only) the selected cell. Moving along a row redraws one canvas, not all of them.
    const key = sel ? `${sel.row}|${sel.head === this.head ? sel.col : -1}` : '';
    if (key === this.drawnKey) return;
    this.draw();
  }

  /**
   * Draws the grid: the base (cells, masked rows, every label) is painted once per data, size or
   * theme into an offscreen canvas; a selection change copies it back and paints only the
   * highlight on top (issue 6: hover redraws the selection, not the grid).
   */
  draw() {
    if (!this.layout) return;
    if (!this.baseValid) this.paintBase();
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    const { width, height } = this.canvas;
    ctx.drawImage(this.base, 0, 0, width, height, 0, 0, width, height);
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    this.paintSelection(ctx, this.selection);
  }

  paintBase() {
    const { n, m, head } = this;
    const { cell, originX, originY, rotateColumns } = this.layout;
    // The offscreen base only grows (a new size reallocates a canvas: several ms each, 16 of them
    // when typing changes n); draw() copies the part the grid uses.
    this.base ??= document.createElement('canvas');
    if (this.base.width < this.canvas.width) this.base.width = this.canvas.width;
    if (this.base.height < this.canvas.height) this.base.height = this.canvas.height;
    const ctx = this.base.getContext('2d');
    const { ink } = this.theme;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.clearRect(0, 0, this.base.width, this.base.height);

    // Cells: the n × m pixel buffer scaled to cell × cell squares, no smoothing.
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(this.cells, originX, originY, m * cell, n * cell);

    // Rows whose keys are all masked: hatched, with a label.
    for (let i = 0; i < n; i++) {
      if (this.masked[head * n + i] === 1) this.hatchRow(ctx, i);
    }
    if (this.layout.labels === false) {
      this.baseValid = true;
      return;
    }
    ctx.fillStyle = ink;
    ctx.font = FONT;
    // Row labels (queries), right-aligned against the grid.
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'right';
    for (let i = 0; i < n; i++) ctx.fillText(this.rowLabels[i], originX - LABEL_GAP, originY + (i + 0.5) * cell);
    // Column labels (keys): across when they fit, else turned to read upwards.
    for (let j = 0; j < m; j++) this.columnLabel(ctx, j, rotateColumns);
    this.baseValid = true;
  }

  columnLabel(ctx, j, rotateColumns) {
    const { cell, originX, originY } = this.layout;
    const x = originX + (j + 0.5) * cell;
    if (rotateColumns) {
      ctx.save();
      ctx.translate(x, originY - LABEL_GAP);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'left';
      ctx.textBaseline = 'middle';
      ctx.fillText(this.colLabels[j], 0, 0);
      ctx.restore();
    } else {
      ctx.textAlign = 'center';
      ctx.textBaseline = 'alphabetic';
      ctx.fillText(this.colLabels[j], x, originY - LABEL_GAP);
    }
  }

  /** The highlight over the base: the selected row in every head, the cell in its own head. */
  paintSelection(ctx, sel) {
    const { n, m, head } = this;
    const { cell, originX, originY, rotateColumns } = this.layout;
    const { accent } = this.theme;
    const selRow = sel && sel.row < n ? sel.row : -1;
    const selCol = sel && sel.head === head && sel.col < m ? sel.col : -1;
    if (this.layout.labels !== false) {
      // The selected row's and column's labels, bold and in the accent colour, over a cleared spot.
      ctx.font = FONT_BOLD;
      ctx.fillStyle = accent;
      if (selRow >= 0) {
        ctx.clearRect(0, originY + selRow * cell, originX - LABEL_GAP + 1, cell);
        ctx.textBaseline = 'middle';
        ctx.textAlign = 'right';
        ctx.fillText(this.rowLabels[selRow], originX - LABEL_GAP, originY + (selRow + 0.5) * cell);
      }
      if (selCol >= 0) {
        ctx.clearRect(originX + selCol * cell, 0, cell, originY - OUTLINE_PAD);
        this.columnLabel(ctx, selCol, rotateColumns);
      }
    }

    // Highlight: the selected query row in every head; the selected cell in its own head.
    this.canvas.dataset.highlightRow = selRow >= 0 ? String(selRow) : '';
    this.drawnKey = sel ? `${sel.row}|${selCol}` : '';
    if (selRow >= 0 && cell < MIN_RING_CELL) {
      // A compact grid: the row outlined at least 3 px tall, the cell marked by a small box.
      const band = Math.max(cell, 3);
      const y = originY + (selRow + 0.5) * cell - band / 2;
      outline(ctx, originX, y, m * cell, band);
      if (selCol >= 0) outline(ctx, originX + (selCol + 0.5) * cell - band / 2, y, band, band);
    } else if (selRow >= 0) {
      outline(ctx, originX, originY + selRow * cell, m * cell, cell);
      if (selCol >= 0) {
        const w = this.weights[(head * n + selRow) * m + selCol];
        const [r, g, b] = weightToRgb(w);
        // A contrasting inner ring: dark on bright cells, white on dark ones.
        const dark = 0.299 * r + 0.587 * g + 0.114 * b > 140;
        ctx.lineWidth = 2;
        ctx.strokeStyle = dark ? '#000' : '#fff';
        ctx.strokeRect(originX + selCol * cell + 2, originY + selRow * cell + 2, cell - 4, cell - 4);
      }
    }
  }

  hatchRow(ctx, i) {
    const { cell, originX, originY } = this.layout;
    const x0 = originX;
    const y0 = originY + i * cell;
    const w = this.m * cell;
    if (cell < 4) {
      // Too thin to hatch or label (a compact grid): the masked row is plain grey.
      ctx.fillStyle = '#9a9a9a';
      ctx.fillRect(x0, y0, w, cell);
      return;
    }
    ctx.save();
    ctx.beginPath();
    ctx.rect(x0, y0, w, cell);
    ctx.clip();
    ctx.fillStyle = '#f2f2f2';
    ctx.fillRect(x0, y0, w, cell);
    ctx.strokeStyle = '#767676';
    ctx.lineWidth = 1;
    for (let x = x0 - cell; x < x0 + w + cell; x += 6) {
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
      ctx.fillRect(x0 + w / 2 - tw / 2, y0 + 1, tw, cell - 2);
      ctx.fillStyle = '#111';
      ctx.fillText(label, x0 + w / 2, y0 + cell / 2);
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

/** A two-tone rectangle outline (black outside, white inside): visible on every viridis colour. */
function outline(ctx, x, y, w, h) {
  ctx.lineWidth = 3;
  ctx.strokeStyle = '#000';
  ctx.strokeRect(x - 1.5, y - 1.5, w + 3, h + 3);
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = '#fff';
  ctx.strokeRect(x + 0.75, y + 0.75, w - 1.5, h - 1.5);
}
