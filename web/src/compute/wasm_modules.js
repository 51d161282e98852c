// The two wasm modules (docs/js-api.md): the attention core (mha_wasm_core.js, global
// createMhaCore), loaded by index.html with the page, and the full module with the date model,
// the head patterns and the file loaders (mha_wasm.js, global createMhaModule), added as a classic
// <script> only when first needed. The <mha-attention> element (element/element.js) uses the same loader
// class with its own folder as the base: it adds the core for its attention views and
// the full module only for what needs it. One loader per bundle (the page's boot file, the
// element's), so one core and one full module, however many views use them.
// Classic scripts, not fetch() or import(): they load from file:// and under script-src 'self'.
// The modules' API is typed by cpp/bindings/wasm/mha_wasm.d.ts (tsconfig.json; docs/js-api.md).
/** @typedef {import('../../../cpp/bindings/wasm/mha_wasm').MhaCoreModule} MhaCoreModule */
/** @typedef {import('../../../cpp/bindings/wasm/mha_wasm').MhaModule} MhaModule */

export const CORE_SCRIPT = 'mha_wasm_core.js';
export const FULL_SCRIPT = 'mha_wasm.js';

/**
 * Shares one promise per call of `start`; a failed start is forgotten so that a later call may retry.
 * @template T
 * @param {() => Promise<T>} start
 * @returns {() => Promise<T>}
 */
function once(start) {
  let p = null;
  return () => {
    if (!p) {
      p = start().catch((e) => {
        p = null;
        throw e;
      });
    }
    return p;
  };
}

export class WasmModules {
  /**
   * @param {object} [p]
   * @param {Document} [p.doc] the page
   * @param {string|null} [p.base] the URL the scripts are loaded relative to (e.g. the URL of
   *   mha-attention.js); null: the page's folder (src relative to the document)
   * @param {string} [p.beside] the file the scripts must be next to, named in a missing one's error
   */
  constructor({ doc = document, base = null, beside = 'index.html' } = {}) {
    this.doc = doc;
    this.base = base || null;
    this.beside = beside;
    /** src → the promise of loadScript's script. */
    this.scripts = new Map();
    /**
     * The attention core, its script added first when the page has not loaded it (the element):
     * one instance per loader, however many callers.
     * @type {() => Promise<MhaCoreModule>}
     */
    this.loadCore = once(async () => {
      if (!this.coreScriptLoaded()) await this.loadScript(CORE_SCRIPT);
      return this.startCore();
    });
    /**
     * The full module (core + DateModel, head patterns, explain and file-loading functions),
     * loaded on first use: one instance per loader.
     * @type {() => Promise<MhaModule>}
     */
    this.loadFullModule = once(async () => {
      if (typeof createMhaModule !== 'function') await this.loadScript(FULL_SCRIPT);
      if (typeof createMhaModule !== 'function')
        throw new Error(`${FULL_SCRIPT} loaded but defines no createMhaModule`);
      return createMhaModule();
    });
  }

  /** Script `name`'s src: against the base (default: the page). */
  scriptSrc(name) {
    return this.base ? new URL(name, this.base).href : name;
  }

  /**
   * Adds <script src="`name`"> once (later calls share the first promise); resolves when it has
   * run. Rejects with a message naming the file and where it was looked for when it is missing.
   */
  loadScript(name) {
    const src = this.scriptSrc(name);
    if (!this.scripts.has(src)) {
      this.scripts.set(
        src,
        new Promise((resolve, reject) => {
          const s = this.doc.createElement('script');
          s.src = src;
          s.addEventListener('load', () => resolve());
          s.addEventListener('error', () => {
            s.remove();
            this.scripts.delete(src); // a later attempt may try again
            reject(
              new Error(
                `${name} did not load${this.base ? ` from ${s.src}` : ''}: keep it next to ${this.beside} (./scripts/build.sh writes it)`,
              ),
            );
          });
          (this.doc.body || this.doc.head).append(s);
        }),
      );
    }
    return this.scripts.get(src);
  }

  /**
   * Forgets script `name` (loadScript's shared promise): the next loadScript adds it again. For a
   * script that ran but did not define what it should (explain.js: the Files panel's).
   */
  forgetScript(name) {
    this.scripts.delete(this.scriptSrc(name));
  }

  /** Whether the core's script has run (index.html's <script src="mha_wasm_core.js">, or loadCore's). */
  coreScriptLoaded() {
    return typeof createMhaCore === 'function';
  }

  /**
   * The page's attention core (index.html loads its script). @returns {Promise<MhaCoreModule>} rejected,
   * never thrown: the factory throws at once where there is no WebAssembly (a browser setting or
   * policy), and callers start it before their own try (main.js). The first call takes the
   * module the core's script already started (createMhaCore.started: its tag's data-start,
   * cpp/bindings/wasm/start_early.js); a later one, after a failure, starts another.
   */
  startCore() {
    if (!this.coreScriptLoaded()) {
      return Promise.reject(new Error(`${CORE_SCRIPT} did not load`));
    }
    // A failure's message without Emscripten's advice to rebuild with ASSERTIONS (not the
    // reader's to act on), for the page and the element alike.
    const plain = (e) =>
      Promise.reject(
        e instanceof Error ? new Error(e.message.replace(/ Build with -s ASSERTIONS=1.*/, '')) : e,
      );
    const early = createMhaCore.started;
    createMhaCore.started = null;
    try {
      return (early ?? createMhaCore()).catch(plain); // no fetch: the glue decodes its inlined wasm (pre.js)
    } catch (e) {
      return plain(e);
    }
  }
}
