// The "Date translator" mode: a trained date-translation Transformer (mod.DateModel, see
// docs/js-api.md) runs on every keystroke; its attention is drawn per head for the chosen
// layer and kind, and for every layer at once as small multiples, one enlarged on request
// (date_grids.js, overview.js), with the combined views under them (combined.js).
//
// The model's bytes come from date_model.js, a classic script written by scripts/build_web.mjs
// (base64 of web/date_model.safetensors, plus web/date_model_heads.json when present). It is
// added to the page only when this mode is first opened, so the page's first load stays small,
// and it works from file:// (no fetch). Tokens are shown as text only (textContent, fillText).
// What every trained-model mode shares (loading, the address, heads switched off, the alert, the
// timing) is TrainedMode's (modes/trained/trained_mode.js).
import { addNote, errorMessage } from '../../chrome/alerts.js';
import { DATE_DEFAULTS, LAST_LAYER, dateStateToHash, parseDateHash } from './date_state.js';
import {
  checkedHead,
  dateFigureParts,
  kindInfo,
  layerCount,
  metadataJson,
  modelSummary,
  offHeadNames,
  readRoles,
  roleFindings,
  safetensorsMetadata,
  sourceLength,
  tooLongMessage,
} from './date_view.js';
import { DateCombined } from './combined.js';
import { DateGrids } from './date_grids.js';
import { el } from '../../draw/dom.js';
import { parseHeadKey } from './dom.js';
import { TrainedMode, msText } from '../trained/trained_mode.js';

/** Where the date model is: date_model.js alone (its global holds the bytes and the heads file). */
const MODEL_SOURCE = Object.freeze({
  script: 'date_model.js',
  global: 'MHA_DATE_MODEL',
  missing:
    'date_model.js is not next to index.html: this build of the page has no date model ' +
    '(web/date_model.safetensors was missing when scripts/build_web.mjs ran)',
});

/** @extends {TrainedMode<import('../../../../cpp/bindings/wasm/mha_wasm').DateModel>} */
export class DateMode extends TrainedMode {
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
    const $ = (id) => ctx.doc.getElementById(id);
    const panel = $('date-panel');
    const els = {
      panel,
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
    super(ctx, {
      id: 'date',
      panel,
      els,
      name: 'date model',
      rolesName: 'head roles',
      address: { parse: parseDateHash, toHash: dateStateToHash },
      defaults: DATE_DEFAULTS,
      resizeTarget: panel,
    });
    this.shareSlot = $('date-share-slot');
    this.skipTarget = '#date-heads-section';
    /** Save PNG and Save SVG (chrome/page.js): the figure of the layer in the main grid row (figureParts). */
    this.exports = 'figure';
    this.roles = new Map();
    this.yearHead = null;
    this.grids = new DateGrids(this.els, {
      labels: ctx.labels,
      isOff: (key) => this.isOff(key),
      setOff: (key, off) => this.setOff(key, off),
      roles: () => this.roles,
    });
    /** The combined views (mean, max, rollout), drawn only while open. */
    this.combined = new DateCombined(/** @type {HTMLDetailsElement} */ ($('date-combined')), {
      getModule: ctx.modules.loadFullModule,
      labels: ctx.labels,
    });
  }

  /** The text box and the kind select from this.state. */
  showControls() {
    this.els.text.value = this.state.date;
    this.els.kind.value = this.state.kind;
  }

  /** The first view once the model is loaded: the layers, the small multiples, a translation. */
  firstView() {
    this.fillLayers();
    this.checkOff();
    this.grids.overview.build(this.model.config, this.roles);
    this.grids.overview.markZoomed(this.grids.zoomed);
    this.update();
    // Widths once the first translation is on screen (the small multiples set the zoom's width).
    this.grids.measure();
    this.grids.layout();
  }

  /** The text box, the form, the kind and layer selects. */
  wireControls() {
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
    layer.addEventListener('change', () => {
      this.state.layer = Number(layer.value);
      this.redraw();
    });
  }

  /** date_model.js (MODEL_SOURCE). */
  modelSource() {
    return MODEL_SOURCE;
  }

  /** mod.DateModel of the file's bytes. */
  makeModel(mod, bytes) {
    return new mod.DateModel(bytes); // throws on a bad file (e.g. checksum mismatch)
  }

