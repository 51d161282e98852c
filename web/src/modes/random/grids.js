// The random-embeddings mode's grids: one figure per head (caption, canvas grid, hidden table),
// the summary lines above them and the readout of the current cell. Figures, canvases and
// listeners are kept from one view to the next while the head count stays (rebuilding 8 figures
// and their canvases cost more than the compute); the tables follow the grids (draw/tables.js).
// The heads are small multiples side by side (layout.js smallMultiples); a head's caption button
// or Z in its grid enlarges it to the full width, the others staying in their row. The selected
// query row of every head is printed below the readout as the course prints it (QueryRowText).
import { HeadHeatmap, readTheme } from '../../draw/heatmap.js';
import { headTableSteps } from '../../draw/table.js';
import { scheduleTables } from '../../draw/tables.js';
import { formatCount, precisionText, readoutText } from '../../draw/format.js';
import { smallMultiples, LABELLED_MAX_TOKENS } from '../../draw/layout.js';
import { FONT_BOLD } from '../../draw/labels.js';
import { QueryRowText } from '../../draw/query_row.js';
import { setText } from '../../chrome/alerts.js';
import { oneHotRows, saturationNote } from './saturation.js';

/** What a .head figure's padding and border add to its grid's width (style.css .head). */
const FRAME_PAD = 18;

/** What the JSON export says the numbers are. */
const SOURCE =
  'numpy_experiment (module 08): np.random.seed(seed); X = randn(n, d_model); Wq, Wk, Wv, Wo = randn(d_model, d_model)';

export class HeadGrids {
  /**
   * @param {Document} doc the page
   * @param {object} p
   * @param {import('../../draw/labels.js').LabelCache} p.labels the page's label cache
   * @param {(sel: object|null) => void} p.onSelect a grid reports the pointer, the focus or the keys
   * @param {(cell: object) => void} p.onActivate a cell was clicked (or Enter)
   * @param {() => void} p.onClear Escape in a grid
   * @param {() => boolean} p.busy an input waits to be shown (the tables wait for it)
   */
  constructor(doc, { labels, onSelect, onActivate, onClear, busy }) {
    const $ = (id) => doc.getElementById(id);
    this.doc = doc;
    this.els = {
      heads: $('heads'),
      summary: $('summary'),
      params: $('params'),
      precision: $('precision'),
      saturation: $('saturation'),
      legend: $('legend'),
      readout: $('readout'),
    };
    this.readoutHint = this.els.readout.textContent;
    /** The enlarged head (null: none). */
    this.enlarged = null;
    this.queryRow = new QueryRowText(
      doc,
      $('query-row'),
      /** @type {HTMLButtonElement} */ ($('query-row-copy')),
    );
    this.els.heads.addEventListener('click', (e) => {
      const target = /** @type {HTMLElement} */ (e.target);
      const button = target.closest?.('.head-toggle');
      if (button) this.toggleEnlarged(Number(button.closest('figure').dataset.head));
    });
    this.els.heads.addEventListener('keydown', (e) => {
      const target = /** @type {HTMLElement} */ (e.target);
      if (
        (e.key === 'z' || e.key === 'Z') &&
        !e.ctrlKey &&
        !e.metaKey &&
        !e.altKey &&
        target.matches?.('canvas.heatmap')
      ) {
        e.preventDefault();
        this.toggleEnlarged(Number(target.dataset.head));
        target.focus();
      }
    });
    // What every heatmap is given: the page's label cache and the mode's callbacks.
    this.callbacks = { labels, onSelect, onActivate, onClear };
    this.busy = busy;
    /** The heatmaps on screen, one per head. */
    this.heatmaps = [];
    /**
     * The heads area's content width (CSS px) and the label colours, read again only when they may
     * have changed (a resize, a zoom, a light/dark switch: `fresh`). Reading them on every update
     * forced a style and layout pass over the whole page, thousands of table cells included,
     * before the grids could be drawn.
     */
    this.headsWidth = null;
    this.labelTheme = null;
    /** The cell drawn as selected (undefined: none drawn yet; redraw it). */
    this.drawnSelection = undefined;
  }

