// The English mode's grids: every head of every layer as small multiples (one button per head,
// a canvas with one pixel per cell scaled by CSS without smoothing, coloured by the page's table,
// draw/color.js headPixels, through trained/model_grids.js paintThumb), each captioned with its measured role on this text and its typical
// role over held-out text, with a switch to turn it off; and one head enlarged under them with
// its token labels (draw/heatmap.js HeadHeatmap), its whole report card (held-out text and this
// text, every score with its protocol, chance and the paper's figure), its hidden table and the
// readout of its cells. The grids draw a view: the run's pieces, or its words (by-word view).
import { HeadHeatmap, readTheme } from '../../draw/heatmap.js';
import { headTable } from '../../draw/table.js';
import { dropQueued, queueAfterFrame } from '../../draw/tables.js';
import { formatWeight } from '../../draw/format.js';
import { setText } from '../../chrome/alerts.js';
import { typicalText, valueWithChance } from './english_view.js';
import { el } from '../../draw/dom.js';
import { ModelGrids, cellWeight, paintThumb } from '../trained/model_grids.js';

/**
 * Largest cell of a small multiple, and the side a small multiple keeps within (CSS px): a short
 * text stays small, and a long one fits about 200 px, so that several layers show at once.
 */
const MAX_THUMB_CELL = 8,
  MAX_THUMB_SIDE = 200;
/**
 * Gap between the small multiples of a row; the padding and borders of a figure and its button
 * around the canvas (english.css, style.css .thumb), CSS px.
 */
const GAP = 12,
  INSIDE = 24;

export class EnglishGrids extends ModelGrids {
  /**
   * @param {object} els the panel's elements (english_dom.js)
   * @param {object} p
   * @param {import('../../draw/labels.js').LabelCache} p.labels the page's label cache
   * @param {(id: string) => boolean} p.isOff whether head "layer.head" is switched off
   * @param {(id: string, off: boolean) => void} p.setOff its switch changed
   * @param {(id: string|null) => void} p.onZoom a head was enlarged (null: none)
   * @param {(id: string) => object|null} p.cardOf head "layer.head"'s whole report card
   *   (english_mode.js cardOf: {heldOut, live, byWord, note})
   */
  constructor(els, { labels, isOff, setOff, onZoom, cardOf }) {
    super(els, { labels, isOff, setOff });
    this.onZoom = onZoom;
    this.cardOf = cardOf;
    /** Whether the card's details are open (kept from one enlarged head to the next). */
    this.cardOpen = false;
    /** [{id, layer, head, figure, button, canvas, role, typical, box}], one per head (null before a model). */
    this.thumbs = null;
    this.shape = null; // `${layers}x${heads}` of the thumbs built
    this.typical = new Map();
    this.zoomed = null; // "layer.head"
    this.zoomParts = null;
    this.view = null; // {n, layers, heads, weights, labels}
    this.width = 0;
  }

  /** The figures of a model of `layers` × `heads` (built once per shape), with typical roles `typical`. */
  build(layers, heads, typical) {
    this.typical = typical;
    if (this.shape === `${layers}x${heads}`) return;
    this.shape = `${layers}x${heads}`;
    this.thumbs = [];
    const rows = [];
    for (let layer = 0; layer < layers; layer++) {
      const row = el('div', 'en-layer');
      row.dataset.layer = String(layer);
      const list = el('div', 'en-thumbs');
      for (let head = 0; head < heads; head++) list.append(this.thumbFigure(layer, head));
      row.append(
        el(
          'h3',
          'en-layer-title',
          `Layer ${layer}${layer === 0 ? ' (first)' : layer === layers - 1 ? ' (last)' : ''}`,
        ),
        list,
      );
      rows.push(row);
    }
    this.els.layers.replaceChildren(...rows);
    this.els.layers.dataset.count = String(this.thumbs.length);
  }

