// --pre-js for mha_wasm.js and mha_wasm_core.js: instantiate the inlined wasm without fetch().
//
// Emscripten 3.1.6's glue, even with -sSINGLE_FILE, first tries fetch("data:...base64") in a
// browser and only falls back to decoding in place when that fails. A page under
// `Content-Security-Policy: default-src 'self'` refuses the data: fetch (and logs a violation on
// every load), so the module decodes its own bytes (getBinary -> tryParseAsDataURI) and hands
// them to WebAssembly.instantiate, which 'wasm-unsafe-eval' allows. A caller that passes its own
// instantiateWasm keeps it. This runs inside the module factory, where getBinary and
// wasmBinaryFile are in scope when createWasm() calls the hook.
//
// scripts/build_web.mjs gzips the inlined bytes of the copies it puts in dist/ (base64 of wasm
// compresses badly; base64 of gzip does not grow again under HTTP gzip): bytes starting with the
// gzip magic 1f 8b are inflated with the platform's DecompressionStream first, fed from a stream
// that holds the bytes (a Blob's stream goes through the browser process chunk by chunk, which
// delays the first grid). The glue in build/wasm/ holds plain wasm (magic 00 61 73 6d) and is used
// as is.
if (!Module['instantiateWasm']) {
  Module['instantiateWasm'] = function (imports, receiveInstance) {
    // abort() rejects the factory's promise: the caller sees why (the glue only logs an error
    // thrown by this hook, and its promise then never settles). abort() then throws, which is
    // caught here: from a promise handler it would be an unhandled rejection.
    var fail = function (reason) {
      err('failed to instantiate the wasm core: ' + reason);
      try {
        abort(reason);
      } catch (e) {
        /* the promise is rejected: the caller reports it */
      }
    };
    try {
      // Uint8Array.fromBase64 (Chromium 140+, Firefox 133+, Safari 18.2+) decodes natively; the
      // glue's own decoder (atob, then a byte loop over the whole module) is the fallback.
      var bytes =
        typeof Uint8Array.fromBase64 === 'function' && isDataURI(wasmBinaryFile)
          ? Uint8Array.fromBase64(wasmBinaryFile.slice(dataURIPrefix.length))
          : getBinary(wasmBinaryFile);
      var ready =
        bytes[0] === 0x1f && bytes[1] === 0x8b
          ? new Response(
              new ReadableStream({
                start: function (controller) {
                  controller.enqueue(bytes);
                  controller.close();
                },
              }).pipeThrough(new DecompressionStream('gzip')),
            ).arrayBuffer()
          : Promise.resolve(bytes);
      ready
        .then(function (wasm) {
          return WebAssembly.instantiate(wasm, imports);
        })
        .then(function (output) {
          receiveInstance(output['instance'], output['module']);
        }, fail);
    } catch (e) {
      fail(e);
    }
    return {}; // exports arrive through receiveInstance
  };
}