  /**
   * Draws `result` (numpyExperiment's) for `tokens`: the figures, the tables, the summary lines.
   * @param {object} state the settings (random_state.js)
   * @param {string[]} tokens
   * @param {object} result
   * @param {number[]} offHeads heads switched off (their figures are marked)
   * @param {number} work the request's multiply-adds (the core's experimentWork)
   */
  render(state, tokens, result, offHeads, work) {
    const { els } = this;
    const dHead = result.d_head;
    const figures = [...els.heads.querySelectorAll(':scope > figure.head')];
    const reuse = this.heatmaps.length === result.num_heads && figures.length === result.num_heads;
    const holders = [];
    const heatmaps = reuse ? this.heatmaps : [];
    if (!reuse) figures.length = 0;
    for (let h = 0; h < result.num_heads; h++) {
      let figure;
      if (reuse) {
        figure = figures[h];
        heatmaps[h].setData({ result, tokens });
        holders.push(figure.querySelector('.table-holder'));
      } else {
        ({ figure } = this.headFigure(h, result, tokens, heatmaps, holders));
        figures.push(figure);
      }
      figure.classList.toggle('is-off', offHeads.includes(h));
      setText(
        figure.querySelector('.head-detail'),
        ` · Q, K, V columns ${h * dHead}–${(h + 1) * dHead - 1}`,
      );
    }
    if (!reuse) els.heads.replaceChildren(...figures);
    if (this.enlarged !== null && this.enlarged >= result.num_heads) this.enlarged = null;
    this.markEnlarged();
    // The tables replace the previous ones in their holders (after the paint, for larger views).
    scheduleTables(
      els.heads,
      holders,
      (h) => headTableSteps(h, result.attn_weights, result.fully_masked_rows, tokens, tokens),
      result,
      { busy: this.busy },
    );
    this.heatmaps = heatmaps;
    this.drawnSelection = undefined; // a new view: the selection is drawn again
    this.layout();

    setText(
      els.summary,
      `n = ${tokens.length} token${tokens.length === 1 ? '' : 's'} · d_model = ${result.d_model} · ` +
        `num_heads = ${result.num_heads} · d_head = ${dHead}` +
        `${state.causal ? ' · causal' : ''}${state.positional ? ' · + positions' : ''} · seed ${state.seed}`,
    );
    setText(
      els.params,
      `Parameters: 4 · d_model² = ${formatCount(result.parameter_count)} ` +
        '(Wq, Wk, Wv, Wo; the same for every valid num_heads)',
    );
    els.params.dataset.count = String(result.parameter_count);
    setText(els.precision, precisionText(result.precision, work));
    const note = saturationNote(
      oneHotRows(result.attn_weights, result.num_heads, tokens.length, tokens.length),
      result.d_model,
    );
    setText(els.saturation, note);
    els.saturation.hidden = !note;
  }

  /** A new figure for head h: caption, scrolling canvas grid, holder of the hidden table. */
  headFigure(h, result, tokens, heatmaps, holders) {
    const { doc } = this;
    const figure = doc.createElement('figure');
    figure.className = 'head';
    figure.dataset.head = String(h);
    const caption = doc.createElement('figcaption');
    const title = doc.createElement('button');
    title.type = 'button';
    title.className = 'head-title head-toggle';
    title.textContent = `Head ${h}`;
    title.setAttribute('aria-pressed', 'false');
    // Out of the Tab order (Tab goes from grid to grid, as before): in a grid, Z does the same.
    title.tabIndex = -1;
    title.title = 'Enlarge this head (or press Z in its grid)';
    const detail = doc.createElement('span');
    detail.className = 'head-detail';
    caption.append(title, detail);
    // The callbacks are the mode's, not closures made here: a closure would keep this call's
    // scope, the first view's result included, alive in heatmaps that outlive that view.
    const hm = new HeadHeatmap({ head: h, result, tokens, ...this.callbacks });
    hm.canvas.setAttribute('aria-keyshortcuts', 'z');
    const scroller = doc.createElement('div');
    scroller.className = 'grid-scroll';
    scroller.append(hm.element);
    const hidden = doc.createElement('div');
    hidden.className = 'visually-hidden table-holder';
    holders.push(hidden);
    figure.append(caption, scroller, hidden);
    heatmaps.push(hm);
    return { figure };
  }

  /** Enlarges head h (or shrinks it back when it is the enlarged one). */
  toggleEnlarged(h) {
    this.enlarged = this.enlarged === h ? null : h;
    this.markEnlarged();
    this.layout();
  }

