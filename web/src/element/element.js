// <mha-attention>: the attention grids as a custom element for course pages (Web Components: a
// shadow root, styles adopted from a constructed stylesheet, so it runs under
// `style-src 'self'`). Bundled by scripts/build_web.mjs into dist/mha-attention.js, one classic
// script that loads the wasm it needs from its own folder on first use: the small attention core
// mha_wasm_core.js for the random-embeddings views, the full mha_wasm.js with date_model.js only for
// preset="date-translator" and with english_lm.js only for preset="english"; one instance of each
// per page, shared by every element; each element keeps its own settings, selection and view.
// Attributes (see docs/embedding.md):
//
//   tokens (or text)  the sentence          d-model, num-heads, seed   whole numbers
//   causal, positional  boolean attributes (present = on; "false" / "0" = off)
//   preset            module-08, causal-positions (the page's presets), date-translator or
//                     english (the trained models); other attributes override the preset's values
//   heads             the heads to show, e.g. "0,2" (default: all)
//   cell              a cell locked at start, "head.query.key" (e.g. "0.0.2")
//   kind, layer       date-translator: encoder_self | decoder_self | cross, and the layer;
//                     english: layer (default: every layer)
//   label             the accessible name of the element's figure
//   theme             auto (default: the host page's scheme where it declares one, as a
//                     JupyterLab or VS Code notebook does, else the reader's
//                     prefers-color-scheme; scheme.js), light or dark
//   layout            grid (default: the heads side by side, as many columns as fit the width)
//                     or stack (one head per row, each as wide as the element allows)
//   cell-size         a fixed cell size in CSS px, a whole number from 14 to 44 (default: the
//                     element picks it from its width)
//
// Weights computed elsewhere (a notebook's mha_lab.show, docs/python.md): a child
// <script type="application/json"> holding {"attn_weights": h × n × m nested arrays, "tokens": [m
// strings], "query_tokens"?: [n strings], "title"?: text, "summary"?: text} is drawn as given,
// without the wasm core (no request at all); the attributes heads, cell and label still apply.
// An element with a child <script> draws those weights or says why it cannot: it never computes
// module 08 in their place. The child is read once the HTML parser has passed the element (see
// whenParsed), and again whenever it changes.
//
// Invalid attributes show a message inside the element naming the value; the element keeps
// working and re-renders when an attribute changes.
import { drawLegend } from '../draw/legend.js';
import { HeadHeatmap, readTheme } from '../draw/heatmap.js';
import { el } from '../draw/dom.js';
import { headTableSteps } from '../draw/table.js';
import { scheduleTables } from '../draw/tables.js';
import { readoutText } from '../draw/format.js';
import { CellSelection } from '../draw/selection.js';
import { announceText, createAnnouncer } from '../chrome/announce.js';
import { exportFileName, weightsCsv, weightsJson } from '../chrome/export.js';
import { canvasToPng, composeSnapshot, downloadBlob } from '../chrome/snapshot.js';
import { ATTRIBUTES, attr, readAttributes } from './attributes.js';
import { HeadExperiments } from '../modes/english/experiments.js';
import { GIVEN, childView, dateView, englishView, randomView } from './views.js';
import { ElementShared } from './shared.js';
import { headColumns } from './columns.js';
import { HOST_SCHEME_ATTRIBUTES, hostScheme, resolveScheme } from './scheme.js';

/** CSS px between two heads' frames and of one frame (element.css: .heads gap, .head padding + border). */
const HEAD_GAP = 12;
const HEAD_FRAME = 14;

// Where this script was loaded from (read while it runs: document.currentScript): mha_wasm_core.js,
// mha_wasm.js, date_model.js, english_lm.js and mha-attention.css are beside it (shared.js loads
// them from there). An inline copy of this script (mha_lab.show's outputs), or one bundled into an
// ES module, has no src: those files are looked for beside the page, and a missing one's message
// says so.
const SCRIPT_SRC =
  (typeof document !== 'undefined' &&
    /** @type {HTMLScriptElement|null} */ (document.currentScript)?.src) ||
  '';
