// mha-lab page: reads the controls (or the URL hash), asks the wasm core for module 08's seeded
// experiment, and draws every head's attention weights as a canvas grid plus a hidden table.
// A second mode, the Date translator (date_mode.js, #mode=date), runs a trained model instead.
// Bundled by scripts/build_web.mjs into one classic script, dist/app.js (file:// safe).
import { drawLegend } from './draw/legend.js';
import { rampWords } from './draw/color.js';
import { HeadHeatmap, readTheme } from './draw/heatmap.js';
import { headTableSteps } from './draw/table.js';
import { scheduleTables } from './draw/tables.js';
import { gridsDrawn, inputChanged, inputRefused, updatePending } from './chrome/timing.js';
import { Compute, experimentWork, keepsIntermediates } from './compute/compute.js';
import { formatCount, precisionText, readoutText } from './draw/format.js';
import { tokenize } from './chrome/tokenize.js';
import { DateMode } from './modes/date/date_mode.js';
import { ExplainPanels } from './explain/explain.js';
import { DateCombined } from './modes/date/combined.js';
import {
  defaultExplain, explainToHash, fitExplain, maskLimits, parseExplainHash, readMaskControls,
} from './explain/explain_state.js';
import { maskFields, toggleCell } from './explain/masks.js';
import { h as element } from './explain/dom.js';
import { loadFullModule, startCore, coreScriptLoaded, CORE_SCRIPT } from './compute/wasm_modules.js';
import { parseDateHash, parseMode } from './chrome/date_state.js';
import { CellSelection } from './draw/selection.js';
import { announceText, createAnnouncer } from './chrome/announce.js';
import { copyText, iframeSnippet, linkWithHash } from './chrome/share.js';
import { exportFileName, weightsCsv, weightsJson } from './chrome/export.js';
import { canvasToPng, composeSnapshot, downloadBlob } from './chrome/snapshot.js';
import { warmUp } from './compute/warm_up.js';
import {
  DEFAULTS,
  PRESETS,
  checkPageLimits,
  defaultView,
  parseHash,
  parseView,
  presetOf,
  readControls,
  stateToHash,
  viewToHash,
} from './chrome/state.js';

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
  precision: $('precision'),
  legend: $('legend'),
  readout: $('readout'),
  heads: $('heads'),
  coreVersion: $('core-version'),
  tabs: [...document.querySelectorAll('.mode-tab')],
  randomPanel: $('random-panel'),
  datePanel: $('date-panel'),
  skipLink: document.querySelector('.skip-link'),
  share: $('share'),
  copyLink: $('copy-link'),
  copyEmbed: $('copy-embed'),
  exportBar: $('export'),
  exportPng: $('export-png'),
  exportCsv: $('export-csv'),
  exportJson: $('export-json'),
  shareStatus: $('share-status'),
  shareText: $('share-text'),
  fullPage: $('full-page-link'),
};
const READOUT_HINT = els.readout.textContent;
const NUMBER_FIELDS = ['d_model', 'num_heads', 'seed'];

