// The "Date translator" mode: a trained date-translation Transformer (mod.DateModel, see
// docs/js-api.md) runs on every keystroke; its attention is drawn per head for the chosen
// layer and kind, and for every layer at once as small multiples, one enlarged on request
// (date_grids.js, overview.js), with the combined views under them (combined.js).
//
// The model's bytes come from date_model.js, a classic script written by scripts/build_web.mjs
// (base64 of web/date_model.safetensors, plus web/date_model_heads.json when present). It is
// added to the page only when this mode is first opened, so the page's first load stays small,
// and it works from file:// (no fetch). Tokens are shown as text only (textContent, fillText).
/* global MHA_DATE_MODEL */
import { drawLegend } from '../../draw/legend.js';
import { addNote, errorMessage, sentence, showNotes } from '../../chrome/alerts.js';
import { DATE_DEFAULTS, LAST_LAYER, dateStateToHash, parseDateHash } from './date_state.js';
import { viewToHash } from '../../chrome/address_keys.js';
import {
  checkedHead, dateFigureParts, kindInfo, layerCount, metadataJson, modelSummary, offHeadNames, readRoles,
  roleFindings, rolesChecksum, safetensorsMetadata, sourceLength, tooLongMessage,
} from './date_view.js';
import { DateCombined } from './combined.js';
import { DateGrids } from './date_grids.js';
import { el } from '../../draw/dom.js';
import { base64ToBytes } from '../../compute/bytes.js';
import { parseHeadKey } from './dom.js';

const MODEL_SCRIPT = 'date_model.js';
/** Milliseconds after the last change before the address follows it. */
const ADDRESS_DELAY_MS = 250;

/** The bundled model (date_model.js's global), its script added once by `modules` (WasmModules). */
async function loadModelScript(modules) {
  const bundled = () => (typeof MHA_DATE_MODEL === 'object' && MHA_DATE_MODEL ? MHA_DATE_MODEL : null);
  if (bundled()) return bundled();
  try {
    await modules.loadScript(MODEL_SCRIPT);
  } catch {
    throw new Error(
      `${MODEL_SCRIPT} is not next to index.html: this build of the page has no date model ` +
        '(web/date_model.safetensors was missing when scripts/build_web.mjs ran)',
    );
  }
  if (!bundled()) throw new Error(`${MODEL_SCRIPT} loaded but holds no model`);
  return bundled();
}

