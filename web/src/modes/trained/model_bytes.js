// A trained model's file as the page and the element get it: fetched next to index.html when the
// page is served (where the build put the file), else from a classic script of scripts/build_web.mjs
// that sets a global {bytes, safetensors: <base64 of the file>, heads: <its heads file, or null>}:
// a script loads from file:// too, where a page may not fetch its own files.
import { base64ToBytes } from '../../compute/bytes.js';

/**
 * The model's bytes and its heads file.
 * @param {object} source where the model is
 * @param {string} [source.file] the model file to fetch when served (none: the script alone)
 * @param {string} source.script the classic script with the same bytes as base64
 * @param {string} source.global the global that script sets
 * @param {object|null} [source.heads] the heads file, when the build gave it apart (default: the
 *   script's `heads`; null when the bytes were fetched)
 * @param {string} [source.missing] the error when neither can be read (default: the loader's, which
 *   names the script and where it belongs)
 * @param {object} modules the wasm loader (compute/wasm_modules.js): its loadScript adds a script once
 * @param {Window} [win] the page's window (for fetch and the address's protocol)
 * @returns {Promise<{bytes: Uint8Array, heads: object|null, experiments: object|null}>}
 *   experiments: the script's `experiments` (the English model's measurements of its heads,
 *   scripts/build_web.mjs readExperiments), null when fetched or absent
 */
export async function modelBytes(source, modules, win = window) {
  const heads = (bundle) => (source.heads !== undefined ? source.heads : (bundle?.heads ?? null));
  if (source.file && win.location?.protocol !== 'file:') {
    try {
      const response = await win.fetch(source.file);
      if (response.ok)
        return {
          bytes: new Uint8Array(await response.arrayBuffer()),
          heads: heads(null),
          experiments: null,
        };
    } catch {
      // the script has the same bytes
    }
  }
  const bundled = () => {
    const b = globalThis[source.global];
    return typeof b === 'object' && b ? b : null;
  };
  if (!bundled()) {
    try {
      await modules.loadScript(source.script);
    } catch (e) {
      if (source.missing) throw new Error(source.missing);
      throw e;
    }
  }
  const bundle = bundled();
  if (!bundle) throw new Error(`${source.script} loaded but holds no model`);
  return {
    bytes: base64ToBytes(bundle.safetensors),
    heads: heads(bundle),
    experiments: bundle.experiments ?? null,
  };
}