/** The attention core (mha_wasm_core.js); the Date translator loads the full module itself. */
let mod = null;
/** Where numpyExperiment runs: here, or in a worker for large views (compute.js). */
let compute = null;
/** The view on screen: {state, tokens, result, heatmaps}. Replaced only by a valid update. */
let view = null;
let selection = null;
/** 'random' (module 08's experiment, the controls above) or 'date' (the Date translator). */
let mode = 'random';
/** How the page is viewed (state.js VIEW_KEYS): {cell, embed}. The cell lives in `cells`. */
const pageView = defaultView();
/** The Date translator's combined views (mean, max, rollout), drawn only while open. */
const dateCombined = new DateCombined($('date-combined'), { getModule: loadFullModule });
const dateMode = new DateMode({
  getModule: loadFullModule,
  afterUpdate: (m) => showMemoryStats(m),
  hashSuffix: () => viewToHash({ embed: pageView.embed }),
  afterRedraw: (result, kind, layer) => dateCombined.update(result, kind, layer),
});
/** The current cell of the grids: hovered, or locked by a click, a tap or Enter. */
const cells = new CellSelection(onCellChange);
let cellHashTimer = 0;
const announcer = createAnnouncer(document.getElementById('random-panel'));
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
  onCombine: (combine) => {
    explainState = { ...explainState, combine };
    if (view) writeHash(view.state);
  },
  // The explain functions and the file loaders are in the full module (mha_wasm.js), loaded as
  // a classic script the first time a panel needs them (wasm_modules.js).
  getFullModule: loadFullModule,
  onError: (message) => {
    els.alert.textContent = /[.!?]$/.test(message) ? message : `${message}.`;
  },
  onClearError: () => {
    els.alert.textContent = '';
  },
  // The compare and ablation panels run the layer on X and the weights, which the grids'
  // request leaves out (return_parameters: false) while those panels are closed.
  onNeedParameters: () => updateSoon(),
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
  setText(els.maskDrawnCount, `${k} cell${k === 1 ? '' : 's'} masked: click a cell of any grid to mask it or let it attend again.`);
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
  cells.toggle(cell); // explain.lock follows the lock, in onCellChange
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

/** The text whose chips are shown (the input event and the update both ask: drawn once). */
let chipsText = null;

/**
 * Sets an element's text where it differs: the same text written again still replaces the text
 * node, and the next frame lays the element out again (issue 6: every keystroke's frame).
 */
function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/**
 * The tokens as separate chips, so the splitting rule is visible. Text nodes only. The chips are
 * kept and only those whose token changed are rewritten: a keystroke changes one token, and
 * rebuilding 64 chips made the frame restyle and lay out every one (issue 6).
 */
function showTokens(text) {
  if (text === chipsText) return;
  chipsText = text;
  const tokens = tokenize(text);
  const line = els.tokensLine;
  let label = line.firstElementChild;
  if (!label?.classList.contains('tokens-count')) line.replaceChildren(label = element('span', { className: 'tokens-count' }));
  setText(label, `${tokens.length} token${tokens.length === 1 ? '' : 's'}: `);
  let node = label.nextSibling;
  for (const t of tokens.slice(0, 80)) {
    if (node?.nodeType !== Node.ELEMENT_NODE) node = line.insertBefore(element('span', { className: 'token' }), node);
    setText(node, t);
    node = node.nextSibling;
  }
  while (node) {
    const next = node.nextSibling;
    node.remove();
    node = next;
  }
  if (tokens.length > 80) line.append(' …');
}

/**
 * Diagnostics hook (read by tests/browser/memory.test.mjs): after every update the core's
 * memoryStats() are on #core-version as data-malloc-in-use-bytes and data-wasm-memory-bytes.
 * Read-only numbers; the module itself is not exposed to other scripts.
 */
function showMemoryStats(module) {
  const stats = (module ?? mod).memoryStats();
  els.coreVersion.dataset.mallocInUseBytes = String(stats.malloc_in_use_bytes);
  els.coreVersion.dataset.wasmMemoryBytes = String(stats.wasm_memory_bytes);
}

/**
 * Validates the controls and, when they are valid, recomputes and redraws.
 * Invalid settings leave the current view on screen and show why in the alert region.
 * @returns {boolean} whether the view was (or, from the worker, will be) updated
 */
function update() {
  inputChanged(); // the clock of mha:update runs from the input event, or from here (timing.js)
  let drawn = false;
  try {
    drawn = updateView(); // true, false, or 'pending' (the worker answers later)
    if (drawn === false) refusedView = viewGeneration;
    return drawn !== false;
  } finally {
    // The token chips change with the grids (with the worker's answer when it computes: a change
    // now would make the page lay itself out while the worker works, and again for the grids).
    if (drawn !== 'pending') showTokens(els.text.value);
    if (drawn !== 'pending') {
      showMemoryStats();
      if (drawn) gridsDrawn();
      else inputRefused();
    }
  }
}