const SCRIPT_URL = SCRIPT_SRC || (typeof location !== 'undefined' ? location.href : '');
const SCRIPT_BESIDE = SCRIPT_SRC
  ? 'mha-attention.js'
  : "this page (the element's script has no file of its own: it is inline, or in an ES module bundle)";

/**
 * Calls `then` once the HTML parser has passed `element`, so that its children are whole.
 *
 * While a document is loading, a custom element whose definition is known is created and
 * connected as soon as the parser meets its start tag: its children, and the text of a child
 * <script>, are appended afterwards, in as many pieces as the document arrives in (a text node
 * holding part of a JSON file until the next piece is parsed). So while `document.readyState` is
 * 'loading' the element waits for DOMContentLoaded, which fires once the parser has read the
 * whole document; otherwise (the document parsed, a deferred or module script, an element made
 * by a script or from markup a script inserts, a notebook output in a loaded page) its children are
 * already whole and `then` runs now. Waiting for the end of the document, rather than for a node
 * after the element, holds for an element that is the last thing in its document too.
 * @param {Node} element
 * @param {() => void} then
 */
export function whenParsed(element, then) {
  const doc = element.ownerDocument;
  if (doc?.readyState !== 'loading') then();
  else doc.addEventListener('DOMContentLoaded', () => then(), { once: true });
}

/**
 * The element. Defined (below) with one ElementShared for the page: every element's constructor
 * is given it.
 */
export class MhaAttention extends HTMLElement {
  static get observedAttributes() {
    return ATTRIBUTES;
  }

  /** @param {ElementShared} shared what every element of the page shares (shared.js) */
  constructor(shared) {
    super();
    this.shared = shared;
    const root = this.attachShadow({ mode: 'open' });
    const s = shared.styleSheet();
    if (s) root.adoptedStyleSheets = [s];
    else {
      for (const file of ['common.css', 'mha-attention.css']) {
        const link = el('link');
        link.rel = 'stylesheet';
        link.href = new URL(file, shared.base).href;
        root.append(link);
      }
    }
    this.figure = el('figure', 'mha');
    this.figure.setAttribute('role', 'group');
    this.summary = el('p', 'summary', 'Loading the attention core…');
    // A trained model's findings (the Date translator's claims), under the summary.
    this.notes = el('ul', 'notes');
    this.message = el('p', 'message');
    this.message.setAttribute('role', 'alert');
    this.heads = el('div', 'heads');
    this.legend = el('canvas', 'legend-canvas');
    this.legend.setAttribute('role', 'img');
    this.legend.setAttribute(
      'aria-label',
      'Colour scale: viridis, from weight 0 (dark purple) through 0.5 (teal) to 1 (yellow)',
    );
    const legendBox = el('div', 'legend');
    legendBox.append(this.legend, el('span', 'legend-caption', 'attention weight'));
    legendBox.hidden = true; // until there is a view: an undrawn canvas is 300 × 150 px wide
    this.legendBox = legendBox;
    this.readout = el(
      'p',
      'readout',
      'Point at a cell, or Tab to a grid and use the arrow keys; click, tap or Enter locks it.',
    );
    this.hint = this.readout.textContent;
    this.status = el('p', 'status');
    this.status.setAttribute('role', 'status');
    const tools = el('div', 'tools');
    tools.hidden = true; // until there is a view to save
    this.tools = tools;
    tools.setAttribute('role', 'group');
    tools.setAttribute('aria-label', 'Save the weights shown');
    this.buttons = {};
    for (const [kind, label] of [
      ['png', 'Save PNG'],
      ['csv', 'Save CSV'],
      ['json', 'Save JSON'],
    ]) {
      const b = el('button', 'tool-button', label);
      b.type = 'button';
      b.dataset.export = kind;
      b.addEventListener('click', () => this.exportView(kind));
      tools.append(b);
      this.buttons[kind] = b;
    }
    const bottom = el('div', 'bottom');
    bottom.append(legendBox, tools);
    this.figure.append(
      this.summary,
      this.notes,
      this.message,
      this.readout,
      this.heads,
      bottom,
      this.status,
    );
    root.append(this.figure);
    this.announcer = createAnnouncer(this.figure);

    this.view = null; // {config, heatmaps, queryTokens, keyTokens, result, title}
    this.cells = new CellSelection((cell, info) => this.onCellChange(cell, info));
    this.pending = 0;
    this.renderCount = 0;
    this.lastWidth = 0;
    /** @type {{theme: 'auto'|'light'|'dark', layout: 'grid'|'stack', cellSize: number|null}} */
    this.display = { theme: 'auto', layout: 'grid', cellSize: null };
    this.resizer = new ResizeObserver(() => {
      const w = this.heads.clientWidth;
      if (w !== this.lastWidth) {
        this.lastWidth = w;
        this.layout();
      }
    });
    // theme="auto": the scheme follows the host page's body (a notebook's theme switch) and the
    // reader's prefers-color-scheme; the labels and the legend are drawn on canvases in its ink.
    this.scheme =
      typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
    this.onScheme = () => this.applyScheme();
    this.hostWatch = new MutationObserver(this.onScheme);
    // The weights' child added, changed or removed by a script (after the parser has passed the
    // element: until then schedule() waits) draws the element again.
    this.childWatch = new MutationObserver(() => this.schedule());
    this.parsed = false;
  }

