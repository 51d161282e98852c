// mha-lab page: reads the controls (or the URL hash), asks the wasm core for module 08's seeded
// experiment, and draws every head's attention weights as a canvas grid plus a hidden table.
// A second mode, the Date translator (date_mode.js, #mode=date), runs a trained model instead.
// Bundled by scripts/build_web.mjs into one classic script, dist/app.js (file:// safe).
/* global createMhaModule */
import { drawLegend } from './legend.js';
import { HeadHeatmap, readTheme } from './heatmap.js';
import { headTable } from './table.js';
import { formatCount, readoutText } from './format.js';
import { tokenize } from './tokenize.js';
import { DateMode } from './date_mode.js';
import { ExplainPanels } from './explain/explain.js';
import {
  defaultExplain, explainToHash, fitExplain, parseExplainHash, readMaskControls,
} from './explain/explain_state.js';
import { maskFields, toggleCell } from './explain/masks.js';
import { cellAt } from './layout.js';
import { parseDateHash, parseMode } from './date_state.js';
import {
  DEFAULTS,
  PRESETS,
  checkPageLimits,
  parseHash,
  presetOf,
  readControls,
  stateToHash,
} from './state.js';

const $ = (id) => document.getElementById(id);
const els = {
  form: $('controls'),
  text: $('text'),
  d_model: $('d_model'),
  num_heads: $('num_heads'),
  seed: $('seed'),
  causal: $('causal'),
  positional: $('positional'),
  preset: $('preset'),
  mask: $('mask'),
  maskPad: $('mask-pad'),
  maskWindow: $('mask-window'),
  maskPadField: $('mask-pad-field'),
  maskWindowField: $('mask-window-field'),
  maskDrawnField: $('mask-drawn-field'),
  maskDrawnCount: $('mask-drawn-count'),
  maskClear: $('mask-clear'),
  tokensLine: $('tokens-line'),
  alert: $('alert'),
  notes: $('notes'),
  summary: $('summary'),
  params: $('params'),
  legend: $('legend'),
  readout: $('readout'),
  heads: $('heads'),
  coreVersion: $('core-version'),
  tabs: [...document.querySelectorAll('.mode-tab')],
  randomPanel: $('random-panel'),
  datePanel: $('date-panel'),
  skipLink: document.querySelector('.skip-link'),
};
const READOUT_HINT = els.readout.textContent;
const NUMBER_FIELDS = ['d_model', 'num_heads', 'seed'];

let mod = null;
/** The view on screen: {state, tokens, result, heatmaps}. Replaced only by a valid update. */
let view = null;
let selection = null;
/** 'random' (module 08's experiment, the controls above) or 'date' (the Date translator). */
let mode = 'random';
const dateMode = new DateMode({ getModule: () => mod, afterUpdate: () => showMemoryStats() });
/**
 * The explain keys (web/src/explain/explain_state.js): the extra mask, the drawn cells, the
 * switched-off heads. Kept beside `state`, written to the hash after it.
 */
let explainState = defaultExplain();
/** The explain views under the grids (web/src/explain/): built only while open. */
const explain = new ExplainPanels($('explain-panels'), {
  getModule: () => mod,
  onAblate: (off) => {
    explainState = { ...explainState, off };
    update();
  },
});

/** Shows the mask controls for explainState (the number fields only for their mask). */
function setMaskControls(value) {
  els.mask.value = value.mask;
  els.maskPad.value = String(value.pad);
  els.maskWindow.value = String(value.window);
  showMaskFields();
}

function showMaskFields() {
  els.maskPadField.hidden = els.mask.value !== 'padding';
  els.maskWindowField.hidden = els.mask.value !== 'window';
  els.maskDrawnField.hidden = els.mask.value !== 'drawn';
  const k = explainState.drawn.length;
  els.maskDrawnCount.textContent = `${k} cell${k === 1 ? '' : 's'} masked: click a cell of any grid to mask it or let it attend again.`;
}

/**
 * A cell was clicked (or activated from the keyboard): with the drawn mask it toggles that
 * cell's mask; otherwise it locks the cell and the step panel explains it.
 */
function activateCell(cell) {
  if (explainState.mask === 'drawn') {
    explainState = { ...explainState, drawn: toggleCell(explainState.drawn, cell.row, cell.col) };
    update();
  }
  explain.lock(cell);
}

function errorMessage(e) {
  return e instanceof Error ? e.message : String(e);
}