/**
 * One update for a burst of input events, with the latest values (latest input wins). Not at the
 * next animation frame: waiting for it cost up to 16 ms of issue 6's 16 ms budget. With the worker
 * (served pages) this thread only sends the request and draws the answer: the update runs at the
 * end of this task (events dispatched in one task still make one update). Without it (file://),
 * in a task of its own, so that keys typed during a long computation here make one update, not
 * one each.
 */
let updateQueued = false;
/** Whether the update running now comes from typing (its address is written once typing pauses). */
let typing = false;
function updateSoon() {
  if (updateQueued) return;
  updateQueued = true;
  const run = () => {
    updateQueued = false;
    if (mode !== 'random') return;
    typing = true;
    try {
      update();
    } finally {
      typing = false;
    }
  };
  if (compute.workerReady) queueMicrotask(run);
  else setTimeout(run, 0);
}

/** Milliseconds of work in the worker after which the summary says it is computing. */
const COMPUTING_NOTE_MS = 150;
let computingTimer = 0;
/**
 * updateView calls so far, and the last one whose settings were refused (its alert names the
 * problem). A worker's answer to an earlier call is still the last valid view, so it is drawn,
 * but it leaves that alert, the invalid fields and the address as they are.
 */
let viewGeneration = 0;
let refusedView = 0;