  connectedCallback() {
    this.resizer.observe(this.heads);
    this.scheme?.addEventListener('change', this.onScheme);
    if (document.body) {
      this.hostWatch.observe(document.body, {
        attributes: true,
        attributeFilter: [...HOST_SCHEME_ATTRIBUTES],
      });
    }
    this.applyScheme();
    this.childWatch.observe(this, { childList: true, subtree: true, characterData: true });
    if (this.parsed) this.schedule();
    else {
      whenParsed(this, () => {
        this.parsed = true;
        if (this.isConnected) this.schedule();
      });
    }
  }

  disconnectedCallback() {
    this.resizer.disconnect();
    this.childWatch.disconnect();
    this.hostWatch.disconnect();
    this.scheme?.removeEventListener('change', this.onScheme);
  }

  attributeChangedCallback(name, before, after) {
    if (before === after || !this.isConnected) return;
    if (name === 'label') this.updateLabel();
    else {
      if (name === 'theme') this.applyScheme();
      this.schedule();
    }
  }

  /**
   * Sets data-scheme (light or dark: element.css's colours) from the theme attribute, the host
   * page's declared scheme and prefers-color-scheme (scheme.js); a change redraws the canvases.
   */
  applyScheme() {
    const parent = this.parentElement ?? document.body;
    const scheme = resolveScheme(
      this.getAttribute('theme'),
      hostScheme(document.body, parent ? getComputedStyle(parent).colorScheme : ''),
      this.scheme?.matches ?? false,
    );
    if (this.dataset.scheme === scheme) return;
    this.dataset.scheme = scheme;
    this.layout();
  }

  /** Several attribute changes in one task are drawn once; nothing is drawn before the parser has passed the element. */
  schedule() {
    if (this.pending || !this.parsed) return;
    this.pending = requestAnimationFrame(() => {
      this.pending = 0;
      this.render().catch((e) => this.fail(e instanceof Error ? e.message : String(e)));
    });
  }

  updateLabel() {
    const label = this.getAttribute('label');
    if (label) this.figure.setAttribute('aria-label', label);
    else this.figure.setAttribute('aria-label', this.view ? this.view.title : 'Attention weights');
  }

