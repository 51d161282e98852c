// What every trained-model mode of the page shares (the Date translator, modes/date/date_mode.js;
// the English mode, modes/english/english_mode.js): a mode of the page's interface (chrome/page.js:
// mount, resume, unmount, hash) whose model is loaded once from its file (model_bytes.js) into the
// full module, with the roles of its heads file when they were measured on that very file
// (heads_file.js); the panel's state (data-state: 'idle', 'loading', 'error', 'ready'), the summary
// line and the alert; heads switched off and back on; the address written now or once typing
// pauses; the grids laid out again on a resize and a change of colour scheme; the time of each
// update on the summary (data-ms).
//
// A model's mode extends TrainedMode and implements the hooks at the end of the class (each
// throws here); its `grids` has measure(), layout(), resized(), relayout(), markOff(off) and `theme`.
import { drawLegend } from '../../draw/legend.js';
import { errorMessage, sentence, showNotes } from '../../chrome/alerts.js';
import { viewToHash } from '../../chrome/address_keys.js';
import { modelBytes } from './model_bytes.js';
import { measuredElsewhere } from './heads_file.js';

/** Milliseconds after the last change before the address follows it. */
const ADDRESS_DELAY_MS = 250;

/** An update's milliseconds as the summary shows them: one decimal below 10, else whole. */
export function msText(ms) {
  return ms < 10 ? ms.toFixed(1) : String(Math.round(ms));
}

/**
 * @template {{checksum: string}} Model the model's class in the full module (DateModel, EnglishModel)
 */
export class TrainedMode {
  /**
   * @param {object} ctx what the page gives every mode (main.js): doc, modules (the wasm loader:
   *   the full module and the model's script), labels, address, embedded(), showMemoryStats, clock
   * @param {object} p
   * @param {string} p.id the address's mode=…
   * @param {HTMLElement} p.panel the mode's tab panel
   * @param {object} p.els the panel's elements: at least form, text, alert, notes, summary,
   *   modelInfo, legend, allOn
   * @param {string} p.name the model as a message names it ('date model', 'English model')
   * @param {string} p.rolesName what its heads file's roles are called in the model line
   * @param {{parse: (hash: string) => {state: object, notes: string[]}, toHash: (state: object) => string}} p.address
   *   the mode's address keys (its <name>_state.js)
   * @param {object} p.defaults the settings before any address
   * @param {HTMLElement} p.resizeTarget the element whose size changes lay the grids out again
   * @param {Promise[]} [p.alsoLoad] what the first view waits for besides the model (a stylesheet)
   */
  constructor(
    ctx,
    { id, panel, els, name, rolesName, address, defaults, resizeTarget, alsoLoad = [] },
  ) {
    this.id = id;
    this.ctx = ctx;
    this.panel = panel;
    this.els = els;
    this.name = name;
    this.rolesName = rolesName;
    this.address = address;
    this.resizeTarget = resizeTarget;
    this.alsoLoad = alsoLoad;
    this.state = { ...defaults, off: [...(defaults.off ?? [])] };
    /** @type {import('../../../../cpp/bindings/wasm/mha_wasm').MhaModule|null} the full module, once loaded */
    this.mod = null;
    /** @type {Model|null} its model, once loaded (makeModel) */
    this.model = null;
    this.loading = null;
    this.active = false;
    this.wired = false;
    /** The run on screen: replaced only by a successful runAndDraw(). */
    this.result = null;
    this.grids = null;
    panel.dataset.state = 'idle';
    panel.dataset.tables = 'ready'; // none pending
  }

  /** Shows the view of address `hash` (after the notes about the whole address, `notes`). */
  mount(hash, notes = []) {
    const parsed = this.address.parse(hash);
    return this.enter(parsed.state, [...notes, ...parsed.notes]);
  }

  /** Shown again by its tab: the settings as they were. */
  resume() {
    return this.enter(this.state);
  }

  /** Hidden by another tab: no address write from this mode any more. */
  unmount() {
    this.active = false;
    this.ctx.address.drop();
  }

  /** The address of the current settings (without "#"). */
  hash({ embed }) {
    return `${this.address.toHash(this.state)}${viewToHash({ embed })}`;
  }

  /** Shows this mode with `state`; loads the model the first time. */
  async enter(state, notes = []) {
    this.active = true;
    this.state = { ...this.state, ...state };
    this.state.off = [...(this.state.off ?? [])];
    this.showControls();
    showNotes(this.els.notes, notes);
    this.writeHash({ now: true });
    this.wire();
    drawLegend(this.els.legend);
    if (!(await this.load()) || !this.active) return;
    this.firstView();
    this.writeHash({ now: true });
    this.setState('ready');
  }

  /** The panel's data-state: 'idle', 'loading', 'error' or 'ready'. */
  setState(s) {
    this.panel.dataset.state = s;
  }

  /** Loads the model once (again on a later visit after a failure). @returns {Promise<boolean>} */
  load() {
    this.loading ??= this.loadOnce().then(
      () => true,
      (e) => {
        this.loading = null;
        this.setState('error');
        this.els.summary.textContent = `The ${this.name} is not available.`;
        this.showAlert(`The ${this.name} could not be loaded: ${errorMessage(e)}`);
        return false;
      },
    );
    return this.loading;
  }