function updateView() {
  const generation = ++viewGeneration;
  const read = readControls(rawControls());
  if (!read.ok) {
    showAlert(read.message);
    return false;
  }
  const { state, tokens } = read;
  // The number fields' spinners stop where the check below does (index.html's max is a start),
  // and a field the chosen mask does not use is kept within it, so that choosing that mask later
  // starts from a valid value (one token allows window 0 only).
  const limits = maskLimits(tokens.length);
  for (const [field, key, kind] of [[els.maskPad, 'pad', 'padding'], [els.maskWindow, 'window', 'window']]) {
    if (field.max !== String(limits[key])) field.max = String(limits[key]);
    if (els.mask.value !== kind && Number(field.value) > limits[key]) field.value = String(limits[key]);
  }
  const masks = readMaskControls(
    { mask: els.mask.value, pad: els.maskPad.value, window: els.maskWindow.value }, tokens.length);
  if (!masks.ok) {
    showAlert(masks.message);
    (masks.key === 'pad' ? els.maskPad : els.maskWindow).setAttribute('aria-invalid', 'true');
    return false;
  }
  const explained = fitExplain({ ...explainState, ...masks.value }, tokens.length, state.num_heads);
  const windowMask = typeof mod.slidingWindowMask === 'function'
    ? (n, w) => mod.slidingWindowMask({ n, window: w }) : null;
  const fields = maskFields(explained, tokens.length, windowMask);
  let request;
  try {
    // The module is the authority on (d_model, num_heads): zero, negative or non-dividing
    // head counts throw an Error that names the values, shown as is.
    mod.parameterCount({ d_model: state.d_model, num_heads: state.num_heads });
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
      // float64 as numpy while n·d·(4d + 2n) <= 4M multiply-adds (every course example), float32
      // above (issue 6's 64 tokens at d_model 512: 31 ms in float64, 15 in float32); the result
      // says which, and so does #precision.
      precision: 'auto',
      positional: state.positional,
      is_causal: state.causal,
      ...fields,
    };
    // The grids need the weights only: no value projection, A·V or out_proj, no q, k or scores
    // (issue 6: about half the work when n < 2·d_model; the float64 path computes everything
    // anyway). The step panel's q, k, scores, a·v_j and y_i need the full forward: asked for
    // while a cell is locked there, and only while they stay small (MAX_KEPT_WEIGHTS).
    if (!explain.cell) request.weights_only = true;
    if (!explain.cell || !keepsIntermediates(state.num_heads, tokens.length)) request.keep_intermediates = false;
    // X and the weights (4 MiB at d_model 512) only for the panels that run the layer on them.
    if (!explain.needsParameters()) request.return_parameters = false;
  } catch (e) {
    showAlert(errorMessage(e));
    return false;
  }
  // Small requests are answered now; large ones by the worker (compute.js), later, unless a
  // newer input supersedes them first.
  const fromTyping = typing;
  const show = (outcome) => {
    // Whatever is shown now (this answer or an earlier, quicker one), no computation is pending
    // for it: no "Computing…" note may come later.
    clearTimeout(computingTimer);
    delete els.heads.dataset.computing;
    if (outcome.error !== undefined) {
      showAlert(outcome.error);
      return false;
    }
    // numpyExperiment always returns parameter_count (the result is not changed here: compute.js
    // keeps it, frozen, for an equal request).
    const { result } = outcome;
    const refusedSince = refusedView > generation; // newer settings were refused meanwhile
    els.heads.dataset.computedIn = outcome.where;
    els.heads.dataset.workers = String(outcome.workers ?? 0); // 2: the heads split between two
    // How many of the workers' weight arrays went into spare memory, used before (compute_worker.js).
    els.heads.dataset.recycled = String(outcome.recycled ?? 0);
    // Whether the grids' result holds V and the head outputs (not weights_only): tests read it.
    els.heads.dataset.fullForward = String(result.head_outputs !== undefined);
    els.heads.dataset.reused = String(!!outcome.reused); // the kept result of an equal request
    // A result computed ahead in idle time (one token more or less: compute.js), or one shown before.
    els.heads.dataset.ahead = String(!!outcome.ahead);
    els.heads.dataset.kept = String(!!outcome.kept);
    if (!refusedSince) {
      clearAlert();
      els.maskPad.removeAttribute('aria-invalid');
      els.maskWindow.removeAttribute('aria-invalid');
    }
    explainState = explained;
    showMaskFields();
    const firstView = view === null;
    const replaced = view?.result;
    render(state, tokens, result);
    explain.update({ state, tokens, result, request, explain: explainState, maskFields: fields });
    // The grids, their tables, the panels and the export read the new result from here on: the
    // one it replaced may give its weights' memory back to the worker that computed it (compute.js).
    if (replaced !== result) compute.release(replaced);
    if (refusedSince) return true; // the address and preset follow the controls, which are refused
    // The address: once typing pauses (writeHashOncePaused); the first view's, after the frame
    // that paints it (replaceState and the favicon fetched again cost the first grid ~30 ms).
    if (fromTyping) writeHashOncePaused();
    else if (firstView) writeHashOncePaused(0);
    else writeHash(state);
    els.preset.value = presetOf(state) ?? '';
    return true;
  };
  const outcome = compute.run(request);
  if (!(outcome instanceof Promise)) return show(outcome);
  // Said only when the worker takes a while: a note that flashed for every keystroke would cost
  // a layout of the page while the worker works.
  clearTimeout(computingTimer);
  computingTimer = setTimeout(() => {
    els.heads.dataset.computing = 'true';
    els.summary.textContent = `Computing ${tokens.length} tokens × ${state.num_heads} heads in the background…`;
  }, COMPUTING_NOTE_MS);
  outcome.then((later) => {
    if (!later) return; // superseded: a newer input's result (or grids) will be drawn
    if (mode !== 'random') {
      clearTimeout(computingTimer);
      delete els.heads.dataset.computing;
      return;
    }
    showTokens(els.text.value);
    const drawn = show(later);
    showMemoryStats(later.where === 'worker' && compute.stats ? { memoryStats: () => compute.stats } : mod);
    if (drawn) gridsDrawn();
    else inputRefused();
  });
  return 'pending';
}

/**
 * Escape in a grid. Defined out here, not in render(): a closure made there would keep render's
 * whole scope, the first view's result included (183 MB at 2048 tokens × 12 heads), alive in the
 * heatmaps, which outlive that view.
 */
const clearCells = () => cells.clear();

