// The random-embeddings mode: reads the controls (or the address), asks the core for module 08's
// seeded experiment (numpyExperiment), and draws every head's attention weights as a canvas grid
// plus a hidden table, with the explain panels under them. One instance per page (main.js).
import { CellSelection } from '../../draw/selection.js';
import { drawLegend } from '../../draw/legend.js';
import { keepsIntermediates } from '../../compute/cost.js';
import { ExplainPanels } from '../../explain/explain.js';
import { defaultExplain, explainToHash, parseExplainHash } from '../../explain/explain_state.js';
import { toggleCell } from '../../explain/masks.js';
import { announceText, createAnnouncer } from '../../chrome/announce.js';
import { sentence, showNotes } from '../../chrome/alerts.js';
import { tokenize } from '../../chrome/tokenize.js';
import { viewToHash } from '../../chrome/address_keys.js';
import { DEFAULTS, PRESETS, parseHash, presetOf, stateToHash } from './random_state.js';
import { RandomControls } from './controls.js';
import { HeadGrids } from './grids.js';
import { experimentRequest } from './request.js';

/** Milliseconds of work in the worker after which the summary says it is computing. */
const COMPUTING_NOTE_MS = 150;
/** Milliseconds after a keyboard move of the locked cell before the address follows it. */
const CELL_ADDRESS_MS = 120;

/**
 * @typedef {'drawn'|'refused'|'superseded'} UpdateOutcome what an update did: drew a new view,
 *   was refused (the alert says why; the last valid view stays), or was superseded by a newer
 *   input before its result came (that input's update draws)
 */

export class RandomMode {
  /**
   * @param {object} ctx what the page gives every mode
   * @param {Document} ctx.doc the page
   * @param {object} ctx.core the attention core (mha_wasm_core.js)
   * @param {object} ctx.compute where numpyExperiment runs (compute/compute.js)
   * @param {object} ctx.clock the page's update clock (chrome/timing.js)
   * @param {object} ctx.address the page's address (chrome/address.js)
   * @param {() => boolean} ctx.embedded whether the page shows the minimal chrome (#embed)
   * @param {object} ctx.modules the page's wasm loader (compute/wasm_modules.js): the full module
   *   (loadFullModule, on first call) and classic scripts
   * @param {(stats: object) => void} ctx.showMemoryStats the core's memoryStats() after an update
   * @param {object} ctx.labels the page's label cache (draw/labels.js LabelCache), for every grid
   * @param {string[]} ctx.addressKeys every key the page's modes read in the address (main.js):
   *   the address's other keys are noted as unknown
   */
  constructor(ctx) {
    this.id = 'random';
    this.ctx = ctx;
    const { doc } = ctx;
    this.panel = doc.getElementById('random-panel');
    this.shareSlot = doc.getElementById('random-share-slot');
    this.skipTarget = '#heads-section';
    /** Whether the page's export buttons apply (they save this mode's grids). */
    this.exports = true;
    this.active = false;
    this.controls = new RandomControls(doc);
    this.grids = new HeadGrids(doc, {
      labels: ctx.labels,
      onSelect: (sel) => this.pointOrMove(sel),
      onActivate: (cell) => this.activateCell(cell),
      onClear: () => this.cells.clear(),
      busy: () => ctx.clock.updatePending(),
    });
    /** The view on screen: {state, tokens, result}. Replaced only by a valid update. */
    this.view = null;
    /** The current cell of the grids: hovered, or locked by a click, a tap or Enter. */
    this.cells = new CellSelection((cell, info) => this.onCellChange(cell, info));
    this.cellAddressTimer = 0;
    this.announcer = createAnnouncer(this.panel);
    /**
     * The explain keys (explain/explain_state.js): the extra mask, the drawn cells, the
     * switched-off heads. Kept beside the settings, written to the address after them.
     */
    this.explainState = defaultExplain();
    this.explain = new ExplainPanels(doc.getElementById('explain-panels'), {
      getModule: () => ctx.core,
      onAblate: (off) => {
        this.explainState = { ...this.explainState, off };
        this.update();
      },
      onCombine: (combine) => {
        this.explainState = { ...this.explainState, combine };
        if (this.view) this.writeAddress();
      },
      // The explain functions and the file loaders are in the full module (mha_wasm.js), loaded as
      // a classic script the first time a panel needs them (compute/wasm_modules.js).
      getFullModule: ctx.modules.loadFullModule,
      scripts: ctx.modules,
      labels: ctx.labels,
      onError: (message) => {
        this.controls.els.alert.textContent = sentence(message);
      },
      onClearError: () => {
        this.controls.els.alert.textContent = '';
      },
      // The compare and ablation panels run the layer on X and the weights, which the grids'
      // request leaves out (return_parameters: false) while those panels are closed.
      onNeedParameters: () => this.updateSoon(),
    });
    /**
     * update() calls so far, and the last one whose settings were refused (its alert names the
     * problem). A worker's answer to an earlier call is still the last valid view, so it is
     * drawn, but it leaves that alert, the invalid fields and the address as they are.
     */
    this.generation = 0;
    this.refusedGeneration = 0;
    this.computingTimer = 0;
    this.updateQueued = false;
    /** Whether the update running now comes from typing (its address is written once typing pauses). */
    this.typing = false;
    /** How the last update ended, when it ended in its own call; null while the workers compute. */
    this.settled = null;
    this.wired = false;
  }