  /**
   * experiment="…" (preset="english"): that experiment of the English mode alone, open on its
   * question (modes/english/experiments.js), with the measurements the build gave english_lm.js.
   */
  showExperiment(read, model, mod, experiments) {
    this.clearView();
    const section = el('section', 'en-experiments');
    const ex = new HeadExperiments(section, experiments, {
      model: () => model,
      mod: () => mod,
      text: () => read.text,
      modules: this.shared.modules,
    });
    const shown = ex.build(model.checksum, { only: read.experiment });
    if (!shown) {
      this.fail(
        `${attr('experiment', read.experiment)}: this build has no measurement for it (scripts/build_web.mjs reads them from web/).`,
      );
      return;
    }
    this.message.textContent = '';
    this.summary.textContent = 'English language model · an experiment on its heads';
    this.readout.hidden = true;
    this.legendBox.hidden = true;
    this.heads.append(section);
    this.figure.setAttribute(
      'aria-label',
      this.getAttribute('label') || `English language model: ${shown}`,
    );
    this.dataset.state = 'ready';
    this.dispatchEvent(new CustomEvent('mha-ready', { bubbles: true, composed: true }));
  }

  /** Removes the view drawn (its grids, readout and tools): what replaces it cannot be drawn. */
  clearView() {
    this.view = null;
    this.cells.clear();
    this.heads.replaceChildren();
    this.tools.hidden = true;
    this.readout.textContent = this.hint;
    this.updateLabel();
  }

  /** Shows why the attributes cannot be drawn; an earlier valid view, if any, stays on screen. */
  fail(message) {
    if (!this.view) {
      // Nothing drawn: no readout hint, legend or Save buttons under the message.
      this.summary.textContent = 'Nothing to show.';
      this.readout.hidden = true;
      this.legendBox.hidden = true;
      this.tools.hidden = true;
    }
    this.message.textContent = message.startsWith('mha-attention')
      ? message
      : `mha-attention: ${message}`;
    this.dataset.state = 'error';
    this.dispatchEvent(
      new CustomEvent('mha-error', { detail: { message }, bubbles: true, composed: true }),
    );
  }

  async render() {
    const read = readAttributes((n) => this.getAttribute(n));
    if (read.ok === false) {
      this.fail(read.message);
      return;
    }
    const ticket = ++this.renderCount;
    // A child <script> is the weights given to the element: drawn, or a message saying why not;
    // module 08 is computed only for an element without one.
    const data = this.querySelector(':scope > script');
    let built;
    if (data) {
      built = childView(data);
      if (!built.ok && this.view && this.view.config.source !== GIVEN) this.clearView();
    } else if (read.kind === 'date') {
      built = await dateView(await this.shared.fullModule(), read, this.shared);
    } else if (read.kind === 'english' && read.experiment) {
      const mod = await this.shared.fullModule();
      const { model, experiments } = await this.shared.englishModel(mod);
      if (ticket !== this.renderCount) return;
      this.showExperiment(read, model, mod, experiments);
      return;
    } else if (read.kind === 'english') {
      built = await englishView(await this.shared.fullModule(), read, this.shared);
    } else {
      built = randomView(await this.shared.core(), read);
    }
    if (ticket !== this.renderCount) return; // attributes changed meanwhile: a newer render runs
    if (built.ok === false) {
      this.fail(built.message);
      return;
    }
    const bad = (read.heads ?? []).find((x) => x >= built.result.num_heads);
    if (bad !== undefined) {
      this.fail(
        `${attr('heads', this.getAttribute('heads'))} names head ${bad}; this view has heads 0 to ${built.result.num_heads - 1}.`,
      );
      return;
    }
    this.message.textContent = '';
    this.display = read.display;
    this.show(built, read.heads ?? [...Array(built.result.num_heads).keys()]);
    const c = read.cell;
    if (
      c &&
      (c.head >= built.result.num_heads ||
        !this.view.heads.includes(c.head) ||
        c.row >= built.result.n ||
        c.col >= built.result.m)
    ) {
      this.message.textContent =
        `mha-attention: ${attr('cell', this.getAttribute('cell'))} is outside this view ` +
        `(${this.view.heads.length} heads shown, ${built.result.n} × ${built.result.m} cells); no cell is locked.`;
    } else if (c) this.cells.restore(c, true);
    this.dataset.state = 'ready';
    this.dispatchEvent(new CustomEvent('mha-ready', { bubbles: true, composed: true }));
  }