function render(state, tokens, result) {
  const dHead = result.d_head;
  // The same number of heads as the grids on the page: keep their figures, canvases and listeners
  // and give them the new weights (issue 6: rebuilding 8 figures and their canvases cost more than
  // the compute); otherwise build them anew.
  const reuse = view && view.heatmaps.length === result.num_heads &&
    els.heads.querySelectorAll(':scope > figure.head').length === result.num_heads;
  const figures = reuse ? [...els.heads.querySelectorAll(':scope > figure.head')] : [];
  const holders = [];
  const heatmaps = reuse ? view.heatmaps : [];
  for (let h = 0; h < result.num_heads; h++) {
    let figure;
    if (reuse) {
      figure = figures[h];
      heatmaps[h].setData({ result, tokens });
      holders.push(figure.querySelector('.table-holder'));
    } else {
      figure = document.createElement('figure');
      figure.className = 'head';
      figure.dataset.head = String(h);
      const caption = document.createElement('figcaption');
      const title = document.createElement('span');
      title.className = 'head-title';
      title.textContent = `Head ${h}`;
      const detail = document.createElement('span');
      detail.className = 'head-detail';
      caption.append(title, detail);
      const hm = new HeadHeatmap({
        head: h,
        result,
        tokens,
        onSelect: pointOrMove,
        onActivate: activateCell,
        onClear: clearCells,
      });
      const scroller = document.createElement('div');
      scroller.className = 'grid-scroll';
      scroller.append(hm.element);
      const hidden = document.createElement('div');
      hidden.className = 'visually-hidden table-holder';
      holders.push(hidden);
      figure.append(caption, scroller, hidden);
      figures.push(figure);
      heatmaps.push(hm);
    }
    figure.classList.toggle('is-off', explainState.off.includes(h));
    const detail = figure.querySelector('.head-detail');
    const columns = ` · Q, K, V columns ${h * dHead}–${(h + 1) * dHead - 1}`;
    setText(detail, columns);
  }
  if (!reuse) els.heads.replaceChildren(...figures);
  // The tables replace the previous ones in their holders (after the paint, for larger views).
  scheduleTables(els.heads, holders,
    (h) => headTableSteps(h, result.attn_weights, result.fully_masked_rows, tokens, tokens), result,
    { busy: updatePending });
  view = { state, tokens, result, heatmaps };
  layout();

  setText(els.summary,
    `n = ${tokens.length} token${tokens.length === 1 ? '' : 's'} · d_model = ${result.d_model} · ` +
    `num_heads = ${result.num_heads} · d_head = ${dHead}` +
    `${state.causal ? ' · causal' : ''}${state.positional ? ' · + positions' : ''} · seed ${state.seed}`);
  setText(els.params,
    `Parameters: 4 · d_model² = ${formatCount(result.parameter_count)} ` +
    '(Wq, Wk, Wv, Wo; the same for every valid num_heads)');
  els.params.dataset.count = String(result.parameter_count);
  setText(els.precision, precisionText(result.precision,
    experimentWork({ tokens: tokens.length, d_model: result.d_model })));

  const c = cells.cell;
  if (c && (c.row >= tokens.length || c.col >= tokens.length || c.head >= result.num_heads)) {
    cells.clear();
  }
  select(cells.cell);
}

/** A grid reports the pointer (hover), the focus or the arrow keys; see selection.js. */
function pointOrMove(sel) {
  if (!sel || sel.source === 'pointer') cells.hover(sel);
  else if (sel.source === 'focus') {
    if (!cells.cell) cells.move(sel);
  } else cells.move(sel);
}

/** The current cell changed: draw it, say it (not on hover), keep a lock in the address. */
function onCellChange(cell, { locked, reason }) {
  if (view && reason !== 'hover') view.drawnSelection = undefined; // the lock note may change
  select(cell);
  if (!view) return;
  if (cell && reason !== 'hover') {
    const { tokens, result } = view;
    const { n, m } = result;
    const w = result.attn_weights[(cell.head * n + cell.row) * m + cell.col];
    const lock = reason === 'lock' ? 'locked' : reason === 'unlock' ? 'unlocked' : undefined;
    announcer.say(announceText(cell.head, tokens[cell.row], tokens[cell.col], w, {
      masked: result.fully_masked_rows[cell.head * n + cell.row] === 1,
      lock,
    }));
  } else if (reason === 'clear') announcer.say('No cell selected.');
  els.readout.dataset.locked = String(locked);
  // The explain section's step panel shows the locked cell.
  // Not in embed mode, where the step panel is hidden: it would load the full module and ask for
  // the full forward for nothing.
  if (locked && reason !== 'hover' && !pageView.embed) {
    explain.lock(cell);
    // A result computed for the grids alone (weights_only) has no V or head outputs for the
    // step panel (it says they are being computed): compute them now (the request asks for them
    // while a cell is locked).
    if (!view.result.head_outputs && keepsIntermediates(view.result.num_heads, view.result.n)) updateSoon();
  } else if (reason === 'unlock' || reason === 'clear') explain.lock(null);
  // A moment later: holding an arrow key would call history.replaceState too often.
  if (reason === 'restore') writeHash(view.state);
  else if (reason !== 'hover') {
    clearTimeout(cellHashTimer);
    cellHashTimer = setTimeout(() => view && writeHash(view.state), 120);
  }
}