  /** The enlarged head's figure marked (class and its caption button's aria-pressed). */
  markEnlarged() {
    const figures = /** @type {NodeListOf<HTMLElement>} */ (
      this.els.heads.querySelectorAll(':scope > figure.head')
    );
    for (const figure of figures) {
      const on = Number(figure.dataset.head) === this.enlarged;
      figure.classList.toggle('is-enlarged', on);
      figure.querySelector('.head-toggle')?.setAttribute('aria-pressed', String(on));
    }
  }

  /** Sizes every grid: the small multiples of the heads area's width, the enlarged head its full width. */
  layout({ fresh = false } = {}) {
    if (!this.heatmaps.length) return;
    const { heads } = this.els;
    if (fresh || this.headsWidth === null) {
      const style = getComputedStyle(heads);
      this.headsWidth =
        heads.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    }
    if (fresh || this.labelTheme === null) this.labelTheme = readTheme(heads);
    const first = this.heatmaps[0];
    const { n, m } = first;
    const labelWidth =
      Math.max(n, m) > LABELLED_MAX_TOKENS ? 0 : first.labels.widest(first.rowSet, FONT_BOLD);
    // Each figure has padding and a border of its own (style.css, .head): FRAME_PAD.
    const plan = smallMultiples({
      count: this.heatmaps.length,
      n,
      m,
      width: Math.max(240, this.headsWidth),
      labelWidth,
      gap: 16,
      framePad: FRAME_PAD,
    });
    heads.dataset.columns = String(plan.columns);
    heads.dataset.labels = String(plan.labels);
    const full = Math.max(240, this.headsWidth - FRAME_PAD);
    for (const hm of this.heatmaps) {
      if (hm.head === this.enlarged) hm.resize(full, this.labelTheme);
      else hm.resize(plan.available, this.labelTheme, { labels: plan.labels });
    }
  }

  /**
   * The shared selection (the hovered, focused or locked cell, whose query row is highlighted in
   * every head) drawn, and its weight in the readout.
   */
  select(sel, view, locked) {
    const same = (a, b) =>
      a === b || (a && b && a.head === b.head && a.row === b.row && a.col === b.col);
    // Mouse moves inside one cell change nothing: skip the redraw.
    if (view && this.drawnSelection !== undefined && same(sel, this.drawnSelection)) return;
    if (!view) return;
    for (const hm of this.heatmaps) hm.setSelection(sel);
    this.drawnSelection = sel;
    this.queryRow.show(view.result, sel);
    const { readout } = this.els;
    if (!sel) {
      setText(readout, this.readoutHint);
      delete readout.dataset.head;
      return;
    }
    const { tokens, result } = view;
    const { n, m } = result;
    const w = result.attn_weights[(sel.head * n + sel.row) * m + sel.col];
    let text = readoutText(sel.head, tokens[sel.row], tokens[sel.col], w);
    if (result.fully_masked_rows[sel.head * n + sel.row] === 1)
      text += ' (every key of this row is masked)';
    if (locked) text += ' · locked';
    setText(readout, text);
    readout.dataset.head = String(sel.head);
  }

  /** What the exports describe for `view` ({state, tokens, result}): the settings, the tokens and every head. */
  exportData({ state, tokens, result }) {
    return {
      weights: result.attn_weights,
      heads: this.heatmaps.map((hm) => hm.head),
      queryTokens: tokens,
      keyTokens: tokens,
      maskedRows: result.fully_masked_rows,
      config: {
        d_model: result.d_model,
        num_heads: result.num_heads,
        d_head: result.d_head,
        seed: state.seed,
        is_causal: state.causal,
        positional: state.positional,
        text: state.text,
        precision: result.precision,
        source: SOURCE,
      },
    };
  }

  /** What the PNG export composes for `view`: title, subtitle, one panel per head, the legend, the ink. */
  snapshotParts(view) {
    return {
      title: `Multi-head attention: "${view.state.text}"`,
      subtitle: this.els.summary.textContent,
      panels: this.heatmaps.map((hm) => ({ canvas: hm.snapshotCanvas(), caption: hm.name })),
      legend: this.els.legend,
      ink: readTheme(this.els.heads).ink,
    };
  }
}