  async loadOnce() {
    this.setState('loading');
    this.els.summary.textContent = `Loading the ${this.name}…`;
    const source = this.modelSource();
    const [mod, { bytes, heads }] = await Promise.all([
      this.ctx.modules.loadFullModule(),
      modelBytes(source, this.ctx.modules, this.ctx.doc.defaultView),
      ...this.alsoLoad,
    ]);
    this.mod = mod;
    this.model = this.makeModel(mod, bytes);
    this.opened(bytes, heads, measuredElsewhere(heads, this.model.checksum, this.rolesName));
  }

  /** Listeners, once: the mode's controls, "every head on", resizes and the colour scheme. */
  wire() {
    if (this.wired) return;
    this.wired = true;
    this.wireControls();
    this.els.allOn.addEventListener('click', () => {
      this.state.off = [];
      this.grids.markOff(this.state.off);
      this.update();
      this.writeHash();
    });
    // Widths and label colours are read here, not on every keystroke: reading them forces a
    // style and layout pass in the middle of an update.
    let frame = 0;
    new ResizeObserver(() => {
      if (!this.grids.resized()) return;
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => this.grids.relayout());
    }).observe(this.resizeTarget);
    this.ctx.doc.defaultView
      .matchMedia('(prefers-color-scheme: dark)')
      .addEventListener('change', () => {
        this.grids.theme = null;
        drawLegend(this.els.legend);
        this.grids.layout();
      });
  }

  /** The input changed: runs the model again once it is loaded. */
  onInput() {
    if (!this.model) return;
    this.update();
  }

  /**
   * Runs the model on the input and draws (runAndDraw); a refused input keeps the last view and
   * says why. The time it took is on the summary as data-ms. @returns {boolean} drawn
   */
  update() {
    const t0 = performance.now();
    let drawn = false;
    try {
      drawn = this.runAndDraw();
    } finally {
      const ms = performance.now() - t0;
      this.els.summary.dataset.ms = ms.toFixed(2);
      this.timed(ms, drawn);
      this.ctx.showMemoryStats(this.mod.memoryStats());
    }
    return drawn;
  }

  /** Whether head `key` (the mode's address key of a head) is switched off. */
  isOff(key) {
    return this.state.off.includes(key);
  }

  /** Switches head `key` off or back on, and runs the model again. */
  setOff(key, off) {
    const now = this.state.off.filter((k) => k !== key);
    if (off) now.push(key);
    this.state.off = now;
    this.grids.markOff(now);
    if (this.model) this.update();
    this.writeHash();
  }

  /**
   * The settings into the address, now or a moment after the last change (history.replaceState
   * on every keystroke would be throttled by the browser, with a console warning).
   */
  writeHash({ now = false } = {}) {
    if (!this.active) return;
    const hashOf = () => (this.active ? this.hash({ embed: this.ctx.embedded() }) : null);
    if (now) this.ctx.address.write(hashOf());
    else this.ctx.address.writeLater(hashOf, ADDRESS_DELAY_MS);
  }

  /** A refused input: why, and what stays on screen (lastShown); the text box marked invalid. */
  fail(message) {
    this.showAlert(message + (this.result ? this.lastShown() : ''));
    this.els.text.setAttribute('aria-invalid', 'true');
  }

  /** The alert says `message`, as a sentence. */
  showAlert(message) {
    this.els.alert.textContent = sentence(message);
  }

  /** No alert; the text box valid again. */
  clearAlert() {
    if (this.els.alert.textContent) this.els.alert.textContent = '';
    this.els.text.removeAttribute('aria-invalid');
  }

  // The hooks a model's mode implements.

  /** Where its model file is (model_bytes.js modelBytes' source); throws when this build of the page has none. @returns {{file?: string, script: string, global: string, heads?: object|null, missing?: string}} */
  modelSource() {
    throw new Error(`${this.id}: modelSource() is not implemented`);
  }

  /** Its controls from this.state (entering the mode). */
  showControls() {
    throw new Error(`${this.id}: showControls() is not implemented`);
  }

  /** Its controls' listeners (once). */
  wireControls() {
    throw new Error(`${this.id}: wireControls() is not implemented`);
  }

  /**
   * Its model from the file's bytes; throws on a bad file.
   * @param {import('../../../../cpp/bindings/wasm/mha_wasm').MhaModule} mod the full module
   * @param {Uint8Array} bytes the model file
   * @returns {Model}
   */
  makeModel(mod, bytes) {
    throw new Error(`${this.id}: makeModel() is not implemented (${mod}, ${bytes.length} bytes)`);
  }

  /**
   * Its model line and roles, once loaded.
   * @param {Uint8Array} bytes the model file
   * @param {object|null} heads its heads file
   * @param {string|null} elsewhere why the heads file's roles are not shown, or null
   */
  opened(bytes, heads, elsewhere) {
    throw new Error(
      `${this.id}: opened() is not implemented (${bytes.length} bytes, ${heads}, ${elsewhere})`,
    );
  }

  /** What its first view needs once loaded, then this.update(). */
  firstView() {
    throw new Error(`${this.id}: firstView() is not implemented`);
  }

  /** Runs the model on its input and draws; false when refused (this.fail). @returns {boolean} */
  runAndDraw() {
    throw new Error(`${this.id}: runAndDraw() is not implemented`);
  }

  /** Its summary line after an update of `ms` milliseconds (`drawn`: whether it drew). */
  timed(ms, drawn) {
    throw new Error(`${this.id}: timed() is not implemented (${ms} ms, drawn ${drawn})`);
  }

  /** The alert's words on what stays on screen after a refused input. @returns {string} */
  lastShown() {
    throw new Error(`${this.id}: lastShown() is not implemented`);
  }
}