  show(built, heads) {
    const { result } = built;
    const heatmaps = [];
    const holders = [];
    const figures = heads.map((h) => {
      const fig = el('figure', 'head');
      fig.dataset.head = String(h);
      const name = built.headNames?.[h] ?? `Head ${h}`;
      const caption = el('figcaption', 'head-title', name);
      // A trained model's head: its measured role, then its claim or prunable mark (small print).
      const note = built.headNotes?.[h];
      if (note?.role) caption.append(el('span', 'head-role', note.role));
      for (const d of note?.details ?? []) caption.append(el('span', 'head-detail', d));
      fig.append(caption);
      const hm = new HeadHeatmap({
        labels: this.shared.labels,
        head: h,
        name,
        result,
        tokens: built.queryTokens,
        keyTokens: built.keyTokens === built.queryTokens ? undefined : built.keyTokens,
        onSelect: (sel) => this.pointOrMove(sel),
        onActivate: (cell) => this.cells.toggle(cell),
        onClear: () => this.cells.clear(),
      });
      const scroller = el('div', 'grid-scroll');
      scroller.append(hm.element);
      const hidden = el('div', 'visually-hidden');
      holders.push(hidden);
      fig.append(scroller, hidden);
      heatmaps.push(hm);
      return fig;
    });
    this.heads.replaceChildren(...figures);
    // Each head's table, the grid's accessible twin, as on the page (draw/tables.js): at once for
    // small views, once the element is idle up to MAX_TABLE_TOKENS, and none beyond (the keyboard
    // grid and its readout give every value): a view of many large heads would otherwise hold the
    // page while millions of cells are built (#heads data-tables: ready, pending or none).
    scheduleTables(
      this.heads,
      holders,
      (k) =>
        headTableSteps(
          heads[k],
          result.attn_weights,
          result.fully_masked_rows,
          built.queryTokens,
          built.keyTokens,
        ),
      { n: result.n, m: result.m },
    );
    this.view = { ...built, heads, heatmaps, drawn: undefined };
    this.tools.hidden = false;
    this.legendBox.hidden = false;
    this.readout.hidden = false;
    this.summary.textContent = built.summary;
    this.notes.replaceChildren(...(built.notes ?? []).map((t) => el('li', '', t)));
    this.updateLabel();
    this.layout();
    const c = this.cells.cell;
    if (c && (!heads.includes(c.head) || c.row >= result.n || c.col >= result.m))
      this.cells.clear();
    else this.drawSelection(c);
  }

  /**
   * Sizes the grids to the element's width (columns.js: side by side or one per row, at the
   * cell-size given or picked) in the theme's label ink, and redraws the legend.
   */
  layout() {
    if (!this.view) return;
    const theme = readTheme(this.heads);
    drawLegend(this.legend);
    const { heatmaps } = this.view;
    if (!heatmaps.length) return;
    const width = this.heads.clientWidth;
    // The label band (row labels, gaps, outline) does not depend on the width: read it from a
    // layout of the first grid at the whole width.
    if (!heatmaps[0].layout) heatmaps[0].resize(Math.max(200, width - HEAD_FRAME), theme);
    const { columns, availableWidth } = headColumns({
      width,
      count: heatmaps.length,
      m: this.view.result.m,
      labelBand: Math.max(...heatmaps.map((hm) => (hm.layout ?? heatmaps[0].layout).originX)),
      layout: this.display.layout,
      cellSize: this.display.cellSize,
      gap: HEAD_GAP,
      frame: HEAD_FRAME,
    });
    this.heads.dataset.columns = String(columns);
    this.heads.style.gridTemplateColumns = `repeat(${columns}, minmax(0, max-content))`;
    for (const hm of heatmaps) hm.resize(Math.max(120, availableWidth), theme);
  }