  thumbFigure(layer, head) {
    const id = `${layer}.${head}`;
    const figure = el('figure', 'en-head');
    Object.assign(figure.dataset, { layer: String(layer), head: String(head) });
    const button = el('button', 'thumb en-thumb');
    button.type = 'button';
    button.setAttribute('aria-pressed', 'false');
    const canvas = el('canvas', 'thumb-canvas');
    canvas.setAttribute('aria-hidden', 'true');
    button.append(canvas);
    button.addEventListener('click', () => this.zoom(this.zoomed === id ? null : id));
    const caption = el('figcaption');
    const title = el('span', 'en-head-title', `L${layer} H${head}`);
    const role = el('span', 'en-role');
    const typicalLine = typicalText(this.typical.get(id));
    const typical = el('span', 'en-typical', typicalLine);
    typical.hidden = !typicalLine;
    const { toggle, box } = this.offSwitch(id, `layer ${layer} head ${head}`);
    caption.append(title, role, typical, toggle);
    figure.append(button, caption);
    const t = { id, layer, head, figure, button, canvas, role, typical, box };
    this.thumbs.push(t);
    this.labelButton(t, '');
    return figure;
  }

  /** A checkbox "off" for head `id` (its accessible name: "off, layer 0 head 1"). */
  offSwitch(id, name) {
    const toggle = el('label', 'head-off en-off');
    const box = this.offBox(id);
    toggle.append(box, 'off', el('span', 'visually-hidden', `, ${name}`));
    return { toggle, box };
  }

  labelButton(t, role) {
    const name = `layer ${t.layer} head ${t.head}`;
    t.button.setAttribute('aria-label', `Enlarge ${name}${role ? `: ${role}` : ''}`);
  }

  /**
   * Draws a run: every small multiple, every caption's measured role (`roles`: "layer.head" →
   * text), the enlarged head. `view`: {n, layers, heads, weights (Float32Array L·h·n·n), labels}.
   */
  draw(view, roles) {
    this.view = view;
    const { n, heads, weights } = view;
    const side = this.thumbSide(n);
    const layerSize = heads * n * n;
    for (const t of this.thumbs) {
      const layerWeights = weights.subarray(t.layer * layerSize, (t.layer + 1) * layerSize);
      paintThumb(t.canvas, layerWeights, t.head, n, n, side, side);
      const role = roles.get(t.id) ?? '';
      if (t.role.textContent !== role) {
        t.role.textContent = role;
        this.labelButton(t, role);
      }
    }
    this.drawZoom(roles);
    this.layoutZoom();
  }

  /**
   * CSS px of a small multiple's side for n tokens: whole cells up to MAX_THUMB_CELL within
   * MAX_THUMB_SIDE (below 1 px a cell, the side itself), every head of a layer in one row (its
   * figure's width, --en-thumb, is set here when it changes).
   */
  thumbSide(n) {
    const heads = this.view?.heads ?? 1;
    const slot = Math.max(72, Math.floor((this.width - GAP * (heads - 1)) / heads));
    if (slot !== this.slot) {
      this.slot = slot;
      this.els.layers.style.setProperty('--en-thumb', `${slot}px`);
    }
    const room = Math.min(slot - INSIDE, MAX_THUMB_SIDE);
    const cell = Math.min(MAX_THUMB_CELL, Math.floor(room / n));
    return cell >= 1 ? n * cell : room;
  }

  /** Head `id` ("layer.head") enlarged, or none (null). */
  zoom(id) {
    this.zoomed = id;
    this.onZoom(id);
    for (const t of this.thumbs ?? []) t.button.setAttribute('aria-pressed', String(t.id === id));
    if (this.view) this.drawZoom(this.lastRoles ?? new Map());
    this.layoutZoom();
    this.queueTable();
  }

