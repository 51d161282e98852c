// Starting the wasm core (build/wasm/mha_wasm.js, a classic script defining createMhaModule).
//
// Why the fetch guard: Emscripten 3.1.6 (Debian 12's) with -sSINGLE_FILE still tries
// `fetch("data:application/octet-stream;base64,…")` for its own inlined wasm before it falls back
// to decoding the base64 in place. Under the page's policy (default-src 'self', so connect-src
// 'self') that fetch is refused and Chrome logs a CSP violation on every load, although the
// fallback then works. While the core starts, fetches of data: URLs are therefore refused
// up front, quietly, so the glue goes straight to its in-place decoding; other URLs pass
// untouched and the real fetch is put back as soon as the core is ready.

/**
 * @param {() => Promise<object>} factory createMhaModule
 * @param {{fetch?: Function}} scope the global object whose fetch the glue calls (window)
 * @returns {Promise<object>} the module
 */
export async function loadCore(factory, scope = globalThis) {
  const realFetch = scope.fetch;
  if (typeof realFetch !== 'function') return factory();
  const guarded = function fetchWithoutDataUrls(input, init) {
    const url = typeof input === 'string' ? input : String(input?.url ?? input);
    if (url.startsWith('data:')) {
      return Promise.reject(new TypeError('data: URL fetch skipped; the glue decodes it in place'));
    }
    return realFetch.call(this, input, init);
  };
  scope.fetch = guarded;
  try {
    return await factory();
  } finally {
    if (scope.fetch === guarded) scope.fetch = realFetch;
  }
}
