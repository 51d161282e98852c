// What the grids of every trained-model mode share (modes/date/date_grids.js with overview.js,
// modes/english/english_grids.js): the heads' small multiples painted one canvas pixel per cell,
// each head's "switch off" checkbox and their marks, the current cell (draw/selection.js) and the
// readout's hint when no cell is current. The figures around them (captions, measured roles) are
// each model's own.
import { headPixels } from '../../draw/color.js';
import { CellSelection } from '../../draw/selection.js';
import { el } from '../../draw/dom.js';
import { setText } from '../../chrome/alerts.js';

/**
 * A small multiple: one canvas pixel per cell of head `head` of `weights` (h, n, m), shown
 * `width` × `height` CSS px without smoothing (image-rendering: pixelated), so a keystroke costs
 * one putImageData per head.
 */
export function paintThumb(canvas, weights, head, n, m, width, height) {
  if (canvas.width !== Math.max(1, m)) canvas.width = Math.max(1, m);
  if (canvas.height !== Math.max(1, n)) canvas.height = Math.max(1, n);
  const w = `${width}px`,
    h = `${height}px`;
  if (canvas.style.width !== w) canvas.style.width = w;
  if (canvas.style.height !== h) canvas.style.height = h;
  if (n === 0 || m === 0) return;
  canvas.getContext('2d').putImageData(new ImageData(headPixels(weights, head, n, m), m, n), 0, 0);
}

export class ModelGrids {
  /**
   * @param {object} els the panel's elements: at least panel and readout (its text is the hint)
   * @param {object} p
   * @param {import('../../draw/labels.js').LabelCache} p.labels the page's label cache
   * @param {(key: string) => boolean} p.isOff whether the head of address key `key` is switched off
   * @param {(key: string, off: boolean) => void} p.setOff its checkbox changed
   */
  constructor(els, { labels, isOff, setOff }) {
    this.els = els;
    this.labels = labels;
    this.isOff = isOff;
    this.setOff = setOff;
    this.readoutHint = els.readout.textContent;
    this.theme = null;
    this.zoomGrid = null;
    this.zoomKey = null;
    /** Which of the model's grids the current cell is in, where it has several (the date model's layer row, the enlarged head). */
    this.group = null;
    /** The current cell (hovered, or locked by a click, a tap or Enter); select() shows it. */
    this.cells = new CellSelection((cell) => this.select(cell, this.group));
  }

  /** The checkbox that switches head `key` off (data-off-key: markOff finds it). */
  offBox(key) {
    const box = el('input');
    box.type = 'checkbox';
    box.dataset.offKey = key;
    box.checked = this.isOff(key);
    box.addEventListener('change', () => this.setOff(key, box.checked));
    return box;
  }

  /** Every checkbox of the panel, and its figure, shows whether its head is in `off`. */
  markOff(off) {
    for (const box of this.els.panel.querySelectorAll('input[data-off-key]')) {
      box.checked = off.includes(box.dataset.offKey);
      box.closest('figure')?.classList.toggle('is-off', box.checked);
    }
  }

  /** The readout with no current cell: its hint. */
  showHint() {
    setText(this.els.readout, this.readoutHint);
    this.els.readout.dataset.locked = 'false';
  }

  /**
   * Shows the current cell `cell` (null: none) in the grids of `group`; each model's grids
   * implement it (their figures and readout are their own).
   */
  select(cell, group) {
    throw new Error(`select(${cell}, ${group}) is not implemented by these grids`);
  }
}

/** Grid `g`'s weight at cell `sel` ({head, row, col}). */
export function cellWeight(g, sel) {
  return g.weights[(sel.head * g.n + sel.row) * g.m + sel.col];
}