  /** The legend and the preset options, drawn before the core has started. */
  prepare() {
    drawLegend(this.grids.els.legend);
    this.controls.fillPresets(PRESETS);
  }

  /** Listens to the controls (once). */
  wire() {
    if (this.wired) return;
    this.wired = true;
    const { els } = this.controls;
    const { doc, clock } = this.ctx;
    els.form.addEventListener('input', (e) => {
      if (e.target === els.preset) return;
      clock.inputChanged();
      if (e.target === els.mask) this.controls.showMaskFields(this.explainState.drawn.length);
      if (/** @type {HTMLInputElement} */ (e.target).type === 'checkbox' || e.target === els.mask)
        this.update();
      else this.updateSoon();
    });
    els.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.update();
    });
    els.maskClear.addEventListener('click', () => {
      this.explainState = { ...this.explainState, drawn: [] };
      this.update();
    });
    els.preset.addEventListener('change', () => {
      const p = PRESETS[els.preset.value];
      if (!p) return;
      this.controls.set(p.state);
      showNotes(els.notes, []);
      this.update();
    });
    const { heads } = this.grids.els;
    let frame = 0;
    let lastWidth = heads.clientWidth;
    new ResizeObserver(() => {
      if (heads.clientWidth === lastWidth) return;
      lastWidth = heads.clientWidth;
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => this.grids.layout({ fresh: true }));
    }).observe(heads);
    // A zoom or a move to another screen changes devicePixelRatio: redraw crisp.
    const view = doc.defaultView;
    const watchDpr = () => {
      view.matchMedia(`(resolution: ${view.devicePixelRatio}dppx)`).addEventListener(
        'change',
        () => {
          this.redrawLook();
          watchDpr();
        },
        { once: true },
      );
    };
    watchDpr();
    // Light / dark switch: the canvas labels take their colours from the stylesheet.
    view
      .matchMedia('(prefers-color-scheme: dark)')
      .addEventListener('change', () => this.redrawLook());
  }

  /** The legend and the grids drawn again (a new devicePixelRatio or colour scheme). */
  redrawLook() {
    drawLegend(this.grids.els.legend);
    this.grids.layout({ fresh: true });
  }

  /**
   * Shows the view of the address `hash` (its settings, explain keys and locked cell); `notes`:
   * what the page's own parsing of it had to say.
   * @returns {Promise<UpdateOutcome>}
   */
  mount(hash, notes = []) {
    this.active = true;
    this.wire();
    const parsed = parseHash(hash, { modeKeys: this.ctx.addressKeys });
    const { state } = parsed;
    const parsedExplain = parseExplainHash(hash, state, tokenize(state.text));
    this.explainState = parsedExplain.value;
    const all = [...notes, ...parsed.notes, ...parsedExplain.notes];
    this.controls.set(state);
    this.controls.setMask(this.explainState);
    showNotes(this.controls.els.notes, all);
    const shown = this.update();
    // Drawn or refused in this call, unless the workers compute it (settled is then null).
    if (this.settled === 'refused' && !this.view) {
      // Settings the address parser accepted but the module refused: fall back to the defaults.
      showNotes(this.controls.els.notes, [
        ...all,
        'The settings in the address could not be shown; showing the defaults.',
      ]);
      this.controls.set(DEFAULTS);
      this.explainState = defaultExplain();
      this.controls.setMask(this.explainState);
      return this.update();
    }
    if (parsed.view.cell) this.cells.restore(parsed.view.cell, true);
    else if (this.cells.locked) this.cells.clear();
    return shown;
  }

  /**
   * Shown again by its tab: the settings as they were. With no view drawn yet the controls may
   * still hold one asked for (a large link's first view, whose answer was dropped when the tab
   * changed) or refused (its alert is shown again): asked again, rather than replaced with the
   * default view.
   */
  resume() {
    this.active = true;
    if (this.view) this.writeAddress();
    if (this.view || this.generation > 0) return this.update();
    return this.mount('');
  }

  unmount() {
    this.active = false;
  }

  /** The address of the view on screen (without "#"), or null before the first view. */
  hash({ embed }) {
    if (!this.view) return null;
    return `${stateToHash(this.view.state)}${explainToHash(this.explainState)}${viewToHash({ cell: this.cells.lockedCell, embed })}`;
  }

  /** Writes the address of the view on screen now. */
  writeAddress() {
    if (!this.active || !this.view) return;
    this.ctx.address.write(this.hash({ embed: this.ctx.embedded() }));
  }

  /** The address, once typing pauses (chrome/address.js), for the view on screen then. */
  writeAddressOncePaused(pauseMs) {
    this.ctx.address.writeOncePaused(
      () => (this.active && this.view ? this.hash({ embed: this.ctx.embedded() }) : null),
      pauseMs,
    );
  }

  /**
   * One update for a burst of input events, with the latest values (latest input wins). Not at
   * the next animation frame: waiting for it cost up to a whole frame. With the worker (served
   * pages) this thread only sends the request and draws the answer: the update runs at the end
   * of this task (events dispatched in one task still make one update). Without it (file://), in
   * a task of its own, so that keys typed during a long computation here make one update, not
   * one each.
   */
  updateSoon() {
    if (this.updateQueued) return;
    this.updateQueued = true;
    const run = () => {
      this.updateQueued = false;
      if (!this.active) return;
      this.typing = true;
      try {
        this.update();
      } finally {
        this.typing = false;
      }
    };
    if (this.ctx.compute.workerReady) queueMicrotask(run);
    else setTimeout(run, 0);
  }

  /**
   * Validates the controls and, when they are valid, recomputes and redraws. Invalid settings
   * leave the current view on screen and show why in the alert region. The token chips, the
   * memory diagnostics and the update clock follow the outcome.
   * @returns {Promise<UpdateOutcome>}
   */
  update() {
    const { clock, compute } = this.ctx;
    clock.inputChanged(); // the clock of mha:update runs from the input event, or from here
    const generation = ++this.generation;
    const fromTyping = this.typing;
    const asked = this.request();
    if ('refused' in asked) {
      this.showAlert(asked.refused);
      if (asked.maskKey) this.controls.markMaskInvalid(asked.maskKey);
      return Promise.resolve(this.settle('refused', generation));
    }
    // Small requests are answered in this call (drawn in the input's own task, before anything
    // else runs); large ones by the workers, later, unless a newer input supersedes them first.
    const answer = compute.route(asked.request);
    if (!(answer instanceof Promise)) {
      return Promise.resolve(
        this.settle(this.show(answer, asked, generation, fromTyping), generation),
      );
    }
    this.settled = null;
    // Said only when the worker takes a while: a note that flashed for every keystroke would cost
    // a layout of the page while the worker works.
    const { heads, summary } = this.grids.els;
    clearTimeout(this.computingTimer);
    this.computingTimer = setTimeout(() => {
      heads.dataset.computing = 'true';
      summary.textContent = `Computing ${asked.tokens.length} tokens × ${asked.state.num_heads} heads in the background…`;
    }, COMPUTING_NOTE_MS);
    return answer.then((later) => {
      if (!later) return 'superseded'; // a newer input's result (or grids) will be drawn
      if (!this.active) {
        // the tab changed meanwhile
        clearTimeout(this.computingTimer);
        delete heads.dataset.computing;
        return 'superseded';
      }
      const stats = later.where === 'worker' && compute.stats ? compute.stats : null;
      return this.settle(this.show(later, asked, generation, fromTyping), null, stats);
    });
  }

  /**
   * What follows an update that drew (`drawn`) or was refused: the token chips change with the
   * grids (with the workers' answer when they compute: a change earlier would make the page lay
   * itself out while they work, and again for the grids), the memory diagnostics and the update
   * clock. A refusal in the call of its update (`generation`) is remembered: a workers' answer to
   * an earlier call is drawn, but leaves its alert, the invalid fields and the address as they are.
   * @returns {UpdateOutcome}
   */
  settle(drawn, generation, stats = null) {
    const outcome = drawn === true || drawn === 'drawn' ? 'drawn' : 'refused';
    if (outcome === 'refused' && generation !== null) this.refusedGeneration = generation;
    this.settled = outcome;
    this.controls.showTokens();
    this.ctx.showMemoryStats(stats ?? this.ctx.core.memoryStats());
    if (outcome === 'drawn') this.ctx.clock.gridsDrawn();
    else this.ctx.clock.inputRefused();
    return outcome;
  }

  /**
   * The request for the controls' settings: {request, state, tokens, explained, fields}, or
   * {refused: message, maskKey?} when a setting is refused (request.js).
   */
  request() {
    return experimentRequest(this.ctx.core, this.controls, this.explainState, this.explain);
  }

  /** The alert, with what the grids still show. */
  showAlert(message) {
    const { view } = this;
    const last = view
      ? ` The grids below still show the last valid settings (d_model=${view.state.d_model}, ` +
        `num_heads=${view.state.num_heads}, ${view.tokens.length} tokens).`
      : '';
    this.controls.showAlert(message, last);
  }

  /**
   * Draws a computed outcome (or says why it failed).
   * @returns {boolean} whether a view was drawn
   */
  show(outcome, { request, state, tokens, explained, fields }, generation, fromTyping) {
    const { heads } = this.grids.els;
    // Whatever is shown now (this answer or an earlier, quicker one), no computation is pending
    // for it: no "Computing…" note may come later.
    clearTimeout(this.computingTimer);
    delete heads.dataset.computing;
    if (outcome.error !== undefined) {
      this.showAlert(outcome.error);
      return false;
    }
    const { result } = outcome;
    const refusedSince = this.refusedGeneration > generation; // newer settings were refused meanwhile
    heads.dataset.computedIn = outcome.where;
    heads.dataset.workers = String(outcome.workers ?? 0); // 2: the heads split between two
    // How many of the workers' weight arrays went into spare memory, used before (compute_worker.js).
    heads.dataset.recycled = String(outcome.recycled ?? 0);
    // Whether the grids' result holds V and the head outputs (not weights_only): tests read it.
    heads.dataset.fullForward = String(result.head_outputs !== undefined);
    heads.dataset.reused = String(!!outcome.reused); // the kept result of an equal request
    // A result computed ahead in idle time (one token more or less), or one shown before.
    heads.dataset.ahead = String(!!outcome.ahead);
    heads.dataset.kept = String(!!outcome.kept);
    if (!refusedSince) this.controls.clearAlert({ masks: true });
    this.explainState = explained;
    this.controls.showMaskFields(this.explainState.drawn.length);
    const firstView = this.view === null;
    const replaced = this.view?.result;
    this.render(state, tokens, result);
    this.explain.update({
      state,
      tokens,
      result,
      request,
      explain: this.explainState,
      maskFields: fields,
    });
    // The grids, their tables, the panels and the export read the new result from here on: the
    // one it replaced may give its weights' memory back to the worker that computed it.
    if (replaced !== result) this.ctx.compute.release(replaced);
    if (refusedSince) return true; // the address and preset follow the controls, which are refused
    // The address: once typing pauses; the first view's, after the frame that paints it
    // (history.replaceState and the favicon fetched again would delay the first grid).
    if (fromTyping) this.writeAddressOncePaused();
    else if (firstView) this.writeAddressOncePaused(0);
    else this.writeAddress();
    this.controls.els.preset.value = presetOf(state) ?? '';
    return true;
  }

  render(state, tokens, result) {
    const work = this.ctx.core.experimentWork({ tokens: tokens.length, d_model: result.d_model });
    this.view = { state, tokens, result };
    this.grids.render(state, tokens, result, this.explainState.off, work);
    const c = this.cells.cell;
    if (c && (c.row >= tokens.length || c.col >= tokens.length || c.head >= result.num_heads)) {
      this.cells.clear();
    }
    this.grids.select(this.cells.cell, this.view, this.cells.locked);
  }

  /**
   * A cell was clicked (or activated from the keyboard): with the drawn mask it toggles that
   * cell's mask; otherwise it locks the cell and the step panel explains it.
   */
  activateCell(cell) {
    if (this.explainState.mask === 'drawn') {
      this.explainState = {
        ...this.explainState,
        drawn: toggleCell(this.explainState.drawn, cell.row, cell.col),
      };
      this.update();
    }
    this.cells.toggle(cell); // explain.lock follows the lock, in onCellChange
  }

  /** A grid reports the pointer (hover), the focus or the arrow keys; see draw/selection.js. */
  pointOrMove(sel) {
    const { cells } = this;
    if (!sel || sel.source === 'pointer') cells.hover(sel);
    else if (sel.source === 'focus') {
      if (!cells.cell) cells.move(sel);
    } else cells.move(sel);
  }

  /** The current cell changed: draw it, say it (not on hover), keep a lock in the address. */
  onCellChange(cell, { locked, reason }) {
    const { view } = this;
    if (reason !== 'hover') this.grids.drawnSelection = undefined; // the lock note may change
    this.grids.select(cell, view, this.cells.locked);
    if (!view) return;
    if (cell && reason !== 'hover') {
      const { tokens, result } = view;
      const { n, m } = result;
      const w = result.attn_weights[(cell.head * n + cell.row) * m + cell.col];
      const lock = reason === 'lock' ? 'locked' : reason === 'unlock' ? 'unlocked' : undefined;
      this.announcer.say(
        announceText(cell.head, tokens[cell.row], tokens[cell.col], w, {
          masked: result.fully_masked_rows[cell.head * n + cell.row] === 1,
          lock,
        }),
      );
    } else if (reason === 'clear') this.announcer.say('No cell selected.');
    this.grids.els.readout.dataset.locked = String(locked);
    // The explain section's step panel shows the locked cell. Not in embed mode, where the step
    // panel is hidden: it would load the full module and ask for the full forward for nothing.
    if (locked && reason !== 'hover' && !this.ctx.embedded()) {
      this.explain.lock(cell);
      // A result computed for the grids alone (weights_only) has no V or head outputs for the
      // step panel (it says they are being computed): compute them now (the request asks for
      // them while a cell is locked).
      if (!view.result.head_outputs && keepsIntermediates(view.result.num_heads, view.result.n))
        this.updateSoon();
    } else if (reason === 'unlock' || reason === 'clear') this.explain.lock(null);
    // A moment later: holding an arrow key would call history.replaceState too often.
    if (reason === 'restore') this.writeAddress();
    else if (reason !== 'hover') {
      clearTimeout(this.cellAddressTimer);
      this.cellAddressTimer = setTimeout(() => this.writeAddress(), CELL_ADDRESS_MS);
    }
  }

  /** What the exports describe: the settings, the tokens and every head shown (null: no view). */
  exportData() {
    return this.view ? this.grids.exportData(this.view) : null;
  }

  /** What the PNG export composes (chrome/snapshot.js). */
  snapshotParts() {
    return this.grids.snapshotParts(this.view);
  }

  /** The seed of the view on screen (the warm-up keeps its kept draws). */
  seed() {
    return this.view ? this.view.state.seed : DEFAULTS.seed;
  }

  /** No core: nothing can be computed, and the page says why. */
  unavailable(message) {
    this.grids.els.summary.textContent = 'The attention core is not available.';
    this.showAlert(message);
  }
}