  pointOrMove(sel) {
    if (!sel || sel.source === 'pointer') this.cells.hover(sel);
    else if (sel.source === 'focus') {
      if (!this.cells.cell) this.cells.move(sel);
    } else this.cells.move(sel);
  }

  onCellChange(cell, { locked, reason }) {
    this.drawSelection(cell);
    this.readout.dataset.locked = String(locked);
    if (!this.view) return;
    if (cell && reason !== 'hover') {
      const { result, queryTokens, keyTokens } = this.view;
      const w = result.attn_weights[(cell.head * result.n + cell.row) * result.m + cell.col];
      const lock = reason === 'lock' ? 'locked' : reason === 'unlock' ? 'unlocked' : undefined;
      this.announcer.say(
        this.named(
          cell.head,
          announceText(cell.head, queryTokens[cell.row], keyTokens[cell.col], w, { lock }),
        ),
      );
    } else if (reason === 'clear') this.announcer.say('No cell selected.');
    this.dispatchEvent(
      new CustomEvent('mha-cell', { detail: { cell, locked }, bubbles: true, composed: true }),
    );
  }

  drawSelection(cell) {
    if (!this.view) return;
    for (const hm of this.view.heatmaps) hm.setSelection(cell);
    if (!cell) {
      this.readout.textContent = this.hint;
      return;
    }
    const { result, queryTokens, keyTokens } = this.view;
    const w = result.attn_weights[(cell.head * result.n + cell.row) * result.m + cell.col];
    this.readout.textContent =
      this.named(cell.head, readoutText(cell.head, queryTokens[cell.row], keyTokens[cell.col], w)) +
      (this.cells.locked ? ' · locked' : '');
  }

  /** A readout or announcement ("head 5 · …") with the view's name of the head ("layer 1, head 1 · …"). */
  named(head, text) {
    const name = this.view?.headNames?.[head];
    return name ? text.replace(/^head \d+/, name.charAt(0).toLowerCase() + name.slice(1)) : text;
  }

  exportData() {
    const { result, heads, queryTokens, keyTokens, config } = this.view;
    return {
      weights: result.attn_weights,
      heads,
      queryTokens,
      keyTokens,
      maskedRows: result.fully_masked_rows,
      config,
    };
  }

  async exportView(kind) {
    if (!this.view) return;
    const data = this.exportData();
    const stem = data.config.kind
      ? `date-${data.config.kind}-layer${data.config.layer}`
      : data.config.num_layers
        ? `english-layer-${data.config.layer}`
        : 'mha-attention';
    const name = exportFileName(data.config, kind, stem);
    try {
      if (kind === 'csv') downloadBlob(new Blob([weightsCsv(data)], { type: 'text/csv' }), name);
      else if (kind === 'json') {
        downloadBlob(
          new Blob([`${JSON.stringify(weightsJson(data), null, 1)}\n`], {
            type: 'application/json',
          }),
          name,
        );
      } else {
        const style = getComputedStyle(this.figure);
        const canvas = composeSnapshot({
          title: this.view.title,
          subtitle: this.view.summary,
          panels: this.view.heatmaps.map((hm) => ({
            canvas: hm.snapshotCanvas(),
            caption: hm.name,
          })),
          legend: this.legend,
          ink: readTheme(this.heads).ink,
          background:
            style.backgroundColor === 'rgba(0, 0, 0, 0)' ? '#ffffff' : style.backgroundColor,
        });
        downloadBlob(await canvasToPng(canvas), name);
      }
      this.status.textContent = `Saved ${name}.`;
    } catch (e) {
      this.status.textContent = `Could not save: ${e instanceof Error ? e.message : e}`;
    }
  }
}

if (typeof customElements !== 'undefined' && !customElements.get('mha-attention')) {
  const shared = new ElementShared(SCRIPT_URL, SCRIPT_BESIDE);
  customElements.define(
    'mha-attention',
    class extends MhaAttention {
      constructor() {
        super(shared);
      }
    },
  );
}