/**
 * The heads area's content width (CSS px) and the label colours, read again only when they may
 * have changed (a resize, a zoom, a light/dark switch: `fresh`). Reading them on every update
 * forced a style and layout pass over the whole page, thousands of table cells included, before
 * the grids could be drawn (issue 6: about 40 ms of a 64-token update).
 */
let headsWidth = null;
let labelTheme = null;

/** Sizes every grid to the width the heads area has. */
function layout({ fresh = false } = {}) {
  if (!view) return;
  if (fresh || headsWidth === null) {
    const style = getComputedStyle(els.heads);
    headsWidth = els.heads.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  }
  if (fresh || labelTheme === null) labelTheme = readTheme(els.heads);
  // Each figure has a little padding of its own (see style.css, .head).
  const available = Math.max(240, headsWidth - 16);
  for (const hm of view.heatmaps) hm.resize(available, labelTheme);
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
    setText(els.readout, READOUT_HINT);
    delete els.readout.dataset.head;
    return;
  }
  const { tokens, result } = view;
  const { n, m } = result;
  const w = result.attn_weights[(sel.head * n + sel.row) * m + sel.col];
  let text = readoutText(sel.head, tokens[sel.row], tokens[sel.col], w);
  if (result.fully_masked_rows[sel.head * n + sel.row] === 1) text += ' (every key of this row is masked)';
  if (cells.locked) text += ' · locked';
  setText(els.readout, text);
  els.readout.dataset.head = String(sel.head);
}

/** The random-embeddings view as a hash: settings, explain keys, then the locked cell and embed. */
function randomHash(state, { embed }) {
  return `${stateToHash(state)}${explainToHash(explainState)}${viewToHash({ cell: cells.lockedCell, embed })}`;
}

const ADDRESS_PAUSE_MS = 300;
/** The timer of an address waiting for the typing to pause (writeHashOncePaused); 0: none. */
let addressTimer = 0;

/** Drops the address waiting for the typing to pause: a newer one supersedes it. */
function dropPendingHash() {
  clearTimeout(addressTimer);
  addressTimer = 0;
}

/** Writes the address of `state` now; an address still waiting for a pause is superseded. */
function writeHash(state) {
  dropPendingHash();
  if (mode !== 'random') return;
  const hash = `#${randomHash(state, { embed: pageView.embed })}`;
  if (location.hash === hash) return;
  try {
    history.replaceState(null, '', hash);
  } catch {
    // Some embeddings (sandboxed frames) refuse history changes; the page works without.
  }
}

/**
 * While typing, the address of the view on screen is written once the typing pauses: `pauseMs`
 * (default ADDRESS_PAUSE_MS) after the last typed update, and after the frame that paints it.
 * Each address change cost the page's thread 2–4 ms of history.replaceState, and Chromium then
 * fetched and parsed the SVG favicon again (3–8 ms more): once per keystroke, a burst of typing
 * paid it for every key. The price: a reload, or Back, within the pause finds the address as it
 * was before the burst. The first view's address waits for its frame only (`pauseMs` 0).
 */
function writeHashOncePaused(pauseMs = ADDRESS_PAUSE_MS) {
  clearTimeout(addressTimer);
  addressTimer = setTimeout(() => requestAnimationFrame(() => setTimeout(writePendingHash, 0)), pauseMs);
}

