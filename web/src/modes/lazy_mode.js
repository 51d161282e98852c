// A mode as the page's first load knows it: a stand-in with the modes' interface (chrome/page.js)
// that adds the mode's own script (a bundle of scripts/build_web.mjs) when the mode is first shown,
// makes the mode with the factory that script publishes on globalThis, and then hands it every
// call. A classic script tag, not import(): it loads from file:// and under script-src 'self'.
// The Date translator (dist/date.js) and the English mode (dist/english.js) are loaded this way,
// so the first load carries neither.
/**
 * The alert when a mode cannot be loaded: the error, then where its script belongs, unless the
 * error already says where a missing file belongs (the loader's "… did not load: keep it next to
 * index.html …"), so that no message says it twice.
 */
export function failureText(name, script, message) {
  const text = `The ${name} could not be loaded: ${String(message).replace(/\.$/, '')}.`;
  return /keep (it|them) next to/i.test(message)
    ? text
    : `${text} Keep ${script} next to index.html (./scripts/build.sh writes it).`;
}

export class LazyMode {
  /**
   * @param {object} ctx what the page gives every mode (main.js)
   * @param {object} p
   * @param {string} p.id the address's mode=… and the tab's data-mode
   * @param {string} p.script the mode's script, next to index.html (e.g. 'date.js')
   * @param {string} p.global the name of the global its script publishes: {make(ctx, panel)}
   * @param {string} p.panel the id of its tab panel
   * @param {string} [p.shareSlot] the id of its share bar's slot (default: the panel, until the
   *   mode has built its own)
   * @param {string} p.name what the mode is called in a message
   * @param {boolean|string} [p.exports] the loaded mode's `exports` (the export buttons shown
   *   with its tab before its script has loaded)
   */
  constructor(ctx, { id, script, global, panel, shareSlot, name, exports = false }) {
    this.id = id;
    this.ctx = ctx;
    this.script = script;
    this.global = global;
    this.name = name;
    this.panel = ctx.doc.getElementById(panel);
    this.shareSlot = shareSlot ? ctx.doc.getElementById(shareSlot) : this.panel;
    this.mode = null;
    this.declaredExports = exports;
  }

  /** The skip link's target: the loaded mode's (its grids); before, the mode's panel. */
  get skipTarget() {
    return this.mode?.skipTarget ?? `#${this.panel.id}`;
  }

  /** Whether the export buttons apply (the loaded mode's answer; before, the one declared). */
  get exports() {
    return this.mode?.exports ?? this.declaredExports;
  }

  figureParts() {
    if (!this.mode) throw new Error(`the ${this.name} is not loaded yet`);
    return this.mode.figureParts();
  }

  exportData() {
    return this.mode?.exportData() ?? null;
  }

  snapshotParts() {
    return this.mode.snapshotParts();
  }

  mount(hash, notes) {
    return this.show((m) => m.mount(hash, notes));
  }

  resume() {
    return this.show((m) => m.resume());
  }

  unmount() {
    this.active = false;
    this.mode?.unmount();
  }

  hash(options) {
    return this.mode?.hash(options) ?? null;
  }

  async show(then) {
    this.active = true;
    try {
      await this.ctx.modules.loadScript(this.script);
      if (!this.mode) {
        const factory = globalThis[this.global];
        if (!factory) throw new Error(`${this.script} loaded but defines no ${this.global}`);
        this.mode = factory.make(this.ctx, this.panel);
      }
      this.shareSlot = this.mode.shareSlot;
      if (this.active) await then(this.mode);
    } catch (e) {
      const p = this.ctx.doc.createElement('p');
      p.className = 'alert';
      p.setAttribute('role', 'alert');
      p.textContent = failureText(this.name, this.script, e.message);
      this.panel.prepend(p);
    }
  }
}