function showAlert(message) {
  const last = view
    ? ` The grids below still show the last valid settings (d_model=${view.state.d_model}, ` +
      `num_heads=${view.state.num_heads}, ${view.tokens.length} tokens).`
    : '';
  els.alert.textContent = (/[.!?]$/.test(message) ? message : `${message}.`) + last;
  for (const key of [...NUMBER_FIELDS, 'text']) {
    const mentioned = message.includes(`${key}=`) || message.startsWith(`${key} `) ||
      (key === 'text' && /sentence/i.test(message));
    if (mentioned) els[key].setAttribute('aria-invalid', 'true');
    else els[key].removeAttribute('aria-invalid');
  }
}

function clearAlert() {
  els.alert.textContent = '';
  for (const key of [...NUMBER_FIELDS, 'text']) els[key].removeAttribute('aria-invalid');
}

function showNotes(notes) {
  els.notes.replaceChildren(
    ...notes.map((n) => {
      const p = document.createElement('p');
      p.textContent = n;
      return p;
    }),
  );
}

function setControls(state) {
  els.text.value = state.text;
  els.d_model.value = String(state.d_model);
  els.num_heads.value = String(state.num_heads);
  els.seed.value = String(state.seed);
  els.causal.checked = state.causal;
  els.positional.checked = state.positional;
}

function rawControls() {
  return {
    text: els.text.value,
    d_model: els.d_model.value,
    num_heads: els.num_heads.value,
    seed: els.seed.value,
    causal: els.causal.checked,
    positional: els.positional.checked,
  };
}

/** The tokens as separate chips, so the splitting rule is visible. Text nodes only. */
function showTokens(text) {
  const tokens = tokenize(text);
  const label = document.createElement('span');
  label.className = 'tokens-count';
  label.textContent = `${tokens.length} token${tokens.length === 1 ? '' : 's'}: `;
  const chips = tokens.slice(0, 80).map((t) => {
    const s = document.createElement('span');
    s.className = 'token';
    s.textContent = t;
    return s;
  });
  els.tokensLine.replaceChildren(label, ...chips);
  if (tokens.length > 80) els.tokensLine.append(' …');
}

/**
 * Diagnostics hook (read by tests/browser/memory.test.mjs): after every update the core's
 * memoryStats() are on #core-version as data-malloc-in-use-bytes and data-wasm-memory-bytes.
 * Read-only numbers; the module itself is not exposed to other scripts.
 */
function showMemoryStats() {
  const stats = mod.memoryStats();
  els.coreVersion.dataset.mallocInUseBytes = String(stats.malloc_in_use_bytes);
  els.coreVersion.dataset.wasmMemoryBytes = String(stats.wasm_memory_bytes);
}

/**
 * Validates the controls and, when they are valid, recomputes and redraws.
 * Invalid settings leave the current view on screen and show why in the alert region.
 * @returns {boolean} whether the view was updated
 */
function update() {
  try {
    return updateView();
  } finally {
    showMemoryStats();
  }
}

function updateView() {
  showTokens(els.text.value);
  const read = readControls(rawControls());
  if (!read.ok) {
    showAlert(read.message);
    return false;
  }
  const { state, tokens } = read;
  const masks = readMaskControls(
    { mask: els.mask.value, pad: els.maskPad.value, window: els.maskWindow.value }, tokens.length);
  if (!masks.ok) {
    showAlert(masks.message);
    (masks.key === 'pad' ? els.maskPad : els.maskWindow).setAttribute('aria-invalid', 'true');
    return false;
  }
  const explained = fitExplain({ ...explainState, ...masks.value }, tokens.length, state.num_heads);
  const fields = maskFields(explained, tokens.length);
  let result;
  let request;
  try {
    // The module is the authority on (d_model, num_heads): zero, negative or non-dividing
    // head counts throw an Error that names the values, shown as is.
    const params = mod.parameterCount({ d_model: state.d_model, num_heads: state.num_heads });
    const limitMessage = checkPageLimits(state);
    if (limitMessage) {
      showAlert(limitMessage);
      return false;
    }
    request = {
      seed: state.seed,
      tokens: tokens.length,
      d_model: state.d_model,
      num_heads: state.num_heads,
      positional: state.positional,
      is_causal: state.causal,
      ...fields,
    };
    result = mod.numpyExperiment(request);
    result.parameter_count ??= params;
  } catch (e) {
    showAlert(errorMessage(e));
    return false;
  }
  clearAlert();
  els.maskPad.removeAttribute('aria-invalid');
  els.maskWindow.removeAttribute('aria-invalid');
  explainState = explained;
  showMaskFields();
  render(state, tokens, result);
  explain.update({ state, tokens, result, request, explain: explainState, maskFields: fields });
  writeHash(state);
  els.preset.value = presetOf(state) ?? '';
  return true;
}

