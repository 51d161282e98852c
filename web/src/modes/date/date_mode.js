// The "Date translator" mode: a trained date-translation Transformer (mod.DateModel, see
// docs/js-api.md) runs on every keystroke; its attention is drawn per head for the chosen
// layer and kind, and for every layer at once as small multiples, one enlarged on request.
//
// The model's bytes come from date_model.js, a classic script written by scripts/build_web.mjs
// (base64 of web/date_model.safetensors, plus web/date_model_heads.json when present). It is
// added to the page only when this mode is first opened, so the page's first load stays small,
// and it works from file:// (no fetch). Tokens are shown as text only (textContent, fillText).
/* global MHA_DATE_MODEL */
import { drawLegend } from '../../draw/legend.js';
import { HeadHeatmap, readTheme } from '../../draw/heatmap.js';
import { headTable } from '../../draw/table.js';
import { weightToRgb } from '../../draw/color.js';
import { formatWeight } from '../../draw/format.js';
import { DATE_DEFAULTS, LAST_LAYER, dateStateToHash } from '../../chrome/date_state.js';
import {
  KINDS, base64ToBytes, dateReadout, headKey, kindInfo, layerCount, layerView,
  checkedHead, metadataJson, modelSummary, readRoles, roleFindings, rolesChecksum, safetensorsMetadata, sourceLength, thumbCell, tooLongMessage,
} from './date_view.js';

const MODEL_SCRIPT = 'date_model.js';

function errorMessage(e) {
  return e instanceof Error ? e.message : String(e);
}

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Adds <script src="date_model.js"> once; resolves with the global it defines. */
function loadModelScript() {
  return new Promise((resolve, reject) => {
    if (typeof MHA_DATE_MODEL === 'object' && MHA_DATE_MODEL) {
      resolve(MHA_DATE_MODEL);
      return;
    }
    const s = document.createElement('script');
    s.src = MODEL_SCRIPT;
    s.addEventListener('load', () => {
      if (typeof MHA_DATE_MODEL === 'object' && MHA_DATE_MODEL) resolve(MHA_DATE_MODEL);
      else reject(new Error(`${MODEL_SCRIPT} loaded but holds no model`));
    });
    s.addEventListener('error', () => {
      s.remove();
      reject(new Error(
        `${MODEL_SCRIPT} is not next to index.html: this build of the page has no date model ` +
          '(web/date_model.safetensors was missing when scripts/build_web.mjs ran)',
      ));
    });
    document.body.append(s);
  });
}

export class DateMode {
  /**
   * @param {object} p
   * @param {() => Promise<object>} p.getModule the full wasm module (with DateModel), loaded on
   *   first call
   * @param {(mod: object) => void} [p.afterUpdate] called with that module after every
   *   translation attempt (memory stats)
   * @param {() => string} [p.hashSuffix] appended to the address it writes (e.g. "&embed=1")
   * @param {(result: object, kind: string, layer: number) => void} [p.afterRedraw] called when a
   *   translation, kind or layer is drawn (the explain views' combined grids follow it)
   */
  constructor({ getModule, afterUpdate = () => {}, hashSuffix = () => '', afterRedraw = () => {} }) {
    const $ = (id) => document.getElementById(id);
    this.els = {
      panel: $('date-panel'),
      form: $('date-controls'),
      text: $('date-text'),
      kind: $('date-kind'),
      layer: $('date-layer'),
      output: $('date-output'),
      outputNote: $('date-output-note'),
      alert: $('date-alert'),
      notes: $('date-notes'),
      summary: $('date-summary'),
      modelInfo: $('date-model-info'),
      legend: $('date-legend'),
      readout: $('date-readout'),
      headsTitle: $('date-heads-title'),
      axes: $('date-axes'),
      heads: $('date-heads'),
      overview: $('date-overview'),
      overviewHelp: $('date-overview-help'),
      allOn: $('date-all-on'),
      findings: $('date-findings'),
      zoom: $('date-zoom'),
    };
    this.readoutHint = this.els.readout.textContent;
    this.getModule = getModule;
    this.afterUpdate = afterUpdate;
    this.hashSuffix = hashSuffix;
    this.afterRedraw = afterRedraw;
    this.state = { ...DATE_DEFAULTS };
    this.model = null;
    this.roles = new Map();
    this.yearHead = null;
    this.loading = null;
    this.active = false;
    /** The translation on screen: replaced only by a successful translate(). */
    this.result = null;
    this.grids = [];
    this.holders = [];
    this.gridsKey = null;
    this.zoomGrid = null;
    this.zoomHolder = null;
    this.zoomKey = null;
    this.zoomed = null; // {kind, layer, head}
    this.selection = null;
    this.locked = false; // the selection stays when the pointer or the focus leaves
    this.wired = false;
    this.hashTimer = 0;
    this.widths = { heads: 0, zoom: 0 };
    this.theme = null;
    /** The small multiples' buttons and canvases, built once per model: [{kind, layer, head, button, canvas}]. */
    this.thumbs = null;
    /** Hidden tables still to build (see scheduleTables). */
    this.pendingTables = [];
    this.tablesFrame = 0;
    this.tablesTimer = 0;
    this.els.panel.dataset.tables = 'ready'; // none pending
  }