  /** The enlarged head: caption, labelled grid, hidden table. */
  drawZoom(roles) {
    this.lastRoles = roles;
    const box = this.els.zoom;
    const v = this.view;
    const z = this.zoomed ? this.zoomed.split('.').map(Number) : null;
    if (!v || !z || z[0] >= v.layers || z[1] >= v.heads) {
      this.zoomGrid = null;
      this.zoomKey = null;
      this.zoomParts = null;
      this.tablePending = null;
      delete box.dataset.layer;
      box.replaceChildren(
        el(
          'p',
          'help zoom-hint',
          'Select a small grid above to see it enlarged here, with its token labels.',
        ),
      );
      this.cells.clear();
      return;
    }
    const [layer, head] = z;
    const result = this.layerResult(layer);
    if (this.zoomKey !== this.zoomed || !this.zoomGrid) {
      const id = this.zoomed;
      const name = `Layer ${layer}, head ${head}`;
      const caption = el('figcaption');
      const role = el('span', 'head-role en-role');
      const typicalLine = typicalText(this.typical.get(id));
      const { toggle, box: check } = this.offSwitch(id, `layer ${layer} head ${head}`);
      caption.append(
        el('span', 'head-title', name),
        role,
        el('span', 'head-detail en-typical', typicalLine),
        toggle,
      );
      const grid = new HeadHeatmap({
        labels: this.labels,
        head,
        result,
        tokens: v.labels,
        name,
        onSelect: (sel) =>
          sel?.source === 'keyboard' ? this.cells.move(sel) : this.cells.hover(sel),
        onActivate: (cell) => this.cells.toggle(cell),
        onClear: () => this.cells.clear(),
      });
      grid.canvas.dataset.layer = String(layer);
      const scroller = el('div', 'grid-scroll');
      scroller.append(grid.element);
      const holder = el('div', 'visually-hidden table-holder');
      const card = el('details', 'en-card');
      card.id = 'english-card';
      card.open = this.cardOpen;
      card.addEventListener('toggle', () => {
        this.cardOpen = card.open;
        // The card is computed only while it is open (mod.headReport costs about as much as the
        // model's run): opening it fills it for the text on screen.
        if (card.open) this.drawCard();
      });
      const summary = el('summary', '', `Report card of L${layer} H${head}`);
      const cardBody = el('div', 'en-card-body');
      card.append(summary, cardBody);
      box.replaceChildren(caption, scroller, card, holder);
      Object.assign(box.dataset, { layer: String(layer), head: String(head) });
      this.zoomGrid = grid;
      this.zoomKey = id;
      this.zoomParts = { role, holder, check, card, cardBody };
      this.cells.clear();
    } else {
      this.zoomGrid.setData({ result, tokens: v.labels });
      const c = this.cells.cell;
      if (c && (c.row >= v.n || c.col >= v.n)) this.cells.clear();
    }
    setText(this.zoomParts.role, roles.get(this.zoomed) ?? '');
    this.drawCard();
    box.classList.toggle('is-off', this.isOff(this.zoomed));
    this.tablePending = { layer, head, result };
  }

  /**
   * The enlarged head's whole report card: one row per score, its value with its chance and the
   * rows counted on this text (the core's card of the run, by word in the by-word view) and over
   * held-out text (the heads file, with the probe it was measured on), its protocol and the
   * paper's figure.
   */
  drawCard() {
    const body = this.zoomParts?.cardBody;
    if (!body || !this.zoomParts.card.open) return;
    const c = this.zoomed ? this.cardOf?.(this.zoomed) : null;
    if (!c) return;
    const names = [...new Set([...c.live.map((r) => r.name), ...c.heldOut.map((r) => r.name)])];
    const table = el('table', 'en-card-table');
    table.append(
      el(
        'caption',
        '',
        `Every score of the head report card (docs/patterns.md), on this text ${c.byWord ? 'by word' : 'by piece'} ` +
          'and on held-out text; chance: the same score for a head that spreads its weight evenly on the same rows.',
      ),
    );
    const head = el('thead');
    const hr = el('tr');
    for (const t of [
      'score',
      `on this text (${c.byWord ? 'words' : 'pieces'})`,
      'on held-out text',
      'protocol and the paper’s figure',
    ]) {
      const th = el('th', '', t);
      th.scope = 'col';
      hr.append(th);
    }
    head.append(hr);
    const rows = names.map((name) => {
      const live = c.live.find((r) => r.name === name);
      const held = c.heldOut.find((r) => r.name === name);
      const any = live ?? held;
      const tr = el('tr');
      tr.dataset.score = name;
      const th = el('th', '', any.words);
      th.scope = 'row';
      const count = (r, what) =>
        r.count === null
          ? ''
          : `${r.count.toLocaleString('en-US')} ${what}${r.count === 1 ? '' : 's'}`;
      const unit = name === 'coreference' ? 'probe' : 'row';
      const liveCell = el('td', 'en-card-value en-card-live');
      if (live) {
        liveCell.append(valueWithChance(live));
        const more = [count(live, unit)];
        if (live.offset !== null) more.push(`offset ${live.offset}`);
        liveCell.append(el('br'), el('span', 'en-card-source', more.filter(Boolean).join(' · ')));
      } else liveCell.append('—');
      const heldCell = el('td', 'en-card-value en-card-held');
      if (held) {
        heldCell.append(valueWithChance(held));
        const more = [count(held, unit), held.probe].filter(Boolean).join(' · ');
        heldCell.append(el('br'), el('span', 'en-card-source', more));
      } else heldCell.append('— (not in the heads file)');
      const about = el('td', 'en-card-about');
      about.append(any.protocol ?? held?.protocol ?? '—');
      const figure = any.figure ?? held?.figure;
      about.append(
        el('br'),
        el('span', 'en-card-source', figure ? `Paper: ${figure}` : 'No published figure.'),
      );
      tr.append(th, liveCell, heldCell, about);
      return tr;
    });
    const tbody = el('tbody');
    tbody.append(...rows);
    table.append(head, tbody);
    const parts = [table];
    if (c.note) parts.unshift(el('p', 'help', c.note));
    else if (!c.live.length) parts.unshift(el('p', 'help', 'No card on this text yet.'));
    if (!c.heldOut.length)
      parts.unshift(
        el('p', 'help', 'No held-out card for this head (web/english_lm_heads.json has none).'),
      );
    body.replaceChildren(...parts);
  }

