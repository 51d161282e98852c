// The two wasm modules (docs/js-api.md): the attention core (mha_wasm_core.js, global
// createMhaCore), loaded by index.html with the page, and the full module with the date model,
// the head patterns and the file loaders (mha_wasm.js, global createMhaModule), added as a classic
// <script> only when first needed. The <mha-attention> element (element.js) uses the same loaders
// with its own folder as the base (setScriptBase): it adds the core for its attention views and
// the full module only for what needs it. One core and one full module per page (per bundle),
// however many views use them.
// Classic scripts, not fetch() or import(): they load from file:// and under script-src 'self'.
/* global createMhaCore, createMhaModule */

export const CORE_SCRIPT = 'mha_wasm_core.js';
export const FULL_SCRIPT = 'mha_wasm.js';

// Where the scripts are: by default the page's folder (src relative to the document); the
// element sets its own script's URL, so that a course page may load it from another folder.
let base = null;
let beside = 'index.html';

/**
 * Loads the module scripts relative to `url` (e.g. the URL of mha-attention.js) instead of the
 * page; `besideName` names that file in the error of a missing script.
 */
export function setScriptBase(url, besideName) {
  base = url || null;
  if (besideName) beside = besideName;
}

/** src → the promise of loadScript's script. */
const scripts = new Map();
/** Script `name`'s src: against the base of setScriptBase (default: the page). */
const scriptSrc = (name) => (base ? new URL(name, base).href : name);

/**
 * Adds <script src="`name`"> once (later calls share the first promise); resolves when it has run.
 * `name` is resolved against the base of setScriptBase (default: the page).
 * Rejects with a message naming the file and where it was looked for when it is missing.
 */
export function loadScript(name) {
  const src = scriptSrc(name);
  if (!scripts.has(src)) {
    scripts.set(src, new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = src;
      s.addEventListener('load', () => resolve());
      s.addEventListener('error', () => {
        s.remove();
        scripts.delete(src); // a later attempt may try again
        reject(new Error(`${name} did not load${base ? ` from ${s.src}` : ''}: keep it next to ${beside} (./scripts/build.sh writes it)`));
      });
      (document.body || document.head).append(s);
    }));
  }
  return scripts.get(src);
}

/**
 * Forgets script `name` (loadScript's shared promise): the next loadScript adds it again. For a
 * script that ran but did not define what it should (explain.js: the Files panel's).
 */
export function forgetScript(name) {
  scripts.delete(scriptSrc(name));
}

/** Whether the core's script has run (index.html's <script src="mha_wasm_core.js">, or loadCore's). */
export function coreScriptLoaded() {
  return typeof createMhaCore === 'function';
}

/**
 * The page's attention core (index.html loads its script). @returns {Promise<object>} rejected,
 * never thrown: the factory throws at once where there is no WebAssembly (a browser setting or
 * policy), and callers start it before their own try (main.js start). The first call takes the
 * module the core's script already started (createMhaCore.started: its tag's data-start,
 * cpp/bindings/wasm/start_early.js); a later one, after a failure, starts another.
 */
export function startCore() {
  if (!coreScriptLoaded()) {
    return Promise.reject(new Error(`${CORE_SCRIPT} did not load`));
  }
  // A failure's message without Emscripten's advice to rebuild with ASSERTIONS (not the
  // reader's to act on), for the page and the element alike.
  const plain = (e) => Promise.reject(e instanceof Error ? new Error(e.message.replace(/ Build with -s ASSERTIONS=1.*/, '')) : e);
  const early = createMhaCore.started;
  createMhaCore.started = null;
  try {
    return (early ?? createMhaCore()).catch(plain); // no fetch: the glue decodes its inlined wasm (pre.js)
  } catch (e) {
    return plain(e);
  }
}

/** Shares one promise per module; a failed start is forgotten so that a later call may retry. */
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

/**
 * The attention core, its script added first when the page has not loaded it (the element):
 * one instance per page, however many callers. @returns {Promise<object>}
 */
export const loadCore = once(async () => {
  if (!coreScriptLoaded()) await loadScript(CORE_SCRIPT);
  return startCore();
});

/**
 * The full module (core + DateModel, head patterns, explain and file-loading functions), loaded
 * on first use: one instance per page. @returns {Promise<object>}
 */
export const loadFullModule = once(async () => {
  if (typeof createMhaModule !== 'function') await loadScript(FULL_SCRIPT);
  if (typeof createMhaModule !== 'function') throw new Error(`${FULL_SCRIPT} loaded but defines no createMhaModule`);
  return createMhaModule();
});