/** The address that writeHashOncePaused has yet to write, now (also when the page is left). */
function writePendingHash() {
  if (addressTimer && view) writeHash(view.state);
}

function applyHash(hash) {
  // The address navigated to wins over one the typing left waiting (which would otherwise be
  // written over it, for the view still on screen, while the new view is computed).
  dropPendingHash();
  const wanted = parseMode(hash);
  setEmbed(parseView(hash, DEFAULTS).view.embed);
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
  } else if (parsed.view.cell) {
    cells.restore(parsed.view.cell, true);
  } else if (cells.locked) {
    cells.clear();
  }
}

/** #embed: the grids, the legend and the readout only (for iframes in course pages). */
function setEmbed(on) {
  pageView.embed = on;
  document.documentElement.classList.toggle('embed', on);
  // The page's title stays for screen readers (one h1 per page), out of sight.
  document.querySelector('h1').classList.toggle('visually-hidden', on);
  if (on) els.fullPage.href = linkWithHash(location.href, '');
  // No text field to type in: no neighbours computed ahead (compute.js) for nothing.
  compute?.setAhead(!on);
}

/** The address of the view on screen, with or without the minimal chrome. */
function currentLink({ embed }) {
  const hash = mode === 'random' && view
    ? randomHash(view.state, { embed })
    : `${dateMode.hash()}${viewToHash({ embed })}`;
  return linkWithHash(location.href, hash);
}

function shareStatus(text) {
  els.shareStatus.textContent = text;
}

/** Copy link / Copy embed snippet: the clipboard, or a selected field to copy by hand. */
async function share(what) {
  const text = what === 'link'
    ? currentLink({ embed: pageView.embed })
    : iframeSnippet(currentLink({ embed: true }));
  const how = await copyText(text, els.shareText);
  const label = what === 'link' ? 'Link' : 'Embed snippet';
  shareStatus(how === 'copied'
    ? `${label} copied to the clipboard.`
    : `${label} selected in the field below: the browser refused the clipboard here, press Ctrl+C (⌘C) to copy.`);
}

/** What the exports describe: the settings, the tokens and every head shown. */
function exportData() {
  const { state, tokens, result } = view;
  return {
    weights: result.attn_weights,
    heads: view.heatmaps.map((hm) => hm.head),
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
      source: 'numpy_experiment (module 08): np.random.seed(seed); X = randn(n, d_model); Wq, Wk, Wv, Wo = randn(d_model, d_model)',
    },
  };
}

async function exportView(kind) {
  if (!view) return;
  const data = exportData();
  const name = exportFileName(data.config, kind);
  try {
    if (kind === 'csv') {
      downloadBlob(new Blob([weightsCsv(data)], { type: 'text/csv' }), name);
    } else if (kind === 'json') {
      downloadBlob(new Blob([`${JSON.stringify(weightsJson(data), null, 1)}\n`], { type: 'application/json' }), name);
    } else {
      const style = getComputedStyle(document.body);
      const canvas = composeSnapshot({
        title: `Multi-head attention: "${view.state.text}"`,
        subtitle: els.summary.textContent,
        panels: view.heatmaps.map((hm) => ({ canvas: hm.snapshotCanvas(), caption: hm.name })),
        legend: els.legend,
        ink: readTheme(els.heads).ink,
        background: style.backgroundColor === 'rgba(0, 0, 0, 0)' ? '#ffffff' : style.backgroundColor,
      });
      downloadBlob(await canvasToPng(canvas), name);
    }
    shareStatus(`Saved ${name}.`);
  } catch (e) {
    shareStatus(`Could not export: ${errorMessage(e)}`);
  }
}