  /** Layer `layer`'s weights as HeadHeatmap reads a result: (h, n, n), no masked row (causal rows always have a key). */
  layerResult(layer) {
    const { n, heads, weights } = this.view;
    const size = heads * n * n;
    this.noMasked = this.noMasked?.length === heads * n ? this.noMasked : new Uint8Array(heads * n);
    return {
      n,
      m: n,
      attn_weights: weights.subarray(layer * size, (layer + 1) * size),
      fully_masked_rows: this.noMasked,
    };
  }

  /**
   * The enlarged head's hidden table, built just after the next frame (draw/tables.js): called
   * after the update clock's measure is queued (chrome/timing.js), so that the table, a cell per
   * weight, is not part of a keystroke's time.
   */
  queueTable() {
    const pending = this.tablePending;
    this.tablePending = null;
    dropQueued(this.els.panel);
    if (!pending || !this.zoomParts) return;
    const { layer, head, result } = pending;
    const { holder } = this.zoomParts;
    const labels = this.view.labels;
    queueAfterFrame(this.els.panel, () => {
      const table = headTable(head, result.attn_weights, result.fully_masked_rows, labels, labels, {
        title: `Layer ${layer}, head ${head} attention weights`,
        note: 'rows: query tokens; columns: the tokens each may read (itself and earlier)',
      });
      table.dataset.layer = String(layer);
      holder.replaceChildren(table);
    });
  }

  /** Widths and label colours are read on entering the mode and after a resize (not per keystroke). */
  measure() {
    this.width = this.els.layers.clientWidth;
    this.zoomWidth = this.els.zoom.clientWidth;
    this.theme = readTheme(this.els.layers);
  }

  /** After a resize: whether the small multiples' width changed. */
  resized() {
    return this.els.layers.clientWidth !== this.width;
  }

  /** The widths read again and everything laid out for them. */
  relayout() {
    this.measure();
    this.layout();
  }

  layout() {
    if (this.view && this.thumbs) this.draw(this.view, this.lastRoles ?? new Map());
    else this.layoutZoom();
  }

  /** The enlarged head placed and labelled for the width measured last (measure). */
  layoutZoom() {
    if (!this.zoomGrid) return;
    this.theme ??= readTheme(this.els.layers);
    this.zoomGrid.resize(Math.max(200, Math.min((this.zoomWidth ?? 0) - 18, 900)), this.theme);
    this.select(this.cells.cell);
  }

  /** The readout of the enlarged head's current cell. */
  select(sel) {
    const g = this.zoomGrid;
    g?.setSelection(sel);
    const { readout } = this.els;
    if (!sel || !g) {
      this.showHint();
      return;
    }
    const w = cellWeight(g, sel);
    const layer = g.canvas.dataset.layer;
    setText(
      readout,
      `layer ${layer} head ${sel.head} · query ‘${g.rowLabels[sel.row]}’ → key ‘${g.colLabels[sel.col]}’: ` +
        `${formatWeight(w)}${this.cells.locked ? ' · locked' : ''}`,
    );
    readout.dataset.locked = String(this.cells.locked);
  }
}
