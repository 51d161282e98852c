// The English mode as the page's first load knows it: a stand-in with the modes' interface
// (chrome/page.js) that adds the mode's own script, dist/english.js (english_entry.js and its
// imports), when the mode is first shown, and then hands every call to the EnglishMode it makes.
// A classic script tag, not import(): it loads from file:// and under script-src 'self'.
export class LazyEnglishMode {
  /** @param {object} ctx what the page gives every mode (main.js) */
  constructor(ctx) {
    this.id = 'english';
    this.ctx = ctx;
    // The share bar goes into the panel until the mode has built its own slot.
    this.panel = this.shareSlot = ctx.doc.getElementById('english-panel');
    this.skipTarget = '#english-panel';
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
      await this.ctx.modules.loadScript('english.js');
      this.mode ??= globalThis.mhaEnglishMode.make(this.ctx, this.panel);
      this.shareSlot = this.mode.shareSlot;
      if (this.active) await then(this.mode);
    } catch (e) {
      this.panel.textContent = `The English mode could not be loaded: ${e.message}`;
    }
  }
}