  /** Shows this mode with `state` (from the address or the tab); loads the model the first time. */
  async enter(state, notes = []) {
    this.active = true;
    this.state = { ...this.state, ...state };
    this.els.text.value = this.state.date;
    this.els.kind.value = this.state.kind;
    this.showNotes(notes);
    this.writeHash({ now: true });
    this.wire();
    drawLegend(this.els.legend);
    if (!(await this.load()) || !this.active) return;
    this.fillLayers();
    this.checkOff();
    this.buildOverview();
    this.update();
    // Widths once the first translation is on screen (the small multiples set the zoom's width).
    this.measure();
    this.layout();
    this.writeHash({ now: true }); // with the layer resolved (no layer in the address: the last)
    this.setState('ready');
  }

  leave() {
    this.active = false;
    clearTimeout(this.hashTimer);
  }

  /** The current settings (for the address). */
  hash() {
    return dateStateToHash(this.state);
  }

  wire() {
    if (this.wired) return;
    this.wired = true;
    const { form, text, kind, layer } = this.els;
    text.addEventListener('input', () => this.onInput());
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.onInput();
    });
    kind.addEventListener('change', () => {
      this.state.kind = kind.value;
      this.fillLayers();
      this.redraw();
    });
    this.els.allOn.addEventListener('click', () => {
      this.state.off = [];
      this.syncOff();
      this.update();
      this.writeHash();
    });
    layer.addEventListener('change', () => {
      this.state.layer = Number(layer.value);
      this.redraw();
    });
    // Widths and label colours are read here, not on every keystroke: reading them forces a
    // style and layout pass in the middle of an update.
    let frame = 0;
    new ResizeObserver(() => {
      const heads = this.els.heads.clientWidth;
      const zoom = this.els.zoom.clientWidth;
      if (heads === this.widths.heads && zoom === this.widths.zoom) return;
      this.widths = { heads, zoom };
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => this.layout());
    }).observe(this.els.panel);
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
      this.theme = null;
      drawLegend(this.els.legend);
      this.layout();
    });
  }

  /** Reads the widths and label colours now (on entering the mode, and after a resize). */
  measure() {
    this.widths = { heads: this.els.heads.clientWidth, zoom: this.els.zoom.clientWidth };
    this.theme = readTheme(this.els.heads);
  }

  /** Loads the model once: the bundled bytes → new mod.DateModel. @returns {Promise<boolean>} */
  load() {
    if (!this.loading) {
      this.loading = this.loadOnce().then(
        () => true,
        (e) => {
          this.loading = null; // a later visit may try again
          this.setState('error');
          this.els.summary.textContent = 'The date model is not available.';
          this.showAlert(`The date model could not be loaded: ${errorMessage(e)}`);
          return false;
        },
      );
    }
    return this.loading;
  }

  async loadOnce() {
    this.setState('loading');
    this.els.summary.textContent = 'Loading the date model…';
    const mod = await this.getModule(); // the full module (mha_wasm.js), loaded on first use
    this.mod = mod;
    if (typeof mod.DateModel !== 'function') {
      throw new Error('this build of the attention core has no DateModel; rebuild with ./scripts/build.sh');
    }
    const bundle = await loadModelScript();
    const bytes = base64ToBytes(bundle.safetensors);
    this.model = new mod.DateModel(bytes); // throws on a bad file (e.g. checksum mismatch)
    const meta = safetensorsMetadata(bytes);
    let info = `Model: ${modelSummary(this.model.config, bytes.length, metadataJson(meta, 'training'))}`;
    // Roles measured on another model file (an older training run) would be wrong: not shown.
    const heads = bundle.heads ?? null;
    const measuredOn = rolesChecksum(heads);
    const checksum = typeof this.model.checksum === 'string' ? this.model.checksum.toLowerCase() : null;
    if (heads && measuredOn && checksum && measuredOn !== checksum) {
      info += ` · head roles not shown: they were measured on another model file (xxh64 ${measuredOn}, this one is ${checksum})`;
    } else {
      this.roles = readRoles(heads);
      this.yearHead = checkedHead(heads, 'year_head');
      this.els.findings.replaceChildren(...roleFindings(heads).map((f) => el('li', '', f)));
    }
    this.els.modelInfo.textContent = info;
    this.zoomed ??= this.defaultZoom();
    this.els.panel.dataset.maxSourceLength = String(this.model.maxSourceLength);
    this.els.overviewHelp.textContent =
      'Every head of every layer, small, on the same colour scale. Select one to enlarge it' +
      (this.roles.size ? ', with its measured role.' : '.');
  }

  /** The head enlarged at first: the measured year head, or a cross-attention head that reads the year. */
  defaultZoom() {
    const cfg = this.model.config;
    if (this.yearHead) return this.yearHead;
    for (const [key, role] of this.roles) {
      const [kind, layer, head] = key.split('/');
      if (kind === 'cross' && /year/i.test(role.role ?? '')) return { kind, layer: Number(layer), head: Number(head) };
    }
    return { kind: 'cross', layer: Math.max(0, cfg.num_decoder_layers - 1), head: 0 };
  }

  setState(s) {
    this.els.panel.dataset.state = s;
  }

  /** The layer select, for the chosen kind; an out-of-range layer becomes the last one, with a note. */
  fillLayers() {
    if (!this.model) return;
    const cfg = this.model.config;
    const count = this.state.kind === 'encoder_self' ? cfg.num_encoder_layers : cfg.num_decoder_layers;
    if (this.state.layer === LAST_LAYER) this.state.layer = count - 1;
    if (this.state.layer >= count) {
      this.addNote(`The model has ${count} ${kindInfo(this.state.kind).label.toLowerCase()} layers (0–${count - 1}); showing layer ${count - 1}.`);
      this.state.layer = count - 1;
    }
    const options = [];
    for (let l = 0; l < count; l++) {
      const o = el('option', '', `Layer ${l}${l === 0 ? ' (first)' : l === count - 1 ? ' (last)' : ''}`);
      o.value = String(l);
      options.push(o);
    }
    this.els.layer.replaceChildren(...options);
    this.els.layer.value = String(this.state.layer);
  }

  onInput() {
    if (!this.model) return;
    this.update();
  }

  /**
   * Translates the text box and redraws; a failure keeps the last view and says why.
   * The time it took (translation, grids, tables, small multiples) is on #date-summary as data-ms.
   */
  update() {
    const t0 = performance.now();
    let drawn = false;
    try {
      drawn = this.translateAndDraw();
      return drawn;
    } finally {
      this.showTiming(performance.now() - t0, drawn);
      this.afterUpdate(this.mod);
    }
  }

  translateAndDraw() {
    const text = this.els.text.value;
    const max = this.model.maxSourceLength;
    const length = sourceLength(text);
    let result;
    if (length === 0) {
      // Nothing to read: the grids keep the last translation (their heading names its input).
      this.clearAlert();
      this.els.output.textContent = '';
      this.els.output.classList.remove('stale');
      this.els.outputNote.textContent = 'Type a date: the model’s output appears here as you type.';
      this.state.date = '';
      this.writeHash();
      return false;
    }
    if (length > max) {
      this.fail(tooLongMessage(length, max));
      return false;
    }
    try {
      const off = this.state.off ?? [];
      result = off.length
        ? this.model.translate(text, { ablated: off.map(parseHeadKey) })
        : this.model.translate(text);
    } catch (e) {
      this.fail(errorMessage(e));
      return false;
    }
    this.clearAlert();
    this.result = result;
    this.state.date = text; // the address keeps the last text the model could read
    this.showOutput(result, null);
    this.redraw();
    this.writeHash();
    return true;
  }

  fail(message) {
    const last = this.result
      ? ` The output and the grids still show the last input the model read, “${this.result.input}”.`
      : '';
    this.showAlert(message + last);
    this.els.text.setAttribute('aria-invalid', 'true');
    if (this.result) this.showOutput(this.result, this.result.input);
  }

  showOutput(result, staleFor) {
    const { output } = this.els;
    output.textContent = result.output;
    output.classList.toggle('stale', staleFor !== null);
    const eos = result.output_tokens[result.output_tokens.length - 1] === '<eos>';
    const chars = result.output_tokens.length - (eos ? 1 : 0);
    let note = eos
      ? `${chars} character${chars === 1 ? '' : 's'}, then <eos>`
      : `stopped after ${chars} characters (max_target_len) without <eos>; the last row, (cut), is the dropped next prediction`;
    if (result.output === '') note = 'nothing: the model wrote <eos> first';
    if (staleFor !== null) note = `for “${staleFor}”, the last input the model could read`;
    const off = this.state.off ?? [];
    if (off.length) {
      const names = off.map((k) => {
        const { kind, layer, head } = parseHeadKey(k);
        return `${kindInfo(kind).short.toLowerCase()} layer ${layer} head ${head}`;
      });
      note += ` · with ${off.length === 1 ? 'this head' : `${off.length} heads`} switched off: ${names.join(', ')}`;
    }
    this.els.outputNote.textContent = note;
  }

  showTiming(ms, drawn) {
    this.els.summary.dataset.ms = ms.toFixed(2);
    if (!this.result || !drawn) return; // the line keeps describing the view on screen
    const r = this.result;
    // The first view also builds the figures and small multiples; later updates refill them.
    const what = this.drawnOnce ? 'translated and drawn in' : 'first view built in';
    this.drawnOnce = true;
    this.els.summary.textContent =
      `${r.source_tokens.length} input character${r.source_tokens.length === 1 ? '' : 's'} → ` +
      `${r.steps ?? r.output_tokens.length} decoder steps · ${what} ${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
  }

  /** Rebuilds the per-head grids, the small multiples and the enlarged head from this.result. */
  redraw() {
    if (!this.result) return;
    this.writeHash();
    const r = this.result;
    const { kind } = this.state;
    const layer = Math.min(this.state.layer, layerCount(r, kind) - 1);
    const info = kindInfo(kind);
    this.els.headsTitle.textContent = `${info.label}, layer ${layer}: ${r.num_heads} heads, reading “${r.input}”`;
    this.els.axes.textContent = `Rows: ${info.rows}. Columns: ${info.cols}. Each row sums to 1.`;

    const view = layerView(r, kind, layer);
    this.pendingTables = []; // tables of views already replaced: never needed
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
      for (const g of this.grids) g.setData({ result: view, tokens: view.rows, keyTokens: view.cols });
    }
    this.holders.forEach((holder, h) => this.queueTable(holder, view, kind, layer, h));
    this.drawOverview();
    this.drawZoom();
    this.syncOff();
    if (this.selection && (this.selection.group !== 'layer' || this.selection.row >= view.n ||
        this.selection.col >= view.m)) {
      this.selection = null;
      this.locked = false;
    }
    this.layout();
    this.select(this.selection, 'layer');
    this.afterRedraw(r, kind, layer);
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
    const role = this.roles.get(headKey(kind, layer, h));
    if (role?.role) caption.append(el('span', 'head-role', role.role));
    if (role?.ablated) caption.append(el('span', 'head-detail head-ablated', role.ablated));
    // Switch the head off (its output zeroed before out_proj) and see what the model writes then.
    const key = headKey(kind, layer, h);
    const toggle = el('label', 'head-off');
    const box = el('input');
    box.type = 'checkbox';
    box.dataset.offKey = key;
    box.checked = this.isOff(key);
    box.addEventListener('change', () => this.setOff(key, box.checked));
    toggle.append(box, ' switch this head off');
    caption.append(toggle);
    figure.classList.toggle('is-off', this.isOff(key));
    const name = `${info.label}, layer ${layer}, head ${h}`;
    const grid = new HeadHeatmap({
      head: h, result: view, tokens: view.rows, keyTokens: view.cols, name,
      onSelect: (sel) => this.pointOrMove(sel, group),
      onActivate: (cell) => this.toggleLock(cell, group),
      onClear: () => {
        this.locked = false;
        this.select(null, group);
      },
    });
    Object.assign(grid.canvas.dataset, { kind, layer: String(layer) });
    const scroller = el('div', 'grid-scroll');
    scroller.append(grid.element);
    const holder = el('div', 'visually-hidden table-holder');
    figure.append(caption, scroller, holder);
    return { figure, grid, holder };
  }

  /** Puts head h's table of `view` into `holder`, just after the next frame (scheduleTables). */
  queueTable(holder, view, kind, layer, h) {
    const info = kindInfo(kind);
    this.pendingTables.push(() => {
      const table = headTable(h, view.attn_weights, view.fully_masked_rows, view.rows, view.cols, {
        title: `${info.label}, layer ${layer}, head ${h} attention weights`,
        note: `rows: ${info.rows}; columns: ${info.cols}`,
      });
      Object.assign(table.dataset, { kind, layer: String(layer) });
      holder.replaceChildren(table);
    });
    this.scheduleTables();
  }

  /**
   * The hidden tables (the grids' accessible twins) are built just after the frame that shows
   * the new grids, so a keystroke's time is the translation and what is seen; typing faster
   * than that skips the tables of inputs already replaced. #date-panel[data-tables] says
   * "pending" or "ready"; #date-summary[data-tables-ms] is how long they took.
   */
  scheduleTables() {
    this.els.panel.dataset.tables = 'pending';
    cancelAnimationFrame(this.tablesFrame);
    clearTimeout(this.tablesTimer);
    this.tablesFrame = requestAnimationFrame(() => {
      this.tablesTimer = setTimeout(() => this.flushTables(), 0);
    });
  }

  flushTables() {
    const t0 = performance.now();
    for (const job of this.pendingTables.splice(0)) job();
    this.els.summary.dataset.tablesMs = (performance.now() - t0).toFixed(2);
    this.els.panel.dataset.tables = 'ready';
  }

  /**
   * The small multiples' buttons, one per layer × kind × head of the model, built once: a
   * keystroke only repaints their canvases (see drawOverview).
   */
  buildOverview() {
    if (this.thumbs) return;
    const cfg = this.model.config;
    const counts = { encoder_self: cfg.num_encoder_layers, decoder_self: cfg.num_decoder_layers, cross: cfg.num_decoder_layers };
    this.thumbs = [];
    const rows = [];
    for (const { id: kind, label, short } of KINDS) {
      for (let layer = 0; layer < counts[kind]; layer++) {
        const row = el('div', 'overview-row');
        const thumbs = el('div', 'thumbs');
        for (let head = 0; head < cfg.num_heads; head++) {
          const button = el('button', 'thumb');
          button.type = 'button';
          Object.assign(button.dataset, { kind, layer: String(layer), head: String(head) });
          const role = this.roles.get(headKey(kind, layer, head));
          const name = `${label}, layer ${layer}, head ${head}${role?.role ? `: ${role.role}` : ''}`;
          // The visible text ("h2") starts the accessible name (WCAG 2.5.3, label in name).
          button.setAttribute('aria-label', `h${head}: enlarge ${name}`);
          button.title = name;
          button.setAttribute('aria-pressed', 'false');
          const canvas = el('canvas', 'thumb-canvas');
          canvas.setAttribute('aria-hidden', 'true');
          button.append(canvas, el('span', 'thumb-head', `h${head}`));
          button.addEventListener('click', () => this.zoom({ kind, layer, head }));
          thumbs.append(button);
          this.thumbs.push({ kind, layer, head, button, canvas });
        }
        row.append(el('p', 'overview-title', `${short}, layer ${layer}`), thumbs);
        rows.push(row);
      }
    }
    this.els.overview.replaceChildren(...rows);
    this.els.overview.dataset.count = String(this.thumbs.length);
    this.markZoomed();
  }

  /** Repaints every small multiple from this.result (one pixel per cell, scaled by CSS). */
  drawOverview() {
    const r = this.result;
    const views = new Map();
    for (const t of this.thumbs) {
      const key = `${t.kind}/${t.layer}`;
      if (!views.has(key)) views.set(key, layerView(r, t.kind, t.layer));
      paintThumb(t.canvas, views.get(key), t.head);
    }
  }

  isOff(key) {
    return (this.state.off ?? []).includes(key);
  }

  /** Switches a head off or back on, and translates again. */
  setOff(key, off) {
    const now = (this.state.off ?? []).filter((k) => k !== key);
    if (off) now.push(key);
    this.state.off = now;
    this.syncOff();
    if (this.model) this.update();
    this.writeHash();
  }

  /** Checkboxes, figures and small multiples show which heads are off; the reset button shows when any is. */
  syncOff() {
    const off = this.state.off ?? [];
    for (const box of this.els.panel.querySelectorAll('input[data-off-key]')) {
      box.checked = off.includes(box.dataset.offKey);
      box.closest('figure')?.classList.toggle('is-off', box.checked);
    }
    if (this.els.zoom.dataset.kind) {
      const z = this.els.zoom.dataset;
      this.els.zoom.classList.toggle('is-off', off.includes(headKey(z.kind, z.layer, z.head)));
    }
    for (const t of this.thumbs ?? []) t.button.classList.toggle('is-off', off.includes(headKey(t.kind, t.layer, t.head)));
    this.els.allOn.hidden = off.length === 0;
  }

  /** Drops switched-off heads the model does not have (from an address), with a note. */
  checkOff() {
    const cfg = this.model.config;
    const counts = { encoder_self: cfg.num_encoder_layers, decoder_self: cfg.num_decoder_layers, cross: cfg.num_decoder_layers };
    const ok = [];
    for (const key of this.state.off ?? []) {
      const { kind, layer, head } = parseHeadKey(key);
      if (layer < counts[kind] && head < cfg.num_heads) ok.push(key);
      else this.addNote(`off=${key} in the address: the model has no such head; ignored.`);
    }
    this.state.off = ok;
  }

  markZoomed() {
    const z = this.zoomed;
    for (const t of this.thumbs ?? []) {
      const on = !!z && t.kind === z.kind && t.layer === z.layer && t.head === z.head;
      t.button.setAttribute('aria-pressed', String(on));
    }
  }

  zoom(which) {
    this.zoomed = which;
    this.markZoomed();
    this.drawZoom();
    this.layoutZoom();
  }

  /** The enlarged head: labels, grid, role and table, beside (or under) the small multiples. */
  drawZoom() {
    const r = this.result;
    const z = this.zoomed;
    const box = this.els.zoom;
    if (!z || z.layer >= layerCount(r, z.kind) || z.head >= r.num_heads) {
      this.zoomed = null;
      this.zoomGrid = null;
      this.zoomKey = null;
      delete box.dataset.kind;
      box.replaceChildren(el('p', 'help zoom-hint', 'Select a small grid to see it enlarged here, with its labels.'));
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
    if (this.locked && (!sel || sel.source !== 'keyboard')) return;
    this.select(sel, group);
  }

  /** Click, tap or Enter: locks the cell (it stays when the pointer or the focus leaves), or unlocks it. */
  toggleLock(cell, group) {
    const s = this.selection;
    const same = s && s.group === group && s.head === cell.head && s.row === cell.row && s.col === cell.col;
    this.locked = !(same && this.locked);
    this.select(cell, group);
  }

  /** Hover / keyboard cell: highlights the query row across the chosen layer's heads. */
  select(sel, group) {
    const grids = group === 'zoom' ? (this.zoomGrid ? [this.zoomGrid] : []) : this.grids;
    if (sel) this.selection = { ...sel, group };
    else if (this.selection?.group === group) this.selection = null;
    for (const g of grids) g.setSelection(sel);
    if (!sel) {
      this.els.readout.textContent = this.readoutHint;
      this.els.readout.dataset.locked = 'false';
      return;
    }
    const g = grids.find((x) => x.head === sel.head);
    if (!g) return;
    const w = g.weights[(sel.head * g.n + sel.row) * g.m + sel.col];
    const kind = g.canvas.dataset.kind;
    this.els.readout.textContent = dateReadout(
      kind, Number(g.canvas.dataset.layer), sel.head, g.rowLabels[sel.row], g.colLabels[sel.col], formatWeight(w),
    ) + (this.locked ? ' · locked' : '');
    this.els.readout.dataset.locked = String(this.locked);
  }

  /**
   * The settings into the address, a moment after the last change (history.replaceState on
   * every keystroke would be throttled by the browser, with a console warning).
   */
  writeHash({ now = false } = {}) {
    clearTimeout(this.hashTimer);
    if (!this.active) return;
    if (now) this.replaceHash();
    else this.hashTimer = setTimeout(() => this.replaceHash(), 250);
  }

  replaceHash() {
    if (!this.active) return;
    const hash = `#${this.hash()}${this.hashSuffix()}`;
    if (location.hash === hash) return;
    try {
      history.replaceState(null, '', hash);
    } catch {
      // Sandboxed frames may refuse; the page works without.
    }
  }

  showAlert(message) {
    this.els.alert.textContent = /[.!?”]$/.test(message) ? message : `${message}.`;
  }

  clearAlert() {
    this.els.alert.textContent = '';
    this.els.text.removeAttribute('aria-invalid');
  }

  showNotes(notes) {
    this.els.notes.replaceChildren(...notes.map((n) => el('p', '', n)));
  }

  addNote(note) {
    this.els.notes.append(el('p', '', note));
  }
}

