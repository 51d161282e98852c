// The Date translator's grids: every head of the chosen layer and kind, and one head enlarged
// beside the small multiples (overview.js), with their hidden tables, the shared cell selection
// (draw/selection.js) and the readout of the current cell.
import { HeadHeatmap, readTheme } from '../../draw/heatmap.js';
import { headTable } from '../../draw/table.js';
import { dropQueued, queueAfterFrame } from '../../draw/tables.js';
import { formatWeight } from '../../draw/format.js';
import { dateReadout, headKey, kindInfo, layerCount, layerView } from './date_view.js';
import { el } from '../../draw/dom.js';
import { Overview } from './overview.js';
import { ModelGrids, cellWeight } from '../trained/model_grids.js';

export class DateGrids extends ModelGrids {
  /**
   * @param {object} els the panel's elements (date_mode.js)
   * @param {object} p
   * @param {import('../../draw/labels.js').LabelCache} p.labels the page's label cache
   * @param {(key: string) => boolean} p.isOff whether head `key` (headKey) is switched off
   * @param {(key: string, off: boolean) => void} p.setOff its checkbox changed
   * @param {() => Map} p.roles the measured roles (headKey → readRoles' entries: role, label, claim, type, prunable, ablated)
   */
  constructor(els, { labels, isOff, setOff, roles }) {
    super(els, { labels, isOff, setOff });
    this.roles = roles;
    this.overview = new Overview(els.overview, (which) => this.zoom(which));
    this.grids = [];
    this.holders = [];
    this.gridsKey = null;
    this.zoomHolder = null;
    this.zoomed = null; // {kind, layer, head}
    this.group = 'layer'; // the current cell's grids: 'layer' (the chosen layer's) or 'zoom' (the enlarged head)
    this.widths = { heads: 0, zoom: 0 };
  }

  /** Reads the widths and label colours now (on entering the mode, and after a resize). */
  measure() {
    this.widths = { heads: this.els.heads.clientWidth, zoom: this.els.zoom.clientWidth };
    this.theme = readTheme(this.els.heads);
  }

  /** After a resize: whether the widths changed (then kept for relayout). */
  resized() {
    const heads = this.els.heads.clientWidth;
    const zoom = this.els.zoom.clientWidth;
    if (heads === this.widths.heads && zoom === this.widths.zoom) return false;
    this.widths = { heads, zoom };
    return true;
  }

  relayout() {
    this.layout();
  }

  /**
   * Draws translation `r` for layer `layer` of `kind`: the per-head grids, the small multiples
   * and the enlarged head; `off`: the heads switched off (headKey strings).
   */
  draw(r, kind, layer, off) {
    const info = kindInfo(kind);
    this.els.headsTitle.textContent = `${info.label}, layer ${layer}: ${r.num_heads} heads, reading “${r.input}”`;
    this.els.axes.textContent = `Rows: ${info.rows}. Columns: ${info.cols}. Each row sums to 1.`;
    const view = layerView(r, kind, layer);
    dropQueued(this.els.panel); // tables of views already replaced: never needed
    const key = `${kind}/${layer}/${r.num_heads}`;
    if (key !== this.gridsKey) {
      // Another kind or layer: new figures (captions, roles). A keystroke only refills them.
      const figures = [];
      this.grids = [];
      this.holders = [];
      for (let h = 0; h < r.num_heads; h++) {
        const { figure, grid, holder } = this.headFigure(view, kind, layer, h, 'layer');
        figures.push(figure);
        this.grids.push(grid);
        this.holders.push(holder);
      }
      this.els.heads.replaceChildren(...figures);
      this.gridsKey = key;
    } else {
      for (const g of this.grids)
        g.setData({ result: view, tokens: view.rows, keyTokens: view.cols });
    }
    this.holders.forEach((holder, h) => this.queueTable(holder, view, kind, layer, h));
    this.overview.draw(r);
    this.drawZoom(r);
    this.markOff(off);
    const c = this.cells.cell;
    if (c && (this.group !== 'layer' || c.row >= view.n || c.col >= view.m)) this.cells.clear();
    this.layout();
    this.select(this.cells.cell, 'layer');
  }

  /**
   * One head's figure: caption (and measured role), canvas grid, holder of its hidden table.
   * `group`: 'layer' (the chosen layer's grids) or 'zoom' (the enlarged head).
   */
  headFigure(view, kind, layer, h, group) {
    const info = kindInfo(kind);
    const figure = el('figure', 'head');
    Object.assign(figure.dataset, { kind, layer: String(layer), head: String(h) });
    const caption = el('figcaption');
    caption.append(el('span', 'head-title', `Head ${h}`));
    const key = headKey(kind, layer, h);
    const role = this.roles().get(key);
    if (role?.role) caption.append(el('span', 'head-role', role.role));
    if (role?.label) caption.append(el('span', 'head-detail head-fields', role.label));
    if (role?.claim) caption.append(el('span', 'head-detail head-claim', role.claim));
    if (role?.type) caption.append(el('span', 'head-detail head-type', role.type));
    if (role?.prunable) caption.append(el('span', 'head-detail head-prunable', role.prunable));
    if (role?.ablated) caption.append(el('span', 'head-detail head-ablated', role.ablated));
    // Switch the head off (its output zeroed before out_proj) and see what the model writes then.
    const toggle = el('label', 'head-off');
    toggle.append(this.offBox(key), ' switch this head off');
    caption.append(toggle);
    figure.classList.toggle('is-off', this.isOff(key));
    const name = `${info.label}, layer ${layer}, head ${h}`;
    const grid = new HeadHeatmap({
      labels: this.labels,
      head: h,
      result: view,
      tokens: view.rows,
      keyTokens: view.cols,
      name,
      onSelect: (sel) => this.pointOrMove(sel, group),
      onActivate: (cell) => this.toggleLock(cell, group),
      onClear: () => this.cells.clear(),
    });
    Object.assign(grid.canvas.dataset, { kind, layer: String(layer) });
    const scroller = el('div', 'grid-scroll');
    scroller.append(grid.element);
    const holder = el('div', 'visually-hidden table-holder');
    figure.append(caption, scroller, holder);
    return { figure, grid, holder };
  }