function render(state, tokens, result) {
  const figures = [];
  const heatmaps = [];
  const dHead = result.d_head;
  for (let h = 0; h < result.num_heads; h++) {
    const figure = document.createElement('figure');
    figure.className = 'head';
    figure.dataset.head = String(h);
    if (explainState.off.includes(h)) figure.classList.add('is-off');
    const caption = document.createElement('figcaption');
    const title = document.createElement('span');
    title.className = 'head-title';
    title.textContent = `Head ${h}`;
    const detail = document.createElement('span');
    detail.className = 'head-detail';
    detail.textContent = ` · Q, K, V columns ${h * dHead}–${(h + 1) * dHead - 1}`;
    caption.append(title, detail);
    const hm = new HeadHeatmap({ head: h, result, tokens, onSelect: select });
    // A click locks the cell: the explain section shows how its weight is made.
    hm.canvas.addEventListener('click', (e) => {
      const c = hm.layout && cellAt(hm.layout, hm.n, hm.m, e.offsetX, e.offsetY);
      if (c) activateCell({ head: h, row: c.row, col: c.col });
    });
    const scroller = document.createElement('div');
    scroller.className = 'grid-scroll';
    scroller.append(hm.canvas);
    const hidden = document.createElement('div');
    hidden.className = 'visually-hidden table-holder';
    hidden.append(headTable(h, result.attn_weights, result.fully_masked_rows, tokens, tokens));
    figure.append(caption, scroller, hidden);
    figures.push(figure);
    heatmaps.push(hm);
  }
  els.heads.replaceChildren(...figures);
  view = { state, tokens, result, heatmaps };
  layout();

  els.summary.textContent =
    `n = ${tokens.length} token${tokens.length === 1 ? '' : 's'} · d_model = ${result.d_model} · ` +
    `num_heads = ${result.num_heads} · d_head = ${dHead}` +
    `${state.causal ? ' · causal' : ''}${state.positional ? ' · + positions' : ''} · seed ${state.seed}`;
  els.params.textContent =
    `Parameters: 4 · d_model² = ${formatCount(result.parameter_count)} ` +
    '(Wq, Wk, Wv, Wo; the same for every valid num_heads)';
  els.params.dataset.count = String(result.parameter_count);

  if (selection && (selection.row >= tokens.length || selection.col >= tokens.length ||
      selection.head >= result.num_heads)) {
    selection = null;
  }
  select(selection);
}

/** Sizes every grid to the width the heads area has now. */
function layout() {
  if (!view) return;
  const style = getComputedStyle(els.heads);
  const width = els.heads.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  // Each figure has a little padding of its own (see style.css, .head).
  const available = Math.max(240, width - 16);
  const theme = readTheme(els.heads);
  for (const hm of view.heatmaps) hm.resize(available, theme);
}

/** The shared selection: the hovered / focused cell, whose query row is highlighted in every head. */
function select(sel) {
  const same = (a, b) => a === b || (a && b && a.head === b.head && a.row === b.row && a.col === b.col);
  // Mouse moves inside one cell change nothing: skip the redraw.
  if (view && view.drawnSelection !== undefined && same(sel, view.drawnSelection)) return;
  selection = sel;
  if (!view) return;
  for (const hm of view.heatmaps) hm.setSelection(sel);
  view.drawnSelection = sel;
  if (!sel) {
    els.readout.textContent = READOUT_HINT;
    delete els.readout.dataset.head;
    return;
  }
  const { tokens, result } = view;
  const { n, m } = result;
  const w = result.attn_weights[(sel.head * n + sel.row) * m + sel.col];
  let text = readoutText(sel.head, tokens[sel.row], tokens[sel.col], w);
  if (result.fully_masked_rows[sel.head * n + sel.row] === 1) text += ' (every key of this row is masked)';
  els.readout.textContent = text;
  els.readout.dataset.head = String(sel.head);
}

function writeHash(state) {
  if (mode !== 'random') return;
  const hash = `#${stateToHash(state)}${explainToHash(explainState)}`;
  if (location.hash === hash) return;
  try {
    history.replaceState(null, '', hash);
  } catch {
    // Some embeddings (sandboxed frames) refuse history changes; the page works without.
  }
}

