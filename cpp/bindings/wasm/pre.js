// --pre-js for mha_wasm.js: instantiate the inlined wasm without fetch().
//
// Emscripten 3.1.6's glue, even with -sSINGLE_FILE, first tries fetch("data:...base64") in a
// browser and only falls back to decoding in place when that fails. A page under
// `Content-Security-Policy: default-src 'self'` refuses the data: fetch (and logs a violation on
// every load), so the module decodes its own bytes (getBinary -> tryParseAsDataURI) and hands
// them to WebAssembly.instantiate, which 'wasm-unsafe-eval' allows. A caller that passes its own
// instantiateWasm keeps it. This runs inside the module factory, where getBinary and
// wasmBinaryFile are in scope when createWasm() calls the hook.
if (!Module['instantiateWasm']) {
  Module['instantiateWasm'] = function (imports, receiveInstance) {
    WebAssembly.instantiate(getBinary(wasmBinaryFile), imports).then(
      function (output) { receiveInstance(output['instance'], output['module']); },
      function (reason) { err('failed to instantiate the wasm core: ' + reason); abort(reason); });
    return {};  // exports arrive through receiveInstance
  };
}