  /** Puts head h's table of `view` into `holder`, just after the next frame (draw/tables.js). */
  queueTable(holder, view, kind, layer, h) {
    const info = kindInfo(kind);
    queueAfterFrame(
      this.els.panel,
      () => {
        const table = headTable(
          h,
          view.attn_weights,
          view.fully_masked_rows,
          view.rows,
          view.cols,
          {
            title: `${info.label}, layer ${layer}, head ${h} attention weights`,
            note: `rows: ${info.rows}; columns: ${info.cols}`,
          },
        );
        Object.assign(table.dataset, { kind, layer: String(layer) });
        holder.replaceChildren(table);
      },
      (ms) => {
        this.els.summary.dataset.tablesMs = ms.toFixed(2);
      },
    );
  }

  zoom(which, result) {
    this.zoomed = which;
    this.overview.markZoomed(which);
    this.drawZoom(result ?? this.result);
    this.layoutZoom();
  }

  /** The enlarged head: labels, grid, role and table, beside (or under) the small multiples. */
  drawZoom(r) {
    this.result = r;
    const z = this.zoomed;
    const box = this.els.zoom;
    if (!z || z.layer >= layerCount(r, z.kind) || z.head >= r.num_heads) {
      this.zoomed = null;
      this.zoomGrid = null;
      this.zoomKey = null;
      delete box.dataset.kind;
      box.replaceChildren(
        el('p', 'help zoom-hint', 'Select a small grid to see it enlarged here, with its labels.'),
      );
      return;
    }
    const view = layerView(r, z.kind, z.layer);
    const key = `${z.kind}/${z.layer}/${z.head}`;
    if (key !== this.zoomKey || !this.zoomGrid) {
      const { figure, grid, holder } = this.headFigure(view, z.kind, z.layer, z.head, 'zoom');
      const title = figure.querySelector('.head-title');
      title.textContent = `${kindInfo(z.kind).label}, layer ${z.layer}, head ${z.head}`;
      Object.assign(box.dataset, { kind: z.kind, layer: String(z.layer), head: String(z.head) });
      box.replaceChildren(...figure.childNodes);
      this.zoomGrid = grid;
      this.zoomHolder = holder;
      this.zoomKey = key;
    } else {
      this.zoomGrid.setData({ result: view, tokens: view.rows, keyTokens: view.cols });
    }
    this.queueTable(this.zoomHolder, view, z.kind, z.layer, z.head);
  }

  /**
   * Checkboxes, figures and small multiples show which heads are off (headKey strings); the
   * button that switches them all back on shows when any is.
   */
  markOff(off) {
    super.markOff(off);
    if (this.els.zoom.dataset.kind) {
      const z = this.els.zoom.dataset;
      this.els.zoom.classList.toggle('is-off', off.includes(headKey(z.kind, z.layer, z.head)));
    }
    this.overview.markOff(off);
    this.els.allOn.hidden = off.length === 0;
  }

  layout() {
    if (!this.theme) this.theme = readTheme(this.els.heads);
    const { theme } = this;
    const width = this.widths.heads;
    const n = this.grids.length;
    const perRow = width >= 1000 ? Math.min(n, 4) : width >= 620 ? Math.min(n, 2) : 1;
    // Figures have 8 px padding and a border each side; the flex gap is 16 px.
    const available = Math.max(200, Math.floor((width - 16 * (perRow - 1)) / perRow) - 18);
    for (const g of this.grids) g.resize(available, theme);
    this.layoutZoom();
  }

  layoutZoom() {
    if (!this.zoomGrid) return;
    if (!this.theme) this.theme = readTheme(this.els.heads);
    this.zoomGrid.resize(Math.max(200, this.widths.zoom - 18), this.theme);
  }

  /** A grid reports the pointer, the focus or the arrow keys: a locked cell moves only with the arrows. */
  pointOrMove(sel, group) {
    if (sel?.source === 'keyboard') {
      this.group = group;
      this.cells.move(sel);
    } else if (!this.cells.locked) {
      if (sel) this.group = group;
      else if (this.group !== group) return; // the pointer left a grid of the other group
      this.cells.hover(sel);
    }
  }

  /** Click, tap or Enter: locks the cell (it stays when the pointer or the focus leaves), or unlocks it. */
  toggleLock(cell, group) {
    if (group !== this.group) {
      this.group = group;
      this.cells.set(cell, true, 'lock');
    } else this.cells.toggle(cell);
  }

  /** Hover / keyboard cell: highlights the query row across the group's heads, and reads it out. */
  select(sel, group) {
    const grids = group === 'zoom' ? (this.zoomGrid ? [this.zoomGrid] : []) : this.grids;
    const { locked } = this.cells;
    for (const g of grids) g.setSelection(sel);
    const { readout } = this.els;
    if (!sel) {
      this.showHint();
      return;
    }
    const g = grids.find((x) => x.head === sel.head);
    if (!g) return;
    const w = cellWeight(g, sel);
    const kind = g.canvas.dataset.kind;
    readout.textContent =
      dateReadout(
        kind,
        Number(g.canvas.dataset.layer),
        sel.head,
        g.rowLabels[sel.row],
        g.colLabels[sel.col],
        formatWeight(w),
      ) + (locked ? ' · locked' : '');
    readout.dataset.locked = String(locked);
  }
}