/**
 * A small multiple: one canvas pixel per cell, shown `cell` CSS px wide without smoothing
 * (image-rendering: pixelated), so a keystroke costs one putImageData per head.
 */
function paintThumb(canvas, view, head) {
  const { n, m } = view;
  const cell = thumbCell(n, m);
  if (canvas.width !== Math.max(1, m)) canvas.width = Math.max(1, m);
  if (canvas.height !== Math.max(1, n)) canvas.height = Math.max(1, n);
  canvas.style.width = `${m * cell}px`;
  canvas.style.height = `${n * cell}px`;
  if (n === 0 || m === 0) return;
  canvas.getContext('2d').putImageData(new ImageData(fastHeadPixels(view.attn_weights, head, n, m), m, n), 0, 0);
}

let lut = null;
/** headPixels (color.js) through a 1024-step table of the same viridis colours: small multiples only. */
function fastHeadPixels(weights, head, n, m) {
  if (!lut) {
    lut = new Uint8ClampedArray(1024 * 4);
    for (let i = 0; i < 1024; i++) {
      const [r, g, b] = weightToRgb(i / 1023);
      lut.set([r, g, b, 255], 4 * i);
    }
  }
  const out = new Uint8ClampedArray(n * m * 4);
  const base = head * n * m;
  for (let c = 0; c < n * m; c++) {
    const w = weights[base + c];
    const i = 4 * (w > 0 ? (w < 1 ? Math.round(w * 1023) : 1023) : 0);
    out[4 * c] = lut[i];
    out[4 * c + 1] = lut[i + 1];
    out[4 * c + 2] = lut[i + 2];
    out[4 * c + 3] = 255;
  }
  return out;
}

/** "cross/1/2" → {kind: 'cross', layer: 1, head: 2} (the keys of headKey and of the address). */
function parseHeadKey(key) {
  const [kind, layer, head] = key.split('/');
  return { kind, layer: Number(layer), head: Number(head) };
}
