// The two wasm modules (docs/js-api.md): the attention core, loaded by index.html with the page
// (mha_wasm_core.js, global createMhaCore), and the full module with the date model
// (mha_wasm.js, global createMhaModule), added as a classic <script> only when first needed.
// Classic scripts, not fetch() or import(): they load from file:// and under script-src 'self'.
/* global createMhaCore, createMhaModule */

export const CORE_SCRIPT = 'mha_wasm_core.js';
export const FULL_SCRIPT = 'mha_wasm.js';

/**
 * Adds <script src="`src`"> once (later calls share the first promise); resolves when it has run.
 * Rejects with a message naming the file when it is missing.
 */
const scripts = new Map();
export function loadScript(src) {
  if (!scripts.has(src)) {
    scripts.set(src, new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = src;
      s.addEventListener('load', () => resolve());
      s.addEventListener('error', () => {
        s.remove();
        scripts.delete(src); // a later attempt may try again
        reject(new Error(`${src} did not load: keep it next to index.html (./scripts/build.sh writes it)`));
      });
      document.body.append(s);
    }));
  }
  return scripts.get(src);
}

/** Whether index.html's <script src="mha_wasm_core.js"> ran (it defines createMhaCore). */
export function coreScriptLoaded() {
  return typeof createMhaCore === 'function';
}

/** The page's attention core (index.html loads its script). @returns {Promise<object>} */
export function startCore() {
  if (!coreScriptLoaded()) {
    return Promise.reject(new Error(`${CORE_SCRIPT} did not load`));
  }
  return createMhaCore(); // no fetch: the glue decodes its inlined wasm (pre.js)
}

let full = null;
/** The full module (core + DateModel), loaded on first use. @returns {Promise<object>} */
export function loadFullModule() {
  if (!full) {
    full = loadScript(FULL_SCRIPT)
      .then(() => {
        if (typeof createMhaModule !== 'function') throw new Error(`${FULL_SCRIPT} loaded but defines no createMhaModule`);
        return createMhaModule();
      })
      .catch((e) => {
        full = null;
        throw e;
      });
  }
  return full;
}