export class DateMode {
  /**
   * @param {object} ctx what the page gives every mode (main.js)
   * @param {Document} ctx.doc the page
   * @param {object} ctx.modules the page's wasm loader (compute/wasm_modules.js): the full module
   *   (with DateModel, loadFullModule, on first call) and the model's script
   * @param {object} ctx.labels the page's label cache (draw/labels.js LabelCache), for every grid
   * @param {(stats: object) => void} ctx.showMemoryStats the module's memoryStats() after every
   *   translation attempt
   * @param {object} ctx.address the page's address (chrome/address.js)
   * @param {() => boolean} ctx.embedded whether the page shows the minimal chrome (#embed)
   */
  constructor(ctx) {
    this.id = 'date';
    this.ctx = ctx;
    const $ = (id) => ctx.doc.getElementById(id);
    this.panel = $('date-panel');
    this.shareSlot = $('date-share-slot');
    this.skipTarget = '#date-heads-section';
    /** Save PNG and Save SVG (chrome/page.js): the figure of the layer in the main grid row (figureParts). */
    this.exports = 'figure';
    this.els = {
      panel: this.panel,
      form: $('date-controls'),
      text: /** @type {HTMLInputElement} */ ($('date-text')),
      kind: /** @type {HTMLSelectElement} */ ($('date-kind')),
      layer: /** @type {HTMLSelectElement} */ ($('date-layer')),
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
    this.state = { ...DATE_DEFAULTS };
    this.model = null;
    this.roles = new Map();
    this.yearHead = null;
    this.loading = null;
    this.active = false;
    /** The translation on screen: replaced only by a successful translate(). */
    this.result = null;
    this.grids = new DateGrids(this.els, {
      labels: ctx.labels,
      isOff: (key) => this.isOff(key),
      setOff: (key, off) => this.setOff(key, off),
      roles: () => this.roles,
    });
    /** The combined views (mean, max, rollout), drawn only while open. */
    this.combined = new DateCombined(/** @type {HTMLDetailsElement} */ ($('date-combined')), { getModule: ctx.modules.loadFullModule, labels: ctx.labels });
    this.wired = false;
    this.els.panel.dataset.tables = 'ready'; // none pending
  }

  /** Shows the view of address `hash` (its date, kind, layer and switched-off heads). */
  mount(hash, notes = []) {
    const date = parseDateHash(hash);
    return this.enter(date.state, [...notes, ...date.notes]);
  }

  /** Shown again by its tab: the settings as they were. */
  resume() {
    return this.enter(this.state);
  }

  /** Shows this mode with `state`; loads the model the first time. */
  async enter(state, notes = []) {
    this.active = true;
    this.state = { ...this.state, ...state };
    this.els.text.value = this.state.date;
    this.els.kind.value = this.state.kind;
    showNotes(this.els.notes, notes);
    this.writeHash({ now: true });
    this.wire();
    drawLegend(this.els.legend);
    if (!(await this.load()) || !this.active) return;
    this.fillLayers();
    this.checkOff();
    this.grids.overview.build(this.model.config, this.roles);
    this.grids.overview.markZoomed(this.grids.zoomed);
    this.update();
    // Widths once the first translation is on screen (the small multiples set the zoom's width).
    this.grids.measure();
    this.grids.layout();
    this.writeHash({ now: true }); // with the layer resolved (no layer in the address: the last)
    this.setState('ready');
  }

  unmount() {
    this.active = false;
    this.ctx.address.drop();
  }

  /** The address of the current settings (without "#"). */
  hash({ embed }) {
    return `${dateStateToHash(this.state)}${viewToHash({ embed })}`;
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
      this.grids.markOff(this.state.off);
      this.update();
      this.writeHash();
    });
    layer.addEventListener('change', () => {
      this.state.layer = Number(layer.value);
      this.redraw();
    });
    // Widths and label colours are read here, not on every keystroke: reading them forces a
    // style and layout pass in the middle of an update.
    const { grids } = this;
    let frame = 0;
    new ResizeObserver(() => {
      const heads = this.els.heads.clientWidth;
      const zoom = this.els.zoom.clientWidth;
      if (heads === grids.widths.heads && zoom === grids.widths.zoom) return;
      grids.widths = { heads, zoom };
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => grids.layout());
    }).observe(this.els.panel);
    this.ctx.doc.defaultView.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
      grids.theme = null;
      drawLegend(this.els.legend);
      grids.layout();
    });
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
    const mod = await this.ctx.modules.loadFullModule(); // the full module (mha_wasm.js), loaded on first use
    this.mod = mod;
    if (typeof mod.DateModel !== 'function') {
      throw new Error('this build of the attention core has no DateModel; rebuild with ./scripts/build.sh');
    }
    const bundle = await loadModelScript(this.ctx.modules);
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
    this.grids.zoomed ??= this.defaultZoom();
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
      addNote(this.els.notes, `The model has ${count} ${kindInfo(this.state.kind).label.toLowerCase()} layers (0–${count - 1}); showing layer ${count - 1}.`);
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
      this.ctx.showMemoryStats(this.mod.memoryStats());
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
      note += ` · with ${off.length === 1 ? 'this head' : `${off.length} heads`} switched off: ${offHeadNames(off).join(', ')}`;
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

  /** Redraws the per-head grids, the small multiples and the enlarged head from this.result. */
  redraw() {
    if (!this.result) return;
    this.writeHash();
    const r = this.result;
    const { kind } = this.state;
    const layer = Math.min(this.state.layer, layerCount(r, kind) - 1);
    this.grids.draw(r, kind, layer, this.state.off ?? []);
    this.combined.update(r, kind, layer);
  }

  /**
   * The figure export's parts (chrome/page.js): the kind and layer of the main grid row, for the
   * translation on screen, with the heads switched off and the measured roles.
   */
  figureParts() {
    const r = this.result;
    if (!r) throw new Error('the date translator has not translated anything yet');
    const { kind } = this.state;
    const layer = Math.min(this.state.layer, layerCount(r, kind) - 1);
    return dateFigureParts(r, { kind, layer, off: this.state.off ?? [], roles: this.roles });
  }

  isOff(key) {
    return (this.state.off ?? []).includes(key);
  }

  /** Switches a head off or back on, and translates again. */
  setOff(key, off) {
    const now = (this.state.off ?? []).filter((k) => k !== key);
    if (off) now.push(key);
    this.state.off = now;
    this.grids.markOff(now);
    if (this.model) this.update();
    this.writeHash();
  }

  /** Drops switched-off heads the model does not have (from an address), with a note. */
  checkOff() {
    const cfg = this.model.config;
    const counts = { encoder_self: cfg.num_encoder_layers, decoder_self: cfg.num_decoder_layers, cross: cfg.num_decoder_layers };
    const ok = [];
    for (const key of this.state.off ?? []) {
      const { kind, layer, head } = parseHeadKey(key);
      if (layer < counts[kind] && head < cfg.num_heads) ok.push(key);
      else addNote(this.els.notes, `off=${key} in the address: the model has no such head; ignored.`);
    }
    this.state.off = ok;
  }

  /**
   * The settings into the address, a moment after the last change (history.replaceState on
   * every keystroke would be throttled by the browser, with a console warning).
   */
  writeHash({ now = false } = {}) {
    if (!this.active) return;
    const hashOf = () => (this.active ? this.hash({ embed: this.ctx.embedded() }) : null);
    if (now) this.ctx.address.write(hashOf());
    else this.ctx.address.writeLater(hashOf, ADDRESS_DELAY_MS);
  }

  showAlert(message) {
    this.els.alert.textContent = sentence(message);
  }

  clearAlert() {
    this.els.alert.textContent = '';
    this.els.text.removeAttribute('aria-invalid');
  }
}