function wireShare() {
  els.copyLink.addEventListener('click', () => share('link'));
  // In an iframe (#embed): the same view with the full page around it, in a new tab.
  const toFullPage = () => {
    els.fullPage.href = currentLink({ embed: false });
  };
  els.fullPage.addEventListener('click', toFullPage);
  els.fullPage.addEventListener('focus', toFullPage);
  els.fullPage.addEventListener('pointerenter', toFullPage);
  els.copyEmbed.addEventListener('click', () => share('embed'));
  els.exportPng.addEventListener('click', () => exportView('png'));
  els.exportCsv.addEventListener('click', () => exportView('csv'));
  els.exportJson.addEventListener('click', () => exportView('json'));
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
  els.exportBar.hidden = next !== 'random';
  // One share bar, under the grids of the mode shown.
  $(next === 'date' ? 'date-share-slot' : 'random-share-slot').append(els.share);
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
  if (view) writeHash(view.state);
  // With no view drawn yet the controls may still hold one asked for (a large link's first view,
  // which the workers were computing when the tab changed; its answer was dropped) or refused
  // (its alert is shown again): ask again, rather than replace them with the default view.
  if (view || viewGeneration > 0) update();
  else applyHash('');
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

async function start() {
  // The core's script has already started it (data-start in index.html): its wasm is inflated and
  // compiled while this script is fetched and evaluated and the page is laid out. startCore takes
  // that module (first grid 305 ms, against 343 when this script started it: scripts/bench/notes.md).
  const core = coreScriptLoaded() ? startCore() : null;
  drawLegend(els.legend);
  for (const [name, p] of Object.entries(PRESETS)) {
    const opt = document.createElement('option');
    opt.value = name;
    opt.textContent = p.label;
    els.preset.append(opt);
  }
  if (!core) {
    els.summary.textContent = 'The attention core is not available.';
    showAlert(`The attention core (${CORE_SCRIPT}) did not load, so nothing can be computed. ` +
      `Rebuild the page with ./scripts/build.sh and keep ${CORE_SCRIPT} next to index.html.`);
    return;
  }
  try {
    mod = await core;
  } catch (e) {
    els.summary.textContent = 'The attention core is not available.';
    showAlert(`The attention core failed to start: ${errorMessage(e)}`);
    return;
  }
  els.coreVersion.textContent = String(mod.version);
  els.coreVersion.dataset.gemmKernel = String(mod.gemmKernel); // relaxed_madd or simd128 (relaxed_simd.js)
  compute = new Compute(mod, { lut: rampWords() });

  wireTabs();
  wireShare();
  applyHash(location.hash);
  // The compute worker starts after the first grid is painted (served pages only: compute.js).
  requestAnimationFrame(() => setTimeout(() => compute.startWorker(), 0));

  els.form.addEventListener('input', (e) => {
    if (e.target === els.preset) return;
    inputChanged();
    if (e.target === els.mask) showMaskFields();
    if (e.target.type === 'checkbox' || e.target === els.mask) update();
    else updateSoon();
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
  // Leaving the page (closing the tab, going elsewhere) within a pause: the history entry and a
  // restored session keep the text last typed.
  window.addEventListener('pagehide', writePendingHash);

  let frame = 0;
  let lastWidth = els.heads.clientWidth;
  new ResizeObserver(() => {
    if (els.heads.clientWidth === lastWidth) return;
    lastWidth = els.heads.clientWidth;
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => layout({ fresh: true }));
  }).observe(els.heads);
  // A zoom or a move to another screen changes devicePixelRatio: redraw crisp.
  const watchDpr = () => {
    matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`).addEventListener(
      'change',
      () => {
        drawLegend(els.legend);
        layout({ fresh: true });
        watchDpr();
      },
      { once: true },
    );
  };
  watchDpr();
  // Light / dark switch: the canvas labels take their colours from the stylesheet.
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    drawLegend(els.legend);
    layout({ fresh: true });
  });
  document.documentElement.dataset.ready = 'true';
  // This thread's core computes small views, and every view from file:// (no worker there): make
  // its kernels hot while the page is idle (warm_up.js).
  // Two calls of each kind per idle period: all twelve at once held the page for about 80 ms
  // right after its first grid.
  const idle = window.requestIdleCallback ?? ((f) => setTimeout(f, 200));
  let slices = 6;
  const warmSlice = () => {
    if (slices-- <= 0) return;
    warmUp(mod, { calls: 2, seed: view ? view.state.seed : DEFAULTS.seed });
    idle(warmSlice);
  };
  idle(warmSlice);
}

start();