function applyHash(hash) {
  const wanted = parseMode(hash);
  if (wanted.mode === 'date') {
    const date = parseDateHash(hash);
    showMode('date');
    dateMode.enter(date.state, date.notes);
    return;
  }
  showMode('random');
  const parsed = parseHash(hash);
  const { state } = parsed;
  const parsedExplain = parseExplainHash(hash, state, tokenize(state.text));
  explainState = parsedExplain.value;
  const notes = [...wanted.notes, ...parsed.notes, ...parsedExplain.notes];
  setControls(state);
  setMaskControls(explainState);
  showNotes(notes);
  if (!update() && !view) {
    // Settings the hash parser accepted but the module refused: fall back to the defaults.
    showNotes([...notes, 'The settings in the address could not be shown; showing the defaults.']);
    setControls(DEFAULTS);
    explainState = defaultExplain();
    setMaskControls(explainState);
    update();
  }
}

/** Shows one mode's panel and marks its tab (tabs pattern: the selected tab is the Tab stop). */
function showMode(next) {
  mode = next;
  for (const tab of els.tabs) {
    const on = tab.dataset.mode === next;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
  }
  els.randomPanel.hidden = next !== 'random';
  els.datePanel.hidden = next !== 'date';
  els.skipLink.href = next === 'date' ? '#date-heads-section' : '#heads-section';
  if (next !== 'date') dateMode.leave();
}

/** A tab was chosen: switch, keeping each mode's own settings. */
function switchMode(next) {
  if (next === mode) return;
  if (next === 'date') {
    showMode('date');
    dateMode.enter(dateMode.state);
    return;
  }
  showMode('random');
  if (view) {
    writeHash(view.state);
    update();
  } else {
    applyHash('');
  }
}

function wireTabs() {
  els.tabs.forEach((tab, i) => {
    tab.addEventListener('click', () => switchMode(tab.dataset.mode));
    tab.addEventListener('keydown', (e) => {
      const last = els.tabs.length - 1;
      const to = { ArrowRight: i === last ? 0 : i + 1, ArrowLeft: i === 0 ? last : i - 1, Home: 0, End: last }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      els.tabs[to].focus();
      switchMode(els.tabs[to].dataset.mode);
    });
  });
}

function debounce(fn, ms) {
  let t = 0;
  return () => {
    clearTimeout(t);
    t = setTimeout(fn, ms);
  };
}

async function start() {
  drawLegend(els.legend);
  for (const [name, p] of Object.entries(PRESETS)) {
    const opt = document.createElement('option');
    opt.value = name;
    opt.textContent = p.label;
    els.preset.append(opt);
  }
  if (typeof createMhaModule !== 'function') {
    els.summary.textContent = 'The attention core is not available.';
    showAlert('The attention core (mha_wasm.js) did not load, so nothing can be computed. ' +
      'Rebuild the page with ./scripts/build.sh and keep mha_wasm.js next to index.html.');
    return;
  }
  try {
    mod = await createMhaModule();  // no fetch: the glue decodes its inlined wasm (pre.js)
  } catch (e) {
    els.summary.textContent = 'The attention core is not available.';
    showAlert(`The attention core failed to start: ${errorMessage(e)}`);
    return;
  }
  els.coreVersion.textContent = String(mod.version);

  wireTabs();
  applyHash(location.hash);

  const later = debounce(update, 150);
  els.form.addEventListener('input', (e) => {
    if (e.target === els.preset) return;
    if (e.target === els.text) showTokens(els.text.value);
    if (e.target === els.mask) showMaskFields();
    if (e.target.type === 'checkbox' || e.target === els.mask) update();
    else later();
  });
  els.form.addEventListener('submit', (e) => {
    e.preventDefault();
    update();
  });
  els.maskClear.addEventListener('click', () => {
    explainState = { ...explainState, drawn: [] };
    update();
  });
  els.preset.addEventListener('change', () => {
    const p = PRESETS[els.preset.value];
    if (!p) return;
    setControls(p.state);
    showNotes([]);
    update();
  });
  window.addEventListener('hashchange', () => applyHash(location.hash));

  let frame = 0;
  let lastWidth = els.heads.clientWidth;
  new ResizeObserver(() => {
    if (els.heads.clientWidth === lastWidth) return;
    lastWidth = els.heads.clientWidth;
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(layout);
  }).observe(els.heads);
  // A zoom or a move to another screen changes devicePixelRatio: redraw crisp.
  const watchDpr = () => {
    matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`).addEventListener(
      'change',
      () => {
        drawLegend(els.legend);
        layout();
        watchDpr();
      },
      { once: true },
    );
  };
  watchDpr();
  // Light / dark switch: the canvas labels take their colours from the stylesheet.
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    drawLegend(els.legend);
    layout();
  });
  document.documentElement.dataset.ready = 'true';
}

start();
