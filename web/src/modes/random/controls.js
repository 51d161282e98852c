// The random-embeddings mode's form: the settings, the extra mask's fields, the token chips and
// the alert that says why a setting was refused. Reads and writes the DOM only; what the values
// mean is random_state.js's and explain/explain_state.js's.
import { h as element } from '../../explain/dom.js';
import { tokenize } from '../../chrome/tokenize.js';
import { sentence, setText } from '../../chrome/alerts.js';

const NUMBER_FIELDS = Object.freeze(['d_model', 'num_heads', 'seed']);
/** Token chips shown at most; beyond, an ellipsis. */
const MAX_CHIPS = 80;

export class RandomControls {
  /** @param {Document} doc the page */
  constructor(doc) {
    const $ = (id) => doc.getElementById(id);
    const input = (id) => /** @type {HTMLInputElement} */ ($(id));
    const select = (id) => /** @type {HTMLSelectElement} */ ($(id));
    this.els = {
      form: $('controls'),
      text: input('text'),
      d_model: input('d_model'),
      num_heads: input('num_heads'),
      seed: input('seed'),
      causal: input('causal'),
      positional: input('positional'),
      preset: select('preset'),
      mask: select('mask'),
      maskPad: input('mask-pad'),
      maskWindow: input('mask-window'),
      maskPadField: $('mask-pad-field'),
      maskWindowField: $('mask-window-field'),
      maskDrawnField: $('mask-drawn-field'),
      maskDrawnCount: $('mask-drawn-count'),
      maskClear: $('mask-clear'),
      tokensLine: $('tokens-line'),
      alert: $('alert'),
      notes: $('notes'),
    };
    /** The text whose chips are shown (the input event and the update both ask: drawn once). */
    this.chipsText = null;
  }

  /** The presets as options of the preset select. */
  fillPresets(presets) {
    for (const [name, p] of Object.entries(presets)) {
      const opt = this.els.preset.ownerDocument.createElement('option');
      opt.value = name;
      opt.textContent = p.label;
      this.els.preset.append(opt);
    }
  }

  set(state) {
    const { els } = this;
    els.text.value = state.text;
    els.d_model.value = String(state.d_model);
    els.num_heads.value = String(state.num_heads);
    els.seed.value = String(state.seed);
    els.causal.checked = state.causal;
    els.positional.checked = state.positional;
  }

  /** The controls' raw values (random_state.js readControls checks them). */
  raw() {
    const { els } = this;
    return {
      text: els.text.value,
      d_model: els.d_model.value,
      num_heads: els.num_heads.value,
      seed: els.seed.value,
      causal: els.causal.checked,
      positional: els.positional.checked,
    };
  }

  /** The mask fields' raw values (explain_state.js readMaskControls checks them). */
  rawMask() {
    const { els } = this;
    return { mask: els.mask.value, pad: els.maskPad.value, window: els.maskWindow.value };
  }

  /** Shows the mask controls for an explain state (the number fields only for their mask). */
  setMask(value) {
    this.els.mask.value = value.mask;
    this.els.maskPad.value = String(value.pad);
    this.els.maskWindow.value = String(value.window);
    this.showMaskFields(value.drawn.length);
  }

  /** Shows the field of the chosen mask only; `drawnCount` cells are masked by hand. */
  showMaskFields(drawnCount) {
    const { els } = this;
    els.maskPadField.hidden = els.mask.value !== 'padding';
    els.maskWindowField.hidden = els.mask.value !== 'window';
    els.maskDrawnField.hidden = els.mask.value !== 'drawn';
    const k = drawnCount;
    setText(
      els.maskDrawnCount,
      `${k} cell${k === 1 ? '' : 's'} masked: click a cell of any grid to mask it or let it attend again.`,
    );
  }

  /**
   * The number fields' spinners stop where the page's check does (index.html's max is a start),
   * and a field the chosen mask does not use is kept within it, so that choosing that mask later
   * starts from a valid value (one token allows window 0 only).
   */
  limitMaskFields(limits) {
    const { els } = this;
    /** @type {Array<[HTMLInputElement, string, string]>} */
    const fields = [
      [els.maskPad, 'pad', 'padding'],
      [els.maskWindow, 'window', 'window'],
    ];
    for (const [field, key, kind] of fields) {
      if (field.max !== String(limits[key])) field.max = String(limits[key]);
      if (els.mask.value !== kind && Number(field.value) > limits[key])
        field.value = String(limits[key]);
    }
  }

  /** The mask field named by `key` ('pad' or 'window') is refused. */
  markMaskInvalid(key) {
    (key === 'pad' ? this.els.maskPad : this.els.maskWindow).setAttribute('aria-invalid', 'true');
  }

  /**
   * The alert: `message` as a sentence, then `last` (what the grids still show); every field the
   * message names is marked invalid, the others valid again.
   */
  showAlert(message, last = '') {
    const { els } = this;
    els.alert.textContent = sentence(message) + last;
    for (const key of [...NUMBER_FIELDS, 'text']) {
      const mentioned =
        message.includes(`${key}=`) ||
        message.startsWith(`${key} `) ||
        (key === 'text' && /sentence/i.test(message));
      if (mentioned) els[key].setAttribute('aria-invalid', 'true');
      else els[key].removeAttribute('aria-invalid');
    }
  }

  /** No alert; no field marked invalid (the mask fields with `masks`). */
  clearAlert({ masks = false } = {}) {
    const { els } = this;
    els.alert.textContent = '';
    for (const key of [...NUMBER_FIELDS, 'text']) els[key].removeAttribute('aria-invalid');
    if (masks) {
      els.maskPad.removeAttribute('aria-invalid');
      els.maskWindow.removeAttribute('aria-invalid');
    }
  }

  /**
   * The tokens as separate chips, so the splitting rule is visible. Text nodes only. The chips are
   * kept and only those whose token changed are rewritten: a keystroke changes one token, and
   * rebuilding 64 chips made the frame restyle and lay out every one.
   */
  showTokens(text = this.els.text.value) {
    if (text === this.chipsText) return;
    this.chipsText = text;
    const tokens = tokenize(text);
    const line = this.els.tokensLine;
    let label = line.firstElementChild;
    if (!label?.classList.contains('tokens-count'))
      line.replaceChildren((label = element('span', { className: 'tokens-count' })));
    setText(label, `${tokens.length} token${tokens.length === 1 ? '' : 's'}: `);
    let node = label.nextSibling;
    for (const t of tokens.slice(0, MAX_CHIPS)) {
      if (node?.nodeType !== 1)
        node = line.insertBefore(element('span', { className: 'token' }), node);
      setText(node, t);
      node = node.nextSibling;
    }
    while (node) {
      const next = node.nextSibling;
      node.remove();
      node = next;
    }
    if (tokens.length > MAX_CHIPS) line.append(' …');
  }
}