  /** The model line; the measured roles, unless they were measured on another model file. */
  opened(bytes, heads, elsewhere) {
    const meta = safetensorsMetadata(bytes);
    let info = `Model: ${modelSummary(this.model.config, bytes.length, metadataJson(meta, 'training'))}`;
    if (elsewhere) info += ` · ${elsewhere}`;
    else {
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
      if (kind === 'cross' && /year/i.test(role.role ?? ''))
        return { kind, layer: Number(layer), head: Number(head) };
    }
    return { kind: 'cross', layer: Math.max(0, cfg.num_decoder_layers - 1), head: 0 };
  }

  /** The layer select, for the chosen kind; an out-of-range layer becomes the last one, with a note. */
  fillLayers() {
    if (!this.model) return;
    const cfg = this.model.config;
    const count =
      this.state.kind === 'encoder_self' ? cfg.num_encoder_layers : cfg.num_decoder_layers;
    if (this.state.layer === LAST_LAYER) this.state.layer = count - 1;
    if (this.state.layer >= count) {
      addNote(
        this.els.notes,
        `The model has ${count} ${kindInfo(this.state.kind).label.toLowerCase()} layers (0–${count - 1}); showing layer ${count - 1}.`,
      );
      this.state.layer = count - 1;
    }
    const options = [];
    for (let l = 0; l < count; l++) {
      const o = el(
        'option',
        '',
        `Layer ${l}${l === 0 ? ' (first)' : l === count - 1 ? ' (last)' : ''}`,
      );
      o.value = String(l);
      options.push(o);
    }
    this.els.layer.replaceChildren(...options);
    this.els.layer.value = String(this.state.layer);
  }

  /**
   * Translates the text box and redraws (update() times it: translation, grids, tables, small
   * multiples, on #date-summary as data-ms); a failure keeps the last view and says why.
   */
  runAndDraw() {
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
      const off = this.state.off;
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

  /** A refused input: the alert, and the last output marked as the last input's. */
  fail(message) {
    super.fail(message);
    if (this.result) this.showOutput(this.result, this.result.input);
  }

  /** What stays on screen after a refused input. */
  lastShown() {
    return ` The output and the grids still show the last input the model read, “${this.result.input}”.`;
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
    const off = this.state.off;
    if (off.length) {
      note += ` · with ${off.length === 1 ? 'this head' : `${off.length} heads`} switched off: ${offHeadNames(off).join(', ')}`;
    }
    this.els.outputNote.textContent = note;
  }

  /** The summary line: characters, decoder steps and the time of the update. */
  timed(ms, drawn) {
    if (!this.result || !drawn) return; // the line keeps describing the view on screen
    const r = this.result;
    // The first view also builds the figures and small multiples; later updates refill them.
    const what = this.drawnOnce ? 'translated and drawn in' : 'first view built in';
    this.drawnOnce = true;
    this.els.summary.textContent =
      `${r.source_tokens.length} input character${r.source_tokens.length === 1 ? '' : 's'} → ` +
      `${r.steps ?? r.output_tokens.length} decoder steps · ${what} ${msText(ms)} ms`;
  }

  /** Redraws the per-head grids, the small multiples and the enlarged head from this.result. */
  redraw() {
    if (!this.result) return;
    this.writeHash();
    const r = this.result;
    const { kind } = this.state;
    const layer = Math.min(this.state.layer, layerCount(r, kind) - 1);
    this.grids.draw(r, kind, layer, this.state.off);
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
    return dateFigureParts(r, { kind, layer, off: this.state.off, roles: this.roles });
  }

  /** Drops switched-off heads the model does not have (from an address), with a note. */
  checkOff() {
    const cfg = this.model.config;
    const counts = {
      encoder_self: cfg.num_encoder_layers,
      decoder_self: cfg.num_decoder_layers,
      cross: cfg.num_decoder_layers,
    };
    const ok = [];
    for (const key of this.state.off) {
      const { kind, layer, head } = parseHeadKey(key);
      if (layer < counts[kind] && head < cfg.num_heads) ok.push(key);
      else
        addNote(this.els.notes, `off=${key} in the address: the model has no such head; ignored.`);
    }
    this.state.off = ok;
  }
}
